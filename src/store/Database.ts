import type { FileSystem, Path } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { clientLayer, type DatabaseTarget, dialectOfUrl } from "./Dialect.js"
import { ensureSchema } from "./Schema.js"
import { type StoreError, storeError } from "./StoreError.js"

/** A SQLite client for a file (created with its folder on first use) or `:memory:`. */
export const sqliteLayer = (filename: string): Layer.Layer<SqlClient.SqlClient, StoreError, FileSystem.FileSystem | Path.Path> =>
  clientLayer({ dialect: "sqlite", file: filename })

/** The database a `database` setting names (`file` is the SQLite file it resolves to inside the root). */
export const targetOf = (database: string, file: string): DatabaseTarget => {
  const dialect = dialectOfUrl(database)
  return dialect === "mysql" || dialect === "pg" ? { dialect, url: database } : { dialect: "sqlite", file }
}

/** A client for `target` with the framework schema in place. */
export const layerFor = (target: DatabaseTarget): Layer.Layer<SqlClient.SqlClient, StoreError, FileSystem.FileSystem | Path.Path> => {
  const schema = Layer.effectDiscard(ensureSchema.pipe(Effect.mapError(storeError("creating the framework tables"))))
  return Layer.provideMerge(schema, clientLayer(target))
}

/** The database of the `database` setting with the framework schema in place. */
export const layer: Layer.Layer<SqlClient.SqlClient, StoreError, HostConfig | FileSystem.FileSystem | Path.Path> = Layer
  .unwrapEffect(Effect.map(HostConfig, ({ config, paths }) => layerFor(targetOf(config.database, paths.databaseFile))))
