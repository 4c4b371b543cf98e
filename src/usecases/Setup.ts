import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option, Schema } from "effect"
import { accessSync, constants, lchownSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createServer } from "node:net"
import { parseDocument } from "yaml"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import type { DoctorReport } from "../domain/Doctor.js"
import {
  databaseUnits,
  findSites,
  includeLine,
  isHttpUrl,
  publicOrigin,
  scanInclude,
  SetupRecord,
  type SetupStep,
  type SiteKind,
  systemdUnit,
  withInclude,
  withoutInclude,
  withSetupKeys
} from "../domain/Setup.js"
import { unifiedDiff } from "../domain/TextDiff.js"
import { dotenvValue, includeHint, PanelInstall, type PanelPlan, planDiff } from "../panel/PanelInstall.js"
import { etcRoot, findSite, type FoundSite, installedWebServers, webServerCommands } from "../panel/WebServerSite.js"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { commandLine, type ProgramRun, runProgram } from "../system/Programs.js"
import { resolvePanelRoot } from "./PanelReport.js"

// `host setup` and `host setup --remove` (DESIGN §22, docs/panels.md "Five minutes"): from a panel server
// to Host running in it in six steps (panel, config, include, web server, service, check), each reported
// as it runs, and back again. Setup keeps a record of what it changed under Host's root
// (storage/host/setup.json) so that --remove undoes exactly that, in reverse, leaving every file outside
// Host's root byte-identical to before. `--dry-run` reads only: no file, no database, no command.

type Env = Readonly<Record<string, string | undefined>>
type Extensions = Parameters<PanelInstall["planInstall"]>[1]["extensions"]

export interface SetupOptions {
  readonly panelRoot: Option.Option<string>
  readonly panelUrl: Option.Option<string>
  readonly webServer: Option.Option<SiteKind | "none">
  readonly site: Option.Option<string>
  readonly service: Option.Option<"systemd" | "none">
  readonly user: Option.Option<string>
  readonly port: Option.Option<number>
  readonly dryRun: boolean
  readonly env: Env
  /** The node binary and Host's `bin/host.js`, for the unit's ExecStart. */
  readonly node: string
  readonly bin: string
  /** This command as a person re-runs it as root (`sudo host --root … setup …`). */
  readonly asRoot: string
  /** The installed extensions' facts for the Pelican plugin (read only when the panel is Pelican). */
  readonly extensions: Effect.Effect<Extensions, unknown>
  /** `host doctor`'s checks, run after Host answers (step 6). */
  readonly doctor: Effect.Effect<DoctorReport, unknown>
  /** Called as each step ends, with the diff of what it changes (dry run) and the lines to show. */
  readonly onStep: (step: SetupStep, detail: { readonly diff: string; readonly lines: ReadonlyArray<string> }) => Effect.Effect<void>
  /** Said while a step waits (the check, for Host to answer), so a wait of seconds is not silent. */
  readonly onWait?: (message: string) => Effect.Effect<void>
}

/** A step failed: rolled back, named with its file and a fix; the steps before it stand. */
export class SetupStepFailed extends Data.TaggedError("SetupStepFailed")<{
  readonly step: string
  readonly path: string | undefined
  readonly reason: string
  readonly fix: string
  readonly steps: ReadonlyArray<SetupStep>
}> {
  override get message() {
    return `setup step "${this.step}" failed${this.path === undefined ? "" : ` (${this.path})`}: ${this.reason}${this.fix === "" ? "" : `; ${this.fix}`}`
  }
}

/** Setup's record under Host's root cannot be read. */
export class SetupRecordUnreadable extends Data.TaggedError("SetupRecordUnreadable")<{ readonly path: string; readonly reason: string }> {
  override get message() {
    return `${this.path}: ${this.reason} (setup's record of what it changed; fix or remove it by hand)`
  }
}

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

// ---- small facts about the machine ---------------------------------------------------------------------------

/** Why `file` cannot be written (the folder, for the rename of an atomic write, and the file itself), if so. */
const unwritable = (file: string, path: Path.Path): string | undefined => {
  let folder = path.dirname(file)
  while (true) {
    try {
      statSync(folder)
      break
    } catch {
      const parent = path.dirname(folder)
      if (parent === folder) break
      folder = parent
    }
  }
  for (const target of [folder, file]) {
    try {
      accessSync(target, constants.W_OK)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT" && target === file) continue
      return code === "EACCES" || code === "EPERM" || code === "EROFS" ? `${target} is not writable by this user (${code})` : errorText(error)
    }
  }
  return undefined
}

type PortState = "free" | "host" | "other"

/** Whether 127.0.0.1:port is free, held by a Host (it answers /host/ready as Host does), or by something else. */
const portState = (port: number): Effect.Effect<PortState> =>
  Effect.async<boolean>((resume) => {
    const server = createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen(port, "127.0.0.1", () => server.close(() => resume(Effect.succeed(true))))
  }).pipe(
    Effect.flatMap((free) =>
      free ? Effect.succeed<PortState>("free") : Effect.tryPromise(async () => {
        const response = await fetch(`http://127.0.0.1:${port}/host/ready`, { signal: AbortSignal.timeout(2_000) })
        const body = (await response.json()) as { readonly generation?: unknown; readonly error?: { readonly code?: unknown } }
        return typeof body.generation === "number" || body.error?.code === "NotReady" ? "host" as const : "other" as const
      }).pipe(Effect.orElseSucceed((): PortState => "other"))
    )
  )

const passwd = (): ReadonlyArray<ReadonlyArray<string>> => {
  try {
    return readFileSync("/etc/passwd", "utf8").split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) => l.split(":"))
  } catch {
    return []
  }
}

/** The user owning `folder`, by name from /etc/passwd when it has one, else the numeric id. */
const ownerOf = (folder: string): string => {
  const uid = String(statSync(folder).uid)
  return passwd().find((fields) => fields[2] === uid)?.[0] ?? uid
}

/** A user's ids, by name or number (undefined: no such user on this machine). */
const userIds = (user: string): { readonly uid: number; readonly gid: number } | undefined => {
  const entry = passwd().find((fields) => fields[0] === user || (/^\d+$/.test(user) && fields[2] === user))
  if (entry !== undefined) return { uid: Number(entry[2]), gid: Number(entry[3]) }
  return /^\d+$/.test(user) ? { uid: Number(user), gid: Number(user) } : undefined
}

/**
 * Host's storage handed to the service's user: setup runs as root and writes there (the snippet, its
 * record, the database the check opens), and `host serve` runs as that user and writes there too.
 */
const handOver = (folder: string, ids: { readonly uid: number; readonly gid: number } | undefined) =>
  Effect.sync(() => {
    if (ids === undefined || process.getuid?.() !== 0) return
    const walk = (path: string) => {
      let info
      try {
        info = lstatSync(path)
      } catch {
        return
      }
      if (info.uid !== ids.uid || info.gid !== ids.gid) lchownSync(path, ids.uid, ids.gid)
      if (info.isDirectory()) for (const name of readdirSync(path)) walk(`${path}/${name}`)
    }
    walk(folder)
  })

const systemdRunning = (fs: FileSystem.FileSystem) => fs.exists("/run/systemd/system").pipe(Effect.orElseSucceed(() => false))

const diffOf = (file: string, before: string | undefined, after: string | undefined) =>
  unifiedDiff(before ?? "", after ?? "", { from: before === undefined ? "/dev/null" : `a${file}`, to: after === undefined ? "/dev/null" : `b${file}` })

const recordPath = (storage: string, path: Path.Path) => path.join(storage, "setup.json")

// ---- the use case ----------------------------------------------------------------------------------------------------

const setupContext = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const install = yield* PanelInstall
  const recordFile = recordPath(paths.storage, path)
  const readIfExists = (file: string) => Effect.map(Effect.option(fs.readFileString(file)), Option.getOrUndefined)
  const loadRecord = Effect.gen(function*() {
    const text = yield* readIfExists(recordFile)
    if (text === undefined) return undefined
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => new SetupRecordUnreadable({ path: recordFile, reason: errorText(e) }) })
    return yield* Schema.decodeUnknown(SetupRecord)(json).pipe(Effect.mapError((e) => new SetupRecordUnreadable({ path: recordFile, reason: e.message })))
  })
  const saveRecord = (record: SetupRecord) => writeFileAtomic(recordFile, `${JSON.stringify(record, null, 2)}\n`).pipe(Effect.orDie)
  /** Writes a file keeping an existing file's mode and owner (the panel's and the web server's files are theirs). */
  const writeKeeping = (file: string, text: string, mode = 0o644) =>
    Effect.gen(function*() {
      const existing = yield* fs.stat(file).pipe(Effect.option)
      yield* writeFileAtomic(file, text, {
        ...(Option.isNone(existing) ? { mode } : {}),
        beforeRename: (temporary) =>
          Option.isNone(existing) ? fs.chmod(temporary, mode) : Effect.gen(function*() {
            yield* fs.chmod(temporary, existing.value.mode & 0o7777)
            const { gid, uid } = existing.value
            if (Option.isSome(uid) && Option.isSome(gid)) yield* fs.chown(temporary, uid.value, gid.value).pipe(Effect.ignore)
          })
      })
    })
  return { fs, path, config, paths, install, recordFile, readIfExists, loadRecord, saveRecord, writeKeeping }
})

/** Applies a panel plan; on failure, puts back what it had already changed. */
const applyOrRestore = (install: PanelInstall, plan: PanelPlan) =>
  install.apply(plan).pipe(
    Effect.tapError(() =>
      install.apply({
        ...plan,
        changes: plan.changes.filter((c) => c.action !== "unchanged").map((c) =>
          c.before === undefined
            ? { ...c, action: "remove" as const, after: undefined }
            : { ...c, action: "update" as const, after: c.before }
        ).reverse(),
        commands: []
      }).pipe(Effect.ignore)
    )
  )

export const runSetup = (options: SetupOptions) =>
  Effect.gen(function*() {
    const ctx = yield* setupContext
    const { config, fs, install, path, paths } = ctx
    const steps: Array<SetupStep> = []
    const emit = (step: SetupStep, diff = "", lines: ReadonlyArray<string> = []) =>
      Effect.suspend(() => {
        steps.push(step)
        return options.onStep(step, { diff, lines })
      })
    const failStep = (id: SetupStep["id"], file: string | undefined, reason: string, fix: string, command?: string) =>
      Effect.gen(function*() {
        yield* emit({ id, action: "failed", ...(file === undefined ? {} : { path: file }), ...(command === undefined ? {} : { command }), output: `${reason}${fix === "" ? "" : `; ${fix}`}` })
        return yield* new SetupStepFailed({ step: id, path: file, reason, fix, steps })
      })
    const needsRoot = (id: SetupStep["id"], file: string) =>
      Effect.gen(function*() {
        const why = unwritable(file, path)
        if (why !== undefined) return yield* failStep(id, file, `cannot write ${file}: ${why}`, `run it as root: ${options.asRoot}`)
      })
    const dryRun = options.dryRun
    const previous = yield* ctx.loadRecord
    let record: SetupRecord | undefined = previous
    const remember = (change: (record: SetupRecord) => SetupRecord) =>
      Effect.gen(function*() {
        record = change(record ?? { version: 1, panel_root: panelRootPath })
        yield* ctx.saveRecord(record)
      })

    // ---- 1. panel ----
    const panelRootPath = yield* resolvePanelRoot(options.panelRoot).pipe(
      Effect.catchAll((error) => failStep("panel", undefined, error.message, ""))
    )
    const panel = yield* install.detect(panelRootPath).pipe(Effect.catchAll((error) => failStep("panel", panelRootPath, error.message, "pass the panel's install folder with --panel-root DIR")))
    const envFile = path.join(panel.root, ".env")
    const appUrl = dotenvValue((yield* ctx.readIfExists(envFile)) ?? "", "APP_URL")
    const origin = publicOrigin(appUrl)
    if (Option.isSome(options.panelUrl) && !isHttpUrl(options.panelUrl.value)) {
      return yield* failStep("panel", undefined, `--panel-url ${options.panelUrl.value} is not an http(s) URL`, "give how Host reaches the panel, e.g. --panel-url http://127.0.0.1")
    }
    if (origin._tag === "Bad" && Option.isNone(options.panelUrl)) {
      return yield* failStep(
        "panel",
        envFile,
        `${envFile} ${origin.reason}: APP_URL is the panel's public address, which Host needs`,
        "set APP_URL in the panel's .env (e.g. APP_URL=https://panel.example.com), or pass --panel-url URL"
      )
    }
    const fallback = publicOrigin(Option.getOrElse(options.panelUrl, () => ""))
    const baseUrl = origin._tag === "Ok" ? origin.url : fallback._tag === "Ok" ? fallback.url : ""
    const panelUrl = Option.isSome(options.panelUrl) ? options.panelUrl.value.replace(/\/+$/, "") : baseUrl
    const adminUrl = `${baseUrl}/admin/host/`
    yield* emit({
      id: "panel",
      action: "unchanged",
      path: panel.root,
      output: `${panel.kind === "pterodactyl" ? "Pterodactyl" : "Pelican"} ${panel.version} ("${panel.name}"); public address ${baseUrl}${origin._tag === "Ok" ? " (APP_URL)" : " (--panel-url)"}`
    })

    // ---- 2. config ----
    const configBefore = yield* ctx.readIfExists(paths.configFile)
    const configuredPort = (() => {
      const value = configBefore === undefined ? undefined : parseDocument(configBefore).getIn(["server", "port"])
      return typeof value === "number" && Number.isInteger(value) ? value : undefined
    })()
    const port = yield* Effect.gen(function*() {
      if (Option.isSome(options.port)) {
        const state = yield* portState(options.port.value)
        if (state === "other") {
          return yield* failStep("config", paths.configFile, `port ${options.port.value} on 127.0.0.1 is taken by another program (not Host)`, "pick a free port with --port N, or leave --port out for the next free one")
        }
        return options.port.value
      }
      const start = configuredPort ?? 8080
      for (let candidate = start; candidate < start + 100 && candidate < 65536; candidate++) {
        if ((yield* portState(candidate)) !== "other") return candidate
      }
      return yield* failStep("config", paths.configFile, `ports ${start}-${start + 99} on 127.0.0.1 are all taken`, "pick a free port with --port N")
    })
    const configAfter = yield* Effect.try(() =>
      withSetupKeys(configBefore, { driver: panel.kind, panelUrl, panelRoot: panel.root, baseUrl, port })
    ).pipe(Effect.catchAll((error) => failStep("config", paths.configFile, `cannot be edited: ${errorText(error.error)}`, "fix the YAML of config/host.yaml")))
    const configAction = configBefore === undefined ? "create" : configAfter === configBefore ? "unchanged" : "update"
    if (!dryRun && configAction !== "unchanged") {
      yield* needsRoot("config", paths.configFile)
      yield* writeFileAtomic(paths.configFile, configAfter).pipe(
        Effect.catchAll((error) => failStep("config", paths.configFile, `cannot be written: ${error.message}`, `run it as the owner of Host's root, or as root: ${options.asRoot}`))
      )
      if (record?.config === undefined) yield* remember((r) => ({ ...r, config: { path: paths.configFile, before: configBefore ?? null } }))
    }
    yield* emit(
      { id: "config", action: configAction, path: paths.configFile, output: `panel.driver ${panel.kind}, panel.url ${panelUrl}, base_url ${baseUrl}, server 127.0.0.1:${port}` },
      dryRun && configAction !== "unchanged" ? diffOf(paths.configFile, configBefore, configAfter) : ""
    )

    // ---- which web server (read only; step 4 writes) ----
    const wanted = Option.getOrUndefined(options.webServer)
    const siteOutcome = wanted === "none"
      ? undefined
      : yield* Effect.either(findSite(wanted, path.join(panel.root, "public"), options.env, Option.getOrUndefined(options.site)))
    const kind: SiteKind = siteOutcome?._tag === "Right"
      ? siteOutcome.right.kind
      : wanted !== undefined && wanted !== "none"
      ? wanted
      : (yield* installedWebServers(options.env))[0] ?? "nginx"
    const snippetPath = path.join(paths.storage, "webserver", `${kind}.conf`)

    // ---- 3. include ----
    const extensions: Extensions = panel.kind === "pelican" ? yield* options.extensions.pipe(Effect.orElseSucceed((): Extensions => [])) : []
    const plan = yield* install.planInstall(panel, { hostVersion: frameworkVersion, extensions, snippet: { kind, path: snippetPath, upstream: `http://127.0.0.1:${port}` } }).pipe(
      Effect.catchAll((error) => failStep("include", panel.root, error.message, ""))
    )
    const pending = plan.changes.filter((c) => c.action !== "unchanged")
    const insideRoot = (file: string) => file === paths.root || file.startsWith(`${paths.root}${path.sep}`)
    const panelPending = pending.filter((c) => !insideRoot(c.path))
    const includePath = panel.kind === "pterodactyl" ? plan.changes[0]!.path : path.join(panel.root, "plugins", "host")
    const includeAction = pending.length === 0 ? "unchanged" : pending.every((c) => c.action === "create") ? "create" : "update"
    const includeCommand = plan.commands.map((c) => c.command).join(" && ")
    if (dryRun) {
      yield* emit(
        { id: "include", action: includeAction, path: includePath, ...(includeCommand === "" ? {} : { command: includeCommand }) },
        planDiff(plan),
        includeCommand === "" ? [] : [`would then run in ${panel.root}: ${includeCommand}`]
      )
    } else {
      for (const change of pending) yield* needsRoot("include", change.path)
      yield* applyOrRestore(install, plan).pipe(
        Effect.catchAll((error) => failStep("include", includePath, `${error.message} (what it had written is put back)`, `run it as root: ${options.asRoot}`))
      )
      if (panelPending.length > 0 && record?.include === undefined) yield* remember((r) => ({ ...r, include: { panel_root: panel.root } }))
      const runs = yield* install.runCommands(plan, options.env)
      yield* emit({
        id: "include",
        action: includeAction,
        path: includePath,
        ...(includeCommand === "" ? {} : { command: includeCommand }),
        ...(runs.length === 0 ? {} : { output: runs.map((r) => (r.ran ? `ran in ${panel.root}: ${r.command} (exit ${r.exitCode ?? "none"})${r.exitCode === 0 || r.output === "" ? "" : `\n${r.output}`}` : `now run in ${panel.root}: ${r.command} (php or the panel's artisan is not here)`)).join("\n") })
      })
    }

    // ---- 4. web server ----
    let webServerSkipped = false
    if (wanted === "none") {
      webServerSkipped = true
      yield* emit({ id: "webserver", action: "skipped", path: snippetPath, output: `--web-server none: ${includeHint(kind, snippetPath)}` })
    } else if (siteOutcome === undefined || siteOutcome._tag === "Left") {
      const error = siteOutcome?.left
      return yield* failStep("webserver", Option.getOrUndefined(options.site), error === undefined ? "no web server" : error.message, "")
    } else {
      const site: FoundSite = siteOutcome.right
      const etc = etcRoot(options.env)
      const commands = webServerCommands(site.kind, etc, options.env)
      const line = includeLine(site.kind, snippetPath)
      const scan = scanInclude(site.text)
      if (scan._tag === "Tampered") {
        return yield* failStep("webserver", site.file, `line ${scan.line}: ${scan.reason}`, "fix or remove the # host:begin/# host:end lines by hand")
      }
      // An include of another snippet path (Host's root moved) is replaced where the site's root now is.
      const stripped = scan._tag === "Present" && scan.body !== line ? withoutInclude(site.text, scan) : undefined
      const match = stripped === undefined ? site.match : findSites(site.kind, stripped, path.join(panel.root, "public"))[0] ?? site.match
      const after = scan._tag === "Present" && stripped === undefined ? site.text : withInclude(stripped ?? site.text, match, site.kind, snippetPath)
      const action = after === site.text ? "unchanged" : "update"
      const testCommand = commandLine(commands.test, commands.extraEnv)
      const reloadCommand = commandLine(commands.reload, commands.extraEnv)
      const others = site.others.length === 0 ? [] : [`also serving the panel (add the include there yourself): ${site.others.join(", ")}`]
      if (action === "unchanged") {
        yield* emit({ id: "webserver", action, path: site.file, output: `${site.kind}: the include is in place` }, "", others)
      } else if (dryRun) {
        yield* emit({ id: "webserver", action, path: site.file, command: `${testCommand} && ${reloadCommand}` }, diffOf(site.file, site.text, after), [
          `would then run: ${testCommand}`,
          `would then run: ${reloadCommand}`,
          ...others
        ])
      } else {
        yield* needsRoot("webserver", site.file)
        const restore = ctx.writeKeeping(site.file, site.text).pipe(Effect.orDie)
        yield* ctx.writeKeeping(site.file, after).pipe(
          Effect.catchAll((error) => failStep("webserver", site.file, `cannot be written: ${error.message}`, `run it as root: ${options.asRoot}`))
        )
        const test: ProgramRun = yield* runProgram(commands.test, { env: options.env, extraEnv: commands.extraEnv })
        if (test.exitCode !== 0) {
          yield* restore
          return yield* failStep("webserver", site.file, `${test.command} failed, so the file is restored byte for byte:\n${test.output}`, "fix the web server's configuration, or pass --web-server none and include the snippet yourself", test.command)
        }
        const reload = yield* runProgram(commands.reload, { env: options.env, extraEnv: commands.extraEnv })
        if (reload.exitCode !== 0) {
          yield* restore
          return yield* failStep("webserver", site.file, `${reload.command} failed, so the file is restored byte for byte:\n${reload.output}`, `start the web server, then run setup again (or reload it yourself: ${reloadCommand})`, reload.command)
        }
        if (record?.webserver === undefined) yield* remember((r) => ({ ...r, webserver: { kind: site.kind, path: site.file, etc } }))
        yield* emit({ id: "webserver", action, path: site.file, command: `${test.command} && ${reload.command}`, output: `${site.kind}: the include added after line ${site.match.line}; ${test.command}: ok; reloaded` }, "", others)
      }
    }

    // ---- 5. service ----
    let serviceSkipped = false
    let serviceUser: { readonly uid: number; readonly gid: number } | undefined
    const serviceChoice = Option.getOrElse(options.service, () => "systemd" as const)
    if (serviceChoice === "none") {
      serviceSkipped = true
      yield* emit({ id: "service", action: "skipped", output: `--service none: start Host yourself (${options.node} ${options.bin} serve --root ${paths.root})` })
    } else {
      const unitFile = path.join(etcRoot(options.env), "systemd", "system", "host.service")
      const user = Option.getOrElse(options.user, () => ownerOf(panel.root))
      serviceUser = userIds(user)
      if (serviceUser === undefined) {
        return yield* failStep("service", undefined, `--user ${user}: no such user on this machine`, "name a user of /etc/passwd (the panel's web server user, e.g. www-data)")
      }
      const unit = systemdUnit({ user, node: options.node, bin: options.bin, root: paths.root, databaseUnits: databaseUnits(config.database), panelName: panel.name })
      const before = yield* ctx.readIfExists(unitFile)
      const running = yield* systemdRunning(fs)
      const enable = ["systemctl", "enable", "--now", "host"]
      const daemonReload = ["systemctl", "daemon-reload"]
      let action: SetupStep["action"] = before === undefined ? "create" : before === unit ? "unchanged" : "update"
      const commandText = `${commandLine(daemonReload)} && ${commandLine(enable)}`
      if (dryRun) {
        yield* emit({ id: "service", action, path: unitFile, command: commandText }, action === "unchanged" ? "" : diffOf(unitFile, before, unit), action === "unchanged" ? [] : [`would then run: ${commandText}`])
      } else {
        if (action !== "unchanged") {
          yield* needsRoot("service", unitFile)
          const missing: Array<string> = []
          for (let folder = path.dirname(unitFile); !(yield* fs.exists(folder).pipe(Effect.orElseSucceed(() => true))); folder = path.dirname(folder)) missing.push(folder)
          yield* ctx.writeKeeping(unitFile, unit).pipe(
            Effect.catchAll((error) => failStep("service", unitFile, `cannot be written: ${error.message}`, `run it as root: ${options.asRoot}`))
          )
          if (record?.service === undefined) yield* remember((r) => ({ ...r, service: { path: unitFile, before: before ?? null, systemd: running, created_folders: missing } }))
        }
        const lines: Array<string> = []
        let output = ""
        if (running) {
          const active = yield* runProgram(["systemctl", "is-active", "--quiet", "host"])
          const enabled = yield* runProgram(["systemctl", "is-enabled", "--quiet", "host"])
          const needed = action !== "unchanged" || active.exitCode !== 0 || enabled.exitCode !== 0
          if (needed) {
            const runs = [daemonReload, enable, ...(action === "update" && active.exitCode === 0 ? [["systemctl", "restart", "host"]] : [])]
            for (const argv of runs) {
              const run = yield* runProgram(argv)
              if (run.exitCode !== 0) {
                if (action !== "unchanged") {
                  yield* (before === undefined ? fs.remove(unitFile) : ctx.writeKeeping(unitFile, before)).pipe(Effect.ignore)
                  yield* runProgram(daemonReload)
                }
                return yield* failStep("service", unitFile, `${run.command} failed${action === "unchanged" ? "" : " (the unit is put back as it was)"}:\n${run.output}`, "see `journalctl -u host`; fix, then run setup again", run.command)
              }
            }
            if (action === "unchanged") action = "update"
            output = `${runs.map((r) => commandLine(r)).join(" && ")}: ok`
          }
        } else {
          output = `systemd is not running here (a container?): where it runs, run as root: ${commandText}\nor start Host yourself: ${commandLine([options.node, options.bin, "serve", "--root", paths.root])}`
        }
        yield* handOver(paths.storage, serviceUser)
        yield* emit({ id: "service", action, path: unitFile, command: commandText, ...(output === "" ? {} : { output }) }, "", lines)
      }
    }

    // ---- 6. check ----
    if (dryRun) {
      yield* emit({ id: "check", action: "skipped", output: "--dry-run: nothing was written, so nothing to check" })
    } else if (webServerSkipped || serviceSkipped) {
      yield* emit({ id: "check", action: "skipped", output: `step ${webServerSkipped ? "4 (web server)" : "5 (service)"} was skipped, so Host is not necessarily reachable yet; once it is, run host doctor` })
    } else {
      const readyUrl = `${baseUrl}/host/ready`
      if (options.onWait !== undefined) yield* options.onWait(`[6/6] check: waiting for ${readyUrl} to answer through the web server (at most 30 s)`)
      const deadline = Date.now() + 30_000
      let last = ""
      let answered = false
      while (!answered && Date.now() < deadline) {
        const status = yield* Effect.tryPromise(() => fetch(readyUrl, { redirect: "manual", signal: AbortSignal.timeout(5_000) }).then(async (r) => ({ status: r.status, body: (await r.text()).slice(0, 200) }))).pipe(
          Effect.orElseSucceed(() => ({ status: 0, body: "no answer" }))
        )
        // Host's own answer, not any 200: just after a reload the old workers still serve the old site.
        answered = status.status === 200 && /"generation"\s*:/.test(status.body)
        last = status.status === 0 ? status.body : `HTTP ${status.status}: ${status.body}`
        if (!answered) yield* Effect.sleep("250 millis")
      }
      if (!answered) {
        return yield* failStep("check", readyUrl, `did not answer 200 through the web server within 30 s (last: ${last})`, "check that Host runs (systemctl status host) and that the web server sends /host/ to it; then run host doctor")
      }
      const report = yield* options.doctor.pipe(Effect.either)
      // The check opened the database as this user: the service's user gets it back.
      yield* handOver(paths.storage, serviceUser)
      if (report._tag === "Left") return yield* failStep("check", readyUrl, `host doctor could not run: ${errorText(report.left)}`, "run host doctor to see why")
      const failing = report.right.sections.flatMap((s) => s.checks.filter((c) => c.verdict === "fail").map((c) => `${s.subject} ${c.id}: ${c.evidence}${c.fix === "" ? "" : ` (fix: ${c.fix})`}`))
      const summary = `${readyUrl}: 200 through the web server; host doctor: ${report.right.summary.ok} ok, ${report.right.summary.warning} warning(s), ${report.right.summary.fail} failing`
      if (failing.length > 0) return yield* failStep("check", readyUrl, `${summary}:\n${failing.join("\n")}`, "run host doctor for the details")
      yield* emit({ id: "check", action: "unchanged", path: readyUrl, output: summary })
    }
    return { steps, adminUrl, dryRun }
  })

/** `host setup --remove`: undoes, in reverse, what setup's record says it changed. */
export const runSetupRemove = (options: Pick<SetupOptions, "panelRoot" | "dryRun" | "env" | "asRoot" | "onStep">) =>
  Effect.gen(function*() {
    const ctx = yield* setupContext
    const { fs, install, path } = ctx
    const steps: Array<SetupStep> = []
    const emit = (step: SetupStep, diff = "", lines: ReadonlyArray<string> = []) =>
      Effect.suspend(() => {
        steps.push(step)
        return options.onStep(step, { diff, lines })
      })
    const failStep = (id: SetupStep["id"], file: string | undefined, reason: string, fix: string) =>
      Effect.gen(function*() {
        yield* emit({ id, action: "failed", ...(file === undefined ? {} : { path: file }), output: `${reason}${fix === "" ? "" : `; ${fix}`}` })
        return yield* new SetupStepFailed({ step: id, path: file, reason, fix, steps })
      })
    const needsRoot = (id: SetupStep["id"], file: string) =>
      Effect.gen(function*() {
        const why = unwritable(file, path)
        if (why !== undefined) return yield* failStep(id, file, `cannot write ${file}: ${why}`, `run it as root: ${options.asRoot}`)
      })
    const loaded = yield* ctx.loadRecord
    if (loaded === undefined) return { steps, nothing: true, dryRun: options.dryRun }
    let record: SetupRecord = loaded
    const forget = (change: (r: SetupRecord) => SetupRecord) =>
      Effect.gen(function*() {
        record = change(record)
        yield* ctx.saveRecord(record)
      })
    const dryRun = options.dryRun

    // service: stopped, disabled, unit removed (or put back as it was)
    if (record.service === undefined) yield* emit({ id: "service", action: "skipped", output: "setup wrote no unit" })
    else {
      const service = record.service
      const now = yield* ctx.readIfExists(service.path)
      const restored = service.before ?? undefined
      const running = yield* systemdRunning(fs)
      const disable = ["systemctl", "disable", "--now", "host"]
      const daemonReload = ["systemctl", "daemon-reload"]
      if (dryRun) {
        yield* emit({ id: "service", action: "remove", path: service.path, command: running ? `${commandLine(disable)} && ${commandLine(daemonReload)}` : "" }, now === restored ? "" : diffOf(service.path, now, restored))
      } else {
        yield* needsRoot("service", service.path)
        const ran: Array<string> = []
        if (running) {
          const run = yield* runProgram(disable)
          ran.push(`${run.command}: exit ${run.exitCode}`)
        }
        yield* (restored === undefined ? (now === undefined ? Effect.void : fs.remove(service.path)) : ctx.writeKeeping(service.path, restored)).pipe(
          Effect.catchAll((error) => failStep("service", service.path, `cannot be removed: ${errorText(error)}`, `run it as root: ${options.asRoot}`))
        )
        // Folders setup created for the unit, deepest first, when nothing else came into them.
        for (const folder of service.created_folders) {
          const entries = yield* fs.readDirectory(folder).pipe(Effect.orElseSucceed(() => ["?"]))
          if (entries.length === 0) yield* fs.remove(folder, { recursive: true }).pipe(Effect.ignore)
        }
        if (running) {
          const run = yield* runProgram(daemonReload)
          ran.push(`${run.command}: exit ${run.exitCode}`)
        }
        yield* forget(({ service: _, ...r }) => r)
        yield* emit({
          id: "service",
          action: "remove",
          path: service.path,
          output: running ? ran.join("; ") : "systemd is not running here: the unit is removed; stop the `host serve` you started yourself"
        })
      }
    }

    // web server: the include removed, tested, reloaded
    if (record.webserver === undefined) yield* emit({ id: "webserver", action: "skipped", output: "setup added no include to a web server" })
    else {
      const web = record.webserver
      const text = yield* ctx.readIfExists(web.path)
      const scan = text === undefined ? { _tag: "Absent" as const } : scanInclude(text)
      if (scan._tag === "Tampered") return yield* failStep("webserver", web.path, `line ${scan.line}: ${scan.reason}`, "fix or remove the # host:begin/# host:end lines by hand")
      const commands = webServerCommands(web.kind, web.etc, options.env)
      if (scan._tag === "Absent" || text === undefined) {
        if (!dryRun) yield* forget(({ webserver: _, ...r }) => r)
        yield* emit({ id: "webserver", action: "unchanged", path: web.path, output: "the include is no longer there" })
      } else {
        const after = withoutInclude(text, scan)
        if (dryRun) {
          yield* emit({ id: "webserver", action: "remove", path: web.path, command: `${commandLine(commands.test, commands.extraEnv)} && ${commandLine(commands.reload, commands.extraEnv)}` }, diffOf(web.path, text, after))
        } else {
          yield* needsRoot("webserver", web.path)
          yield* ctx.writeKeeping(web.path, after).pipe(Effect.catchAll((error) => failStep("webserver", web.path, `cannot be written: ${error.message}`, `run it as root: ${options.asRoot}`)))
          const test = yield* runProgram(commands.test, { env: options.env, extraEnv: commands.extraEnv })
          if (test.exitCode !== 0) {
            yield* ctx.writeKeeping(web.path, text).pipe(Effect.orDie)
            return yield* failStep("webserver", web.path, `${test.command} failed without the include, so it is put back:\n${test.output}`, "fix the web server's configuration, then run setup --remove again")
          }
          const reload = yield* runProgram(commands.reload, { env: options.env, extraEnv: commands.extraEnv })
          yield* forget(({ webserver: _, ...r }) => r)
          yield* emit({
            id: "webserver",
            action: "remove",
            path: web.path,
            command: `${test.command} && ${reload.command}`,
            output: reload.exitCode === 0 ? `${test.command}: ok; reloaded` : `${test.command}: ok; ${reload.command} failed (reload the web server yourself):\n${reload.output}`
          })
        }
      }
    }

    // include: panel:uninstall's plan
    if (record.include === undefined) yield* emit({ id: "include", action: "skipped", output: "setup did not add the panel's include" })
    else {
      const panel = yield* install.detect(record.include.panel_root).pipe(Effect.catchAll((error) => failStep("include", record.include?.panel_root, error.message, "")))
      const plan = yield* install.planUninstall(panel).pipe(Effect.catchAll((error) => failStep("include", panel.root, error.message, "")))
      const pending = plan.changes.filter((c) => c.action !== "unchanged")
      const includePath = panel.kind === "pterodactyl" ? plan.changes[0]?.path ?? panel.root : path.join(panel.root, "plugins", "host")
      const command = plan.commands.map((c) => c.command).join(" && ")
      if (dryRun) {
        yield* emit({ id: "include", action: pending.length === 0 ? "unchanged" : "remove", path: includePath, ...(command === "" ? {} : { command }) }, planDiff(plan))
      } else {
        for (const change of pending) yield* needsRoot("include", change.path)
        yield* applyOrRestore(install, plan).pipe(Effect.catchAll((error) => failStep("include", includePath, error.message, `run it as root: ${options.asRoot}`)))
        const runs = yield* install.runCommands(plan, options.env)
        yield* forget(({ include: _, ...r }) => r)
        yield* emit(
          { id: "include", action: pending.length === 0 ? "unchanged" : "remove", path: includePath, ...(command === "" ? {} : { command }) },
          "",
          runs.map((r) => (r.ran ? `ran in ${panel.root}: ${r.command} (exit ${r.exitCode ?? "none"})` : `now run in ${panel.root}: ${r.command} (php or the panel's artisan is not here)`))
        )
      }
    }
    if (!dryRun) yield* fs.remove(ctx.recordFile).pipe(Effect.ignore)
    return { steps, nothing: false, dryRun }
  })
