import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
import { faultsLayer } from "../../config/Debug.js"
import { FrameworkUninstall } from "../../lifecycle/Uninstall.js"
import {
  databaseMissing,
  keptFolders,
  type UninstallInventory,
  type UninstallOutcome,
  type UninstallResult,
  uninstallFiles,
  uninstallFramework
} from "../../usecases/FrameworkUninstall.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { configLayer, progressLayer, operationsLayer } from "../Runtime.js"

// host framework:uninstall: the use cases of usecases/FrameworkUninstall.ts, rendered (docs/operations.md "Uninstall").

const actor = { type: "cli" } as const

const previewJson = (inventory: UninstallInventory, keepData: boolean) => ({
  keep_data: keepData,
  extensions: inventory.extensions,
  tables: inventory.tables.map((table) => ({ ...table, action: keepData ? "keep" : "drop" })),
  folders: inventory.folders.map((folder) => ({
    ...folder,
    action: !folder.exists ? "absent" : keepData && folder.path === "storage/host" ? "remove (the database file stays)" : "remove"
  })),
  kept: inventory.kept
})

const resultJson = (result: UninstallResult) => ({
  removed_extensions: result.removedExtensions,
  dropped_tables: result.droppedTables,
  removed_folders: result.removedFolders,
  left_tables: result.leftTables,
  resumed: result.resumed
})

const describePreview = (inventory: UninstallInventory, keepData: boolean): string => {
  const preview = previewJson(inventory, keepData)
  const lines = [`framework:uninstall${keepData ? " --keep-data" : ""} would remove (nothing has been changed):`, ""]
  lines.push(`Extensions (${inventory.extensions.length}):`)
  lines.push(...(inventory.extensions.length === 0
    ? ["  (none installed)"]
    : inventory.extensions.map((e) => `  ${e.id} ${e.version} (${e.enabled ? "enabled" : "disabled"})${keepData ? ": files only" : ""}`)))
  lines.push("", `Tables (${inventory.tables.length})${keepData ? ": all kept (--keep-data)" : ""}:`)
  lines.push(...(inventory.tables.length === 0
    ? ["  (no database)"]
    : formatTable(
      ["  TABLE", "ROWS", "OWNER", "ACTION"],
      preview.tables.map((table) => [
        `  ${table.name}`,
        String(table.rows),
        table.owner,
        table.action === "keep" ? "keep" : table.owner === "framework" ? "drop" : "drop (its extension's down migrations)"
      ])
    ).split("\n")))
  lines.push("", "Folders:")
  lines.push(...formatTable(["  FOLDER", "ACTION"], preview.folders.map((folder) => [`  ${folder.path}/`, folder.action])).split("\n"))
  lines.push("", `Kept: ${keptFolders.map((folder) => `${folder}/`).join(", ")}`)
  lines.push("Run again with --confirm to remove it.")
  return lines.join("\n")
}

const describeResult = (result: UninstallResult, keepData: boolean): string =>
  [
    result.resumed ? "Finished an interrupted uninstall." : undefined,
    keepData
      ? "Removed Host's files; every table was kept (--keep-data)."
      : `Removed ${result.removedExtensions.length} extension(s)${
        result.removedExtensions.length > 0 ? ` (${result.removedExtensions.join(", ")})` : ""
      } and dropped ${result.droppedTables.length} table(s).`,
    result.removedFolders.length > 0 ? `Deleted ${result.removedFolders.map((folder) => `${folder}/`).join(", ")}.` : undefined,
    result.leftTables.length > 0
      ? `warning: tables left by extensions whose down migrations did not drop them: ${result.leftTables.join(", ")}`
      : undefined,
    `Kept ${keptFolders.map((folder) => `${folder}/`).join(" and ")}.${
      keepData ? " Reinstall Host and run host reconcile to resume with the data." : ""
    }`
  ].filter((line) => line !== undefined).join("\n")

export const uninstallCommand = Command.make(
  "framework:uninstall",
  {
    confirm: Options.boolean("confirm").pipe(Options.withDescription("really remove (without it: show what would go and exit 1)")),
    keepData: Options.boolean("keep-data").pipe(
      Options.withDescription("keep every table (extensions' and the framework's); remove only files")
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print one JSON document")),
    lockTimeout: Options.integer("lock-timeout").pipe(
      Options.withDefault(0),
      Options.withDescription("seconds to wait for another operation's lock (default 0: fail at once)")
    )
  },
  ({ confirm, json, keepData, lockTimeout }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const show = (document: unknown, text: string) => (json ? printJson(document) : Console.log(text))
      const noDatabase = yield* databaseMissing.pipe(Effect.provide(configLayer(invocation)))
      // Without a database there is nothing to open (and opening would create one): files only.
      const outcome: UninstallOutcome = Option.isSome(noDatabase)
        ? yield* uninstallFiles({ confirm, keepData }).pipe(Effect.provide(Layer.merge(configLayer(invocation), faultsLayer(invocation.debug))))
        : yield* uninstallFramework({ confirm, keepData, actor, lockTimeout }).pipe(
          Effect.provide(FrameworkUninstall.Default.pipe(
            Layer.provideMerge(progressLayer),
            Layer.provideMerge(operationsLayer(invocation, { uninstalling: true }))
          ))
        )
      const { inventory, result } = outcome
      if (Option.isNone(result)) {
        yield* show({ confirmed: false, ...previewJson(inventory, keepData) }, describePreview(inventory, keepData))
        return yield* exitWith(1)
      }
      yield* show({ confirmed: true, ...previewJson(inventory, keepData), result: resultJson(result.value) }, describeResult(result.value, keepData))
    })
).pipe(Command.withDescription("Remove Host from the panel: every extension, the framework's tables and folders (--confirm; --keep-data)"))
