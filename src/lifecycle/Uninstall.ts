import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { type Context, Data, DateTime, Effect, Either, Option } from "effect"
import { Faults } from "../config/Debug.js"
import { HostConfig } from "../config/HostConfig.js"
import { type Actor, dependenciesOf } from "../domain/Installed.js"
import { dependencyOrder } from "../domain/Rules.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { storeError } from "../store/StoreError.js"
import { Lifecycle } from "./Lifecycle.js"
import { markerFile } from "./UninstallMarker.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// `host framework:uninstall` (docs/operations.md#uninstall): takes Host out of a panel. Every
// extension is removed by the ordinary remove operation (down migrations, files, journaled), then the
// framework's four tables are dropped and its folders deleted; config/ and desired-state/ stay.
// `keepData` keeps every table and removes only files, so a reinstall plus `reconcile` resumes.
//
// The run writes `storage/host/uninstall.json` first. Removing a framework cannot be rolled back, so
// a run cut short (kill -9) is finished, not undone: until the marker is gone every other command
// refuses with UninstallInterrupted, and running `framework:uninstall --confirm` again completes it.

/** The framework's own tables (docs/operations.md#uninstall). */
export const frameworkTables = ["host_extensions", "host_migrations", "host_settings", "host_activity_logs"] as const

export interface TableInventory {
  readonly name: string
  readonly rows: number
  /** `framework`: one of the four; `extension`: made by an extension's migrations. */
  readonly owner: "framework" | "extension"
}

export interface FolderInventory {
  /** Relative to the panel root. */
  readonly path: string
  readonly exists: boolean
}

export interface UninstallInventory {
  readonly extensions: ReadonlyArray<{ readonly id: string; readonly version: string; readonly enabled: boolean }>
  readonly tables: ReadonlyArray<TableInventory>
  readonly folders: ReadonlyArray<FolderInventory>
  /** Folders that always stay. */
  readonly kept: ReadonlyArray<string>
}

export interface UninstallOptions {
  readonly actor: Actor
  readonly keepData: boolean
  readonly lockTimeout?: number
}

export interface UninstallResult {
  readonly removedExtensions: ReadonlyArray<string>
  readonly droppedTables: ReadonlyArray<string>
  readonly removedFolders: ReadonlyArray<string>
  /** Tables an extension's down migrations did not drop (left in place, named here). */
  readonly leftTables: ReadonlyArray<string>
  /** Whether this run finished one that was interrupted. */
  readonly resumed: boolean
}

/** Removing an extension failed: the uninstall stopped there (what was removed is named). */
export class UninstallFailed extends Data.TaggedError("UninstallFailed")<{
  readonly extensionId: string
  readonly detail: string
  readonly removed: ReadonlyArray<string>
}> {
  override get message() {
    const done = this.removed.length === 0 ? "no extension was removed" : `already removed: ${this.removed.join(", ")}`
    return `removing ${this.extensionId} failed: ${this.detail}; the uninstall stopped (${done}; the tables and folders are still there)` +
      "\nhint: fix the cause and run host framework:uninstall --confirm again, or use --keep-data to remove only files"
  }
}

/** A step the crash suites may end the process at (docs/operations.md, "The debug variable"). */
const crashPoint = (step: string) => Effect.flatMap(Faults, (faults) => faults.reached(step))

/** The folders an uninstall deletes (those that exist), relative to the root. */
export const folderInventory = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const folders = [paths.extensions, paths.publicAssets, paths.storage]
  return yield* Effect.forEach(folders, (folder) =>
    Effect.map(fs.exists(folder).pipe(Effect.orElseSucceed(() => false)), (exists): FolderInventory => ({
      path: path.relative(paths.root, folder),
      exists
    })))
})

export const keptFolders = ["config", "desired-state"] as const

/** Deletes a folder; `keep` names files directly inside it that stay. Whether it existed. */
const removeFolder = (folder: string, keep: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (!(yield* fs.exists(folder))) return false
    if (keep.length === 0) {
      yield* fs.remove(folder, { recursive: true })
    } else {
      for (const name of yield* fs.readDirectory(folder)) {
        if (!keep.includes(name)) yield* fs.remove(path.join(folder, name), { recursive: true })
      }
    }
    return true
  })

/** Removes `folder`'s parent when it is inside the root and empty (`host/` of `host/extensions`). */
const removeEmptyParent = (folder: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const parent = path.dirname(folder)
    if (parent === paths.root || !parent.startsWith(`${paths.root}${path.sep}`)) return
    const left = yield* fs.readDirectory(parent).pipe(Effect.orElseSucceed(() => ["?"]))
    if (left.length === 0) yield* fs.remove(parent, { recursive: true })
  })

/**
 * Deletes the extensions folder, `public/host` and `storage/host` (the marker with it, last); with
 * `keepData` a database file inside `storage/host` stays. Returns the folders removed, relative.
 */
export const removeFrameworkFolders = (keepData: boolean) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const relative = (folder: string) => path.relative(paths.root, folder)
    const folders: Array<string> = []
    if (yield* removeFolder(paths.extensions)) folders.push(relative(paths.extensions))
    yield* removeEmptyParent(paths.extensions)
    if (yield* removeFolder(paths.publicAssets)) folders.push(relative(paths.publicAssets))
    yield* crashPoint("uninstall-folders")
    const database = paths.databaseFile
    const base = path.basename(database)
    const keep = keepData && path.dirname(database) === paths.storage
      ? [base, `${base}-wal`, `${base}-shm`, `${base}-journal`]
      : []
    if (yield* removeFolder(paths.storage, keep)) folders.push(relative(paths.storage))
    yield* fs.remove(yield* markerFile, { force: true })
    if (keep.length === 0) yield* removeEmptyParent(paths.storage)
    return folders
  })

/** What the uninstall steps share: the database, the lifecycle, the records and the platform. */
interface Uninstaller {
  readonly fs: FileSystem.FileSystem
  readonly sql: SqlClient.SqlClient
  readonly lifecycle: Lifecycle
  readonly extensions: ExtensionsRepo
  readonly platform: Context.Context<FileSystem.FileSystem | Path.Path | HostConfig>
}

const tableNames = ({ sql }: Uninstaller) =>
  sql.onDialectOrElse({
    sqlite: () => sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    pg: () => sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`,
    mysql: () => sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name`,
    orElse: () => sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
  }).pipe(Effect.map((rows) => rows.map((row) => row.name)))

/**
 * Host's tables: the four, and the tables of its extensions. A SQLite file is Host's own, so all of
 * its tables; a shared MySQL/PostgreSQL database also holds the panel's, so only `ext_…` and
 * `<vendor>_…` names of installed vendors count as extension tables.
 */
const hostTables = (self: Uninstaller, vendors: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { sql } = self
    const names = yield* tableNames(self)
    const ownAll = sql.onDialectOrElse({ sqlite: () => true, orElse: () => false })
    const framework = new Set<string>(frameworkTables)
    const isExtensionTable = (name: string) =>
      ownAll || name.startsWith("ext_") || vendors.some((vendor) => name.startsWith(`${vendor.replace(/-/g, "_")}_`))
    const chosen = names.filter((name) => framework.has(name) || isExtensionTable(name))
    return yield* Effect.forEach(chosen, (name) =>
      Effect.map(sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql(name)}`, ([row]): TableInventory => ({
        name,
        rows: Number(row?.n ?? 0),
        owner: framework.has(name) ? "framework" : "extension"
      })))
  }).pipe(Effect.mapError(storeError("listing the framework's tables")))

const inventory = (self: Uninstaller) =>
  Effect.gen(function*() {
    const installed = yield* self.extensions.list
    const tables = yield* hostTables(self, [...new Set(installed.map((record) => record.extensionId.split("/")[0]!))])
    return {
      extensions: installed.map((record) => ({ id: record.extensionId, version: record.version, enabled: record.enabled })),
      tables,
      folders: yield* folderInventory.pipe(Effect.provide(self.platform)),
      kept: keptFolders
    } satisfies UninstallInventory
  })

const writeMarker = ({ platform }: Uninstaller, keepData: boolean) =>
  Effect.gen(function*() {
    const marker = yield* markerFile
    yield* writeFileAtomic(marker, JSON.stringify({ startedAt: DateTime.formatIso(yield* DateTime.now), keepData }))
  }).pipe(Effect.provide(platform))

/**
 * Removes every extension, dependents before what they depend on; each removal is one journaled
 * operation. The first failure stops the run and takes the marker away. Returns the ids removed.
 */
const removeExtensions = ({ extensions, fs, lifecycle }: Uninstaller, actor: Actor, marker: string) =>
  Effect.gen(function*() {
    const removed: Array<string> = []
    const installed = yield* extensions.list
    const dependencies = new Map(installed.map((record) => [record.extensionId, Object.keys(dependenciesOf(record))]))
    const ordered = dependencyOrder([...dependencies.keys()].sort(), (id) => dependencies.get(id) ?? [])
    for (const id of [...ordered.order, ...ordered.cycle].reverse()) {
      const outcome = yield* Effect.either(lifecycle.remove(id, { actor, force: true }))
      if (Either.isLeft(outcome)) {
        // Not a crash: nothing is half done, so the marker goes and the panel works as before.
        yield* fs.remove(marker, { force: true })
        return yield* new UninstallFailed({ extensionId: id, detail: outcome.left.message, removed })
      }
      removed.push(id)
      yield* crashPoint("uninstall-removed-one")
    }
    return removed
  })

/** Drops the four framework tables; names the other tables the extensions' down migrations left. */
const dropFrameworkTables = (self: Uninstaller) =>
  Effect.gen(function*() {
    const { sql } = self
    const remaining = yield* hostTables(self, [])
    const framework = new Set<string>(frameworkTables)
    const left = remaining.filter((table) => !framework.has(table.name)).map((table) => table.name)
    const dropped: Array<string> = []
    for (const table of frameworkTables) {
      yield* sql`DROP TABLE IF EXISTS ${sql(table)}`.pipe(Effect.mapError(storeError(`dropping ${table}`)))
      dropped.push(table)
    }
    yield* crashPoint("uninstall-tables")
    return { dropped, left }
  })

const run = (self: Uninstaller, options: UninstallOptions) =>
  self.lifecycle.withLock(
    "framework:uninstall",
    { actor: options.actor, lockTimeout: options.lockTimeout ?? 0 },
    Effect.gen(function*() {
      const marker = yield* Effect.provide(markerFile, self.platform)
      const resumed = yield* self.fs.exists(marker)
      yield* writeMarker(self, options.keepData)
      let removed: ReadonlyArray<string> = []
      let dropped: ReadonlyArray<string> = []
      let left: ReadonlyArray<string> = []
      if (!options.keepData) {
        removed = yield* removeExtensions(self, options.actor, marker)
        const tables = yield* dropFrameworkTables(self)
        dropped = tables.dropped
        left = tables.left
      }
      const folders = yield* removeFrameworkFolders(options.keepData).pipe(Effect.provide(self.platform))
      return {
        removedExtensions: removed,
        droppedTables: dropped,
        removedFolders: folders,
        leftTables: left,
        resumed
      } satisfies UninstallResult
    })
  )

export class FrameworkUninstall extends Effect.Service<FrameworkUninstall>()("host/FrameworkUninstall", {
  effect: Effect.gen(function*() {
    const self: Uninstaller = {
      fs: yield* FileSystem.FileSystem,
      sql: yield* SqlClient.SqlClient,
      lifecycle: yield* Lifecycle,
      extensions: yield* ExtensionsRepo,
      platform: yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig>()
    }
    return {
      /** What an uninstall would remove; changes nothing. */
      inventory: inventory(self),
      /** Removes the framework from the panel (under the operation lock). */
      run: (options: UninstallOptions) => run(self, options)
    } as const
  })
}) {}

/** The database file of a SQLite configuration, when it does not exist yet (nothing to open). */
export const missingDatabase = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const { paths } = yield* HostConfig
  if (paths.databaseFile === ":memory:") return Option.none<string>()
  const exists = yield* fs.exists(paths.databaseFile).pipe(Effect.orElseSucceed(() => true))
  return exists ? Option.none<string>() : Option.some(paths.databaseFile)
})
