import { Effect, Option } from "effect"
import {
  folderInventory,
  FrameworkUninstall,
  keptFolders,
  missingDatabase,
  removeFrameworkFolders,
  type UninstallInventory,
  type UninstallResult
} from "../lifecycle/Uninstall.js"

// `host framework:uninstall` (docs/operations.md "Uninstall"): what would go, and removing it. Without a
// database only files are left to remove, and opening one would create it; so the front door asks
// `databaseMissing` first and provides the database only to `uninstallFramework`.

export { keptFolders, type UninstallInventory, type UninstallResult } from "../lifecycle/Uninstall.js"

/** What the uninstall found and, when it was confirmed, what it did. */
export interface UninstallOutcome {
  readonly inventory: UninstallInventory
  readonly result: Option.Option<UninstallResult>
}

/** The database file this root would open, when it does not exist (none for an in-memory or server database). */
export const databaseMissing = missingDatabase

/** The uninstall of a root without a database: its folders only. */
export const uninstallFiles = (request: { readonly confirm: boolean; readonly keepData: boolean }) =>
  Effect.gen(function*() {
    const inventory: UninstallInventory = { extensions: [], tables: [], folders: yield* folderInventory, kept: keptFolders }
    if (!request.confirm) return { inventory, result: Option.none() } satisfies UninstallOutcome
    const folders = yield* removeFrameworkFolders(request.keepData)
    const result: UninstallResult = { removedExtensions: [], droppedTables: [], removedFolders: folders, leftTables: [], resumed: false }
    return { inventory, result: Option.some(result) } satisfies UninstallOutcome
  })

/** The uninstall with the database: every extension removed (or kept, `keepData`), the framework's tables and folders. */
export const uninstallFramework = (request: {
  readonly confirm: boolean
  readonly keepData: boolean
  readonly actor: { readonly type: "cli" }
  readonly lockTimeout: number
}) =>
  Effect.gen(function*() {
    const uninstall = yield* FrameworkUninstall
    const inventory = yield* uninstall.inventory
    if (!request.confirm) return { inventory, result: Option.none() } satisfies UninstallOutcome
    const result = yield* uninstall.run({ actor: request.actor, keepData: request.keepData, lockTimeout: request.lockTimeout })
    return { inventory, result: Option.some(result) } satisfies UninstallOutcome
  })
