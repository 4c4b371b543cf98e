import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { execFile } from "node:child_process"
import { unifiedDiff } from "../domain/TextDiff.js"
import {
  expectedBlock,
  includeHint,
  pterodactylInclude,
  scanBlock,
  type WebServer,
  webServerSnippet,
  withBlock,
  withoutBlock
} from "./PanelFiles.js"
import {
  isPluginDataFile,
  navigationJson,
  type PelicanExtensionFacts,
  permissionsJson,
  pluginCodeFiles,
  pluginId,
  pluginJson,
  samePluginJson
} from "./pelican-plugin/templates.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// Installing Host into a real panel's folder (docs/panels.md, "Installing into Pterodactyl" / "Installing
// into Pelican"): detect the panel, plan every file change, show it as a diff, apply it, take it back out,
// and report whether it is still there (`host panel:status`, and `host serve`'s self-heal). These are the
// only writes Host makes outside its own root, and only the marked block or the plugin folder.

export type PanelKind = "pterodactyl" | "pelican"

export interface DetectedPanel {
  readonly kind: PanelKind
  readonly version: string
  readonly name: string
  readonly root: string
}

export type ChangeAction = "create" | "append" | "update" | "unchanged" | "remove"

export interface FileChange {
  readonly path: string
  readonly action: ChangeAction
  /** The file's text now (undefined: it does not exist). */
  readonly before: string | undefined
  /** The file's text after the change (undefined: removed). */
  readonly after: string | undefined
}

export interface ArtisanCommand {
  /** The command line, run in the panel's folder. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** How long Host waits for it before stopping it. */
  readonly timeoutSeconds: number
}

/**
 * How long `php artisan p:plugin:install` may take: Pelican's installPlugin first brings the panel's composer
 * packages in line (`composer remove` and `composer require`, 600 s each at most), then runs `yarn install`
 * (300 s) and `yarn build` (600 s), and only then enables the plugin; a minute on top for the rest. Waiting less
 * could stop it before it enables the plugin and leave it "not installed".
 */
export const pluginInstallTimeoutSeconds = 600 + 600 + 300 + 600 + 60

const artisan = (args: ReadonlyArray<string>, timeoutSeconds = 300): ArtisanCommand => ({
  command: `php ${["artisan", ...args].join(" ")}`,
  args: ["artisan", ...args],
  timeoutSeconds
})

/**
 * Clears Filament's cache of each panel's pages, resources and widgets: with it in place a panel registers
 * none of the pages a plugin adds (Pelican clears it on plugin install, not when a plugin's files change).
 */
export const filamentCacheClear = artisan(["filament:optimize-clear"])

export interface PanelPlan {
  readonly panel: DetectedPanel
  readonly changes: ReadonlyArray<FileChange>
  /** A folder removed whole after its files (uninstall of the Pelican plugin). */
  readonly removeFolder: string | undefined
  readonly commands: ReadonlyArray<ArtisanCommand>
}

/** What `host panel:status` and the self-heal see of Host's include in the panel. */
export interface IncludeState {
  readonly kind: "block" | "plugin"
  readonly path: string
  readonly state: "intact" | "absent" | "modified" | "tampered"
  readonly detail: string
}

export interface CommandRun {
  readonly command: string
  readonly ran: boolean
  readonly exitCode: number | null
  readonly output: string
}

/** No panel folder was named: neither `--panel-root` nor `panel.root` (HOST_PANEL_ROOT). */
export class PanelRootUnset extends Data.TaggedError("PanelRootUnset")<{}> {
  override get message() {
    return "no panel folder: pass --panel-root DIR, or set panel.root in config/host.yaml (or HOST_PANEL_ROOT)"
  }
}

export const lookedFor =
  "config/app.php, plus for Pterodactyl resources/views/layouts/scripts.blade.php with resources/scripts/ (or composer.json named pterodactyl/panel), " +
  "for Pelican app/Filament/ with filament/filament in composer.json (or composer.json named pelican-dev/panel)"

/** The folder is neither a Pterodactyl nor a Pelican panel; nothing was written. */
export class NotAPanel extends Data.TaggedError("NotAPanel")<{ readonly root: string; readonly reason: string }> {
  override get message() {
    return this.reason === "no such folder"
      ? `the panel folder ${this.root} does not exist (check --panel-root or panel.root)`
      : `${this.root} is not a Pterodactyl or Pelican panel folder (${this.reason}); looked for ${lookedFor}`
  }
}

/** Host's markers in the panel file are not one begin followed by one end; nothing was written. */
export class PanelMarkersTampered extends Data.TaggedError("PanelMarkersTampered")<{
  readonly file: string
  readonly line: number
  readonly reason: string
}> {
  override get message() {
    return `${this.file}:${this.line}: ${this.reason}; Host's block is not intact, so nothing was changed (fix or remove the host:begin/host:end lines by hand)`
  }
}

/** `plugins/host` exists but is not Host's plugin (its plugin.json names another id); it is left alone. */
export class NotHostPlugin extends Data.TaggedError("NotHostPlugin")<{ readonly folder: string; readonly reason: string }> {
  override get message() {
    return `${this.folder} is not Host's plugin (${this.reason}); it was left alone`
  }
}

/** Reading or writing a panel file failed. */
export class PanelFileFailed extends Data.TaggedError("PanelFileFailed")<{ readonly path: string; readonly reason: string }> {
  override get message() {
    return `${this.path}: ${this.reason}`
  }
}

export type PanelInstallError = PanelRootUnset | NotAPanel | PanelMarkersTampered | NotHostPlugin | PanelFileFailed

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** `.env`'s value for `key` (quotes removed), the way Laravel's dotenv reads a simple line. */
export const dotenvValue = (text: string, key: string): string | undefined => {
  const line = text.split(/\r?\n/).find((l) => new RegExp(`^\\s*(export\\s+)?${key}\\s*=`).test(l))
  if (line === undefined) return undefined
  const raw = line.slice(line.indexOf("=") + 1).trim()
  const quoted = /^(["'])(.*)\1$/.exec(raw)
  return quoted !== null ? quoted[2]! : raw.replace(/\s+#.*$/, "")
}

// ---- the panel's folder, as every step below reads and writes it ----------------------------------------

/** The file-system steps install, uninstall and status share, bound to one FileSystem and Path. */
interface PanelFolder {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly readIfExists: (file: string) => Effect.Effect<Option.Option<string>, PanelFileFailed>
  readonly isDirectory: (folder: string) => Effect.Effect<boolean>
}

const panelFolder = (fs: FileSystem.FileSystem, path: Path.Path): PanelFolder => ({
  fs,
  path,
  readIfExists: (file) =>
    fs.exists(file).pipe(
      Effect.flatMap((exists) => (exists ? Effect.map(fs.readFileString(file), Option.some) : Effect.succeed(Option.none<string>()))),
      Effect.mapError((error) => new PanelFileFailed({ path: file, reason: `cannot be read: ${error.message}` }))
    ),
  isDirectory: (folder) => fs.stat(folder).pipe(Effect.map((info) => info.type === "Directory"), Effect.orElseSucceed(() => false))
})

/** composer.json's package name and required packages; an unreadable file names and requires nothing. */
const composerFacts = (text: string) => {
  let composer: unknown = {}
  try {
    composer = text === "" ? {} : JSON.parse(text) as unknown
  } catch {
    composer = {}
  }
  const name = typeof composer === "object" && composer !== null && "name" in composer ? String(composer.name) : ""
  const requires = typeof composer === "object" && composer !== null && "require" in composer &&
      typeof composer.require === "object" && composer.require !== null
    ? Object.keys(composer.require)
    : []
  return { name, requires }
}

/** Which panel `root` holds (markers listed in docs/panels.md, "How Host recognises the panel"). */
const detect = Effect.fn("PanelInstall.detect")(function*({ fs, isDirectory, path, readIfExists }: PanelFolder, rootInput: string) {
  const root = path.resolve(rootInput)
  if (!(yield* isDirectory(root))) return yield* new NotAPanel({ root, reason: "no such folder" })
  const appConfig = yield* readIfExists(path.join(root, "config", "app.php"))
  if (Option.isNone(appConfig)) return yield* new NotAPanel({ root, reason: "config/app.php is missing" })
  const composer = composerFacts(Option.getOrElse(yield* readIfExists(path.join(root, "composer.json")), () => ""))
  const pelican = composer.name === "pelican-dev/panel" ||
    ((yield* isDirectory(path.join(root, "app", "Filament"))) && composer.requires.includes("filament/filament"))
  const pterodactyl = !pelican && (yield* fs.exists(path.join(root, pterodactylInclude)).pipe(Effect.orElseSucceed(() => false))) &&
    (composer.name === "pterodactyl/panel" || (yield* isDirectory(path.join(root, "resources", "scripts"))))
  if (!pelican && !pterodactyl) {
    return yield* new NotAPanel({ root, reason: "config/app.php is there, but neither panel's other markers are" })
  }
  const kind: PanelKind = pelican ? "pelican" : "pterodactyl"
  const version = /'version'\s*=>\s*'([^']*)'/.exec(appConfig.value)?.[1] ?? "unknown"
  const env = Option.getOrElse(yield* readIfExists(path.join(root, ".env")), () => "")
  const name = dotenvValue(env, "APP_NAME") ?? (pelican ? "Pelican" : "Pterodactyl")
  return { kind, version, name, root } satisfies DetectedPanel
})

// ---- planning install and uninstall -------------------------------------------------------------------

const change = (file: string, before: Option.Option<string>, after: string, same = (a: string, b: string) => a === b): FileChange => ({
  path: file,
  action: Option.isNone(before) ? "create" : same(before.value, after) ? "unchanged" : "update",
  before: Option.getOrUndefined(before),
  after: Option.isSome(before) && same(before.value, after) ? before.value : after
})

const pluginFolder = ({ path }: PanelFolder, panel: DetectedPanel) => path.join(panel.root, "plugins", pluginId)

/** A `plugins/host` that is someone else's plugin is never overwritten or removed. */
const checkPluginOwner = ({ path, readIfExists }: PanelFolder, folder: string) =>
  Effect.gen(function*() {
    const text = yield* readIfExists(path.join(folder, "plugin.json"))
    if (Option.isNone(text)) return
    const id = yield* Effect.try(() => (JSON.parse(text.value) as { readonly id?: unknown }).id).pipe(Effect.orElseSucceed(() => undefined))
    if (id !== pluginId) {
      return yield* new NotHostPlugin({ folder, reason: `plugin.json's id is ${JSON.stringify(id ?? null)}, not "${pluginId}"` })
    }
  })

interface PanelChangeOptions {
  readonly hostVersion: string
  /** The installed extensions' permissions and pages, for the Pelican plugin's data files. */
  readonly extensions: ReadonlyArray<PelicanExtensionFacts>
  /** The self-heal: a lost plugin folder comes back enabled (it runs no artisan command). */
  readonly healing?: boolean
}

/** Pterodactyl: the marked block in its layout file, added, restored or left as it is. */
const blockChange = Effect.fn("PanelInstall.blockChange")(function*(folder: PanelFolder, panel: DetectedPanel) {
  const file = folder.path.join(panel.root, pterodactylInclude)
  const before = yield* folder.readIfExists(file)
  const text = Option.getOrElse(before, () => "")
  const scan = scanBlock(text)
  if (scan._tag === "Tampered") return yield* new PanelMarkersTampered({ file, line: scan.line, reason: scan.reason })
  if (scan._tag === "Present") {
    if (scan.text === expectedBlock(scan.joined)) return { path: file, action: "unchanged", before: text, after: text } satisfies FileChange
    const restored = withBlock(withoutBlock(text, scan))
    return { path: file, action: "update", before: text, after: restored } satisfies FileChange
  }
  return { path: file, action: Option.isNone(before) ? "create" : "append", before: Option.getOrUndefined(before), after: withBlock(text) } satisfies FileChange
})

/** Pelican: every file of Host's plugin folder against what Host writes. */
const pluginChanges = Effect.fn("PanelInstall.pluginChanges")(function*(io: PanelFolder, panel: DetectedPanel, options: PanelChangeOptions) {
  const folder = pluginFolder(io, panel)
  yield* checkPluginOwner(io, folder)
  const files: ReadonlyArray<readonly [string, string, ((a: string, b: string) => boolean)?]> = [
    ["plugin.json", pluginJson(options.hostVersion, { enabled: options.healing === true }), samePluginJson],
    ...pluginCodeFiles().map(([parts, text]) => [io.path.join(...parts), text] as const),
    ["permissions.json", permissionsJson(options.extensions)],
    ["navigation.json", navigationJson(options.extensions)]
  ]
  return yield* Effect.forEach(files, ([relative, text, same]) => {
    const file = io.path.join(folder, relative)
    return Effect.map(io.readIfExists(file), (before) => change(file, before, text, same))
  })
})

/** The panel-side changes install makes (without the web-server snippet). */
const panelChanges = Effect.fn("PanelInstall.panelChanges")(function*(io: PanelFolder, panel: DetectedPanel, options: PanelChangeOptions) {
  return panel.kind === "pterodactyl" ? [yield* blockChange(io, panel)] : yield* pluginChanges(io, panel, options)
})

/**
 * What runs after the panel's files change. Pelican: `p:plugin:install` while the plugin is not installed (its
 * plugin.json is new or rewritten without Pelican's `meta`); once it is, the command refuses ("already installed")
 * and changed code only needs Filament's cache cleared.
 */
const artisanCommands = (panel: DetectedPanel, operation: "install" | "uninstall", changes: ReadonlyArray<FileChange> = []): ReadonlyArray<ArtisanCommand> => {
  if (panel.kind === "pterodactyl") return [artisan(["view:clear"])]
  if (operation === "uninstall") return [artisan(["optimize:clear"])]
  const pluginJsonChanged = changes.some((c) => c.path.endsWith("/plugin.json") && c.action !== "unchanged")
  if (pluginJsonChanged) return [artisan(["p:plugin:install", pluginId, "--no-interaction"], pluginInstallTimeoutSeconds)]
  return changes.some((c) => c.action !== "unchanged" && !isPluginDataFile(c.path)) ? [filamentCacheClear] : []
}

/** Everything `host panel:install` would write: the panel's block or plugin, and the snippet in Host's root. */
const planInstall = Effect.fn("PanelInstall.planInstall")(function*(io: PanelFolder, panel: DetectedPanel, options: {
  readonly hostVersion: string
  readonly extensions: ReadonlyArray<PelicanExtensionFacts>
  readonly snippet: { readonly kind: WebServer; readonly path: string; readonly upstream: string }
}) {
  const changes = yield* panelChanges(io, panel, options)
  const snippet = change(options.snippet.path, yield* io.readIfExists(options.snippet.path), webServerSnippet(options.snippet.kind, options.snippet.upstream))
  const touchesPanel = changes.some((c) => c.action !== "unchanged")
  return {
    panel,
    changes: [...changes, snippet],
    removeFolder: undefined,
    commands: touchesPanel ? artisanCommands(panel, "install", changes) : []
  } satisfies PanelPlan
})

/** Pterodactyl's uninstall: the marked block taken out of its layout file. */
const planBlockRemoval = Effect.fn("PanelInstall.planBlockRemoval")(function*(io: PanelFolder, panel: DetectedPanel) {
  const file = io.path.join(panel.root, pterodactylInclude)
  const before = yield* io.readIfExists(file)
  if (Option.isNone(before)) return { panel, changes: [], removeFolder: undefined, commands: [] } satisfies PanelPlan
  const scan = scanBlock(before.value)
  if (scan._tag === "Tampered") return yield* new PanelMarkersTampered({ file, line: scan.line, reason: scan.reason })
  if (scan._tag === "Absent") {
    return { panel, changes: [{ path: file, action: "unchanged", before: before.value, after: before.value }], removeFolder: undefined, commands: [] } satisfies PanelPlan
  }
  return {
    panel,
    changes: [{ path: file, action: "update", before: before.value, after: withoutBlock(before.value, scan) }],
    removeFolder: undefined,
    commands: artisanCommands(panel, "uninstall")
  } satisfies PanelPlan
})

/** Pelican's uninstall: every file of Host's plugin folder, then the folder. */
const planPluginRemoval = Effect.fn("PanelInstall.planPluginRemoval")(function*(io: PanelFolder, panel: DetectedPanel) {
  const folder = pluginFolder(io, panel)
  if (!(yield* io.isDirectory(folder))) return { panel, changes: [], removeFolder: undefined, commands: [] } satisfies PanelPlan
  yield* checkPluginOwner(io, folder)
  const files = yield* io.fs.readDirectory(folder, { recursive: true }).pipe(
    Effect.mapError((error) => new PanelFileFailed({ path: folder, reason: `cannot be listed: ${error.message}` }))
  )
  const changes = yield* Effect.forEach(files.sort(), (relative) => {
    const file = io.path.join(folder, relative)
    return Effect.flatMap(io.isDirectory(file), (directory) =>
      directory ? Effect.succeed([]) : Effect.map(io.readIfExists(file), (before) => [{
        path: file,
        action: "remove" as const,
        before: Option.getOrUndefined(before),
        after: undefined
      }]))
  })
  return { panel, changes: changes.flat(), removeFolder: folder, commands: artisanCommands(panel, "uninstall") } satisfies PanelPlan
})

/** Everything `host panel:uninstall` would take away: exactly what install added. */
const planUninstall = Effect.fn("PanelInstall.planUninstall")(function*(io: PanelFolder, panel: DetectedPanel) {
  return panel.kind === "pterodactyl" ? yield* planBlockRemoval(io, panel) : yield* planPluginRemoval(io, panel)
})

// ---- applying a plan ------------------------------------------------------------------------------------

/**
 * Writes one file through a temporary file in the same folder and a rename, so a reader never sees half
 * of it; an existing file keeps its mode and owner (the panel's files belong to its web server user).
 */
const writeFile = ({ fs }: PanelFolder, file: string, text: string) =>
  Effect.gen(function*() {
    const existing = yield* fs.stat(file).pipe(Effect.option)
    yield* writeFileAtomic(file, text, {
      beforeRename: (temporary) =>
        Option.isNone(existing) ? Effect.void : Effect.gen(function*() {
          yield* fs.chmod(temporary, existing.value.mode & 0o7777)
          const { gid, uid } = existing.value
          if (Option.isSome(uid) && Option.isSome(gid)) yield* fs.chown(temporary, uid.value, gid.value).pipe(Effect.ignore)
        })
    })
  }).pipe(Effect.mapError((error) => new PanelFileFailed({ path: file, reason: `cannot be written: ${error.message}` })))

/** Applies a plan's file changes (not its commands). */
const apply = Effect.fn("PanelInstall.apply")(function*(io: PanelFolder, plan: PanelPlan) {
  for (const c of plan.changes) {
    if (c.action === "unchanged") continue
    if (c.action === "remove") {
      yield* io.fs.remove(c.path).pipe(Effect.mapError((error) => new PanelFileFailed({ path: c.path, reason: `cannot be removed: ${error.message}` })))
    } else if (c.after !== undefined) yield* writeFile(io, c.path, c.after)
  }
  if (plan.removeFolder !== undefined) {
    const folder = plan.removeFolder
    yield* io.fs.remove(folder, { recursive: true }).pipe(
      Effect.mapError((error) => new PanelFileFailed({ path: folder, reason: `cannot be removed: ${error.message}` }))
    )
  }
})

// ---- whether it is still there ----------------------------------------------------------------------------

/** Pterodactyl: whether the marked block is in the layout file as install writes it. */
const inspectBlock = Effect.fn("PanelInstall.inspectBlock")(function*(io: PanelFolder, panel: DetectedPanel) {
  const file = io.path.join(panel.root, pterodactylInclude)
  const text = yield* io.readIfExists(file)
  if (Option.isNone(text)) return { kind: "block", path: file, state: "absent", detail: "the file is missing" } satisfies IncludeState
  const scan = scanBlock(text.value)
  if (scan._tag === "Tampered") return { kind: "block", path: file, state: "tampered", detail: `line ${scan.line}: ${scan.reason}` } satisfies IncludeState
  if (scan._tag === "Absent") return { kind: "block", path: file, state: "absent", detail: "no host:begin block" } satisfies IncludeState
  return scan.text === expectedBlock(scan.joined)
    ? { kind: "block", path: file, state: "intact", detail: "the block loads /host/boot.js" } satisfies IncludeState
    : { kind: "block", path: file, state: "modified", detail: "the block's content differs from what Host writes" } satisfies IncludeState
})

/** Pelican: whether Host's plugin folder holds the files install writes. */
const inspectPlugin = Effect.fn("PanelInstall.inspectPlugin")(function*(io: PanelFolder, panel: DetectedPanel, hostVersion: string) {
  const folder = pluginFolder(io, panel)
  if (!(yield* io.isDirectory(folder))) return { kind: "plugin", path: folder, state: "absent", detail: "no plugin folder" } satisfies IncludeState
  const outcome = yield* Effect.either(panelChanges(io, panel, { hostVersion, extensions: [] }))
  if (outcome._tag === "Left") {
    if (outcome.left._tag === "PanelFileFailed") return yield* outcome.left
    return { kind: "plugin", path: folder, state: "tampered", detail: outcome.left.message } satisfies IncludeState
  }
  const changes = outcome.right
  // The data files follow the installed extensions; only their presence is part of "intact".
  const differing = changes.filter((c) => c.action !== "unchanged" && !(isPluginDataFile(c.path) && c.action === "update"))
  return differing.length === 0
    ? { kind: "plugin", path: folder, state: "intact", detail: "plugin files as Host writes them" } satisfies IncludeState
    : {
      kind: "plugin",
      path: folder,
      state: "modified",
      detail: differing.map((c) => `${io.path.relative(folder, c.path)} ${c.action === "create" ? "missing" : "differs"}`).join(", ")
    } satisfies IncludeState
})

/** Whether Host's include is in the panel exactly as install writes it. */
const inspect = Effect.fn("PanelInstall.inspect")(function*(io: PanelFolder, panel: DetectedPanel, hostVersion: string) {
  return panel.kind === "pterodactyl" ? yield* inspectBlock(io, panel) : yield* inspectPlugin(io, panel, hostVersion)
})

// ---- running the panel's commands ---------------------------------------------------------------------------

/** `php` on the PATH of `env`, if any. */
const findPhp = ({ fs, path }: PanelFolder, env: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function*() {
    for (const folder of (env.PATH ?? "").split(":").filter((f) => f !== "")) {
      const candidate = path.join(folder, "php")
      const info = yield* fs.stat(candidate).pipe(Effect.option)
      if (Option.isSome(info) && info.value.type === "File" && (info.value.mode & 0o111) !== 0) return Option.some(candidate)
    }
    return Option.none<string>()
  })

/**
 * Runs the plan's artisan commands when `php` is on the PATH and the panel has `artisan`; otherwise
 * returns them as not run, for the operator to run.
 */
const runCommands = Effect.fn("PanelInstall.runCommands")(function*(io: PanelFolder, plan: PanelPlan, env: Readonly<Record<string, string | undefined>>) {
  const php = yield* findPhp(io, env)
  const artisan = yield* io.fs.exists(io.path.join(plan.panel.root, "artisan")).pipe(Effect.orElseSucceed(() => false))
  return yield* Effect.forEach(plan.commands, (command): Effect.Effect<CommandRun> => {
    if (Option.isNone(php) || !artisan) return Effect.succeed({ command: command.command, ran: false, exitCode: null, output: "" } satisfies CommandRun)
    // Asynchronous: the self-heal runs these inside `host serve`, which must keep answering meanwhile.
    return Effect.async<CommandRun>((resume) => {
      const child = execFile(php.value, [...command.args], {
        cwd: plan.panel.root,
        encoding: "utf8",
        timeout: command.timeoutSeconds * 1000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...env }
      }, (error, stdout, stderr) => {
        const timedOut = error !== null && error.killed === true && error.signal !== null
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : null
        const failure = error === null || typeof error.code === "number"
          ? ""
          : timedOut
          ? `stopped after ${command.timeoutSeconds} s`
          : errorText(error)
        resume(Effect.succeed({ command: command.command, ran: true, exitCode: status, output: `${stdout}${stderr}${failure}`.trim() }))
      })
      return Effect.sync(() => child.kill())
    })
  })
})

export class PanelInstall extends Effect.Service<PanelInstall>()("host/PanelInstall", {
  effect: Effect.gen(function*() {
    const io = panelFolder(yield* FileSystem.FileSystem, yield* Path.Path)
    return {
      detect: (root: string) => detect(io, root),
      planInstall: (panel: DetectedPanel, options: Parameters<typeof planInstall>[2]) => planInstall(io, panel, options),
      planUninstall: (panel: DetectedPanel) => planUninstall(io, panel),
      panelChanges: (panel: DetectedPanel, options: PanelChangeOptions) => panelChanges(io, panel, options),
      apply: (plan: PanelPlan) => apply(io, plan),
      inspect: (panel: DetectedPanel, hostVersion: string) => inspect(io, panel, hostVersion),
      runCommands: (plan: PanelPlan, env: Readonly<Record<string, string | undefined>>) => runCommands(io, plan, env),
      probe: (panelUrl: string) => probePanel(panelUrl)
    } as const
  })
}) {}

/** The plan as a unified diff of every file it writes or removes (for `--dry-run`). */
export const planDiff = (plan: PanelPlan): string =>
  plan.changes
    .filter((c) => c.action !== "unchanged")
    .map((c) =>
      unifiedDiff(c.before ?? "", c.after ?? "", {
        from: c.before === undefined ? "/dev/null" : `a${c.path}`,
        to: c.after === undefined ? "/dev/null" : `b${c.path}`
      })
    )
    .join("")

export { includeHint }

/** What `GET {panel.url}/api/client/account` without credentials says: a panel answers 401 with JSON. */
export interface PanelProbe {
  readonly url: string
  readonly answers: boolean
  readonly status: number | null
  readonly detail: string
}

/** Asks the panel, without credentials, whether it is there (at most 5 s). */
export const probePanel = (panelUrl: string): Effect.Effect<PanelProbe> =>
  Effect.tryPromise({
    try: async (signal) => {
      const url = `${panelUrl.replace(/\/+$/, "")}/api/client/account`
      const response = await fetch(url, {
        headers: { Accept: "application/json", "X-Requested-With": "XMLHttpRequest" },
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)])
      })
      const body = await response.text()
      const json = (() => {
        try {
          JSON.parse(body)
          return true
        } catch {
          return false
        }
      })()
      const answers = response.status === 401 && json
      return {
        url,
        answers,
        status: response.status,
        detail: answers ? "401 JSON without credentials, as a panel answers" : `HTTP ${response.status}${json ? "" : " (not JSON)"}: not what a panel answers`
      } satisfies PanelProbe
    },
    catch: (error) => new PanelFileFailed({ path: panelUrl, reason: error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error) })
  }).pipe(
    Effect.catchAll((error) =>
      Effect.succeed({
        url: `${panelUrl.replace(/\/+$/, "")}/api/client/account`,
        answers: false,
        status: null,
        detail: `no answer: ${error.reason}`
      } satisfies PanelProbe)
    )
  )
