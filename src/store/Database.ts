import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, Layer } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { ensureSchema } from "./Schema.js"
import { StoreError, storeError } from "./StoreError.js"

/** A SQLite client for a file (created with its folder on first use) or `:memory:`. */
export const sqliteLayer = (filename: string): Layer.Layer<SqlClient.SqlClient, StoreError, FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      if (filename !== ":memory:") {
        const fs = yield* FileSystem.FileSystem
        const path = yield* Path.Path
        yield* fs.makeDirectory(path.dirname(filename), { recursive: true }).pipe(
          Effect.mapError(storeError(`creating the folder of ${filename}`))
        )
      }
      // better-sqlite3 throws when the file cannot be opened, which the client layer lets through as a
      // defect: it is the database being unavailable, so it fails as a StoreError like any other.
      return SqliteClient.layer({ filename }).pipe(
        Layer.catchAllCause((cause) => Layer.fail(storeError(`opening ${filename}`)(Cause.squash(cause))))
      )
    })
  )

/** The database of the `database` setting with the framework schema in place. */
export const layer: Layer.Layer<SqlClient.SqlClient, StoreError, HostConfig | FileSystem.FileSystem | Path.Path> = Layer
  .unwrapEffect(
    Effect.map(HostConfig, ({ paths }) => {
      const client = sqliteLayer(paths.databaseFile)
      const schema = Layer.effectDiscard(ensureSchema.pipe(Effect.mapError(storeError("creating the framework tables"))))
      return Layer.provideMerge(schema, client)
    })
  )
