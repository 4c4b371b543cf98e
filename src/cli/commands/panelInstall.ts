import { Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import { frameworkVersion, HostConfig } from "../../config/HostConfig.js"
import { type WebServer, webServers } from "../../panel/PanelFiles.js"
import {
  type CommandRun,
  type DetectedPanel,
  includeHint,
  PanelInstall,
  type PanelPlan,
  planDiff
} from "../../panel/PanelInstall.js"
import { installedExtensionFacts } from "../../panel/PanelSelfHeal.js"
import { PanelNotWritable, runAsAdvice, type Unwritable, unwritableTargets, type WriteAdvice, writeAdvice } from "../../panel/PanelWritable.js"
import { installedWebServers } from "../../panel/WebServerSite.js"
import { commandLine } from "../../system/Programs.js"
import { panelReport, type PanelReport, resolvePanelRoot } from "../../usecases/PanelReport.js"
import { CliInvocation } from "../Invocation.js"
import { formatPairs, printJson } from "../Output.js"
import { configLayer, dataLayer, operationsLayer } from "../Runtime.js"

// `host panel:install`, `host panel:uninstall`, `host panel:status` (docs/panels.md): put Host's include
// into a real Pterodactyl or Pelican panel, take it out again, and show how it stands. These are the only
// commands that write outside Host's root, and there only the marked block or `plugins/host/`.

const panelRootOption = Options.directory("panel-root", { exists: "either" }).pipe(
  Options.optional,
  Options.withDescription("the panel's install folder (default: panel.root of config/host.yaml, HOST_PANEL_ROOT)")
)
const dryRunOption = Options.boolean("dry-run").pipe(Options.withDescription("print the diff of every file it would write; write nothing"))
const jsonOption = Options.boolean("json").pipe(Options.withDescription("print one JSON document"))

/**
 * The web server to write a snippet for when no flag names one: the first this machine runs (its program on
 * the PATH and its main configuration, as `host setup` finds it; never a bare folder such as a leftover
 * /etc/apache2/conf-available), else nginx.
 */
const detectWebServer = Effect.gen(function*() {
  const invocation = yield* CliInvocation
  const found = yield* installedWebServers(invocation.env)
  return found[0] ?? ("nginx" as WebServer)
})

/**
 * The installed extensions whose permissions and pages the include carries. An absent SQLite database means
 * none, and is not created: `--dry-run` writes nothing anywhere, and an install needs no database of its own.
 * A dry run does not finish interrupted operations either (that is a write).
 */
const installedExtensions = (dryRun: boolean) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const fs = yield* FileSystem.FileSystem
    const { paths } = yield* HostConfig
    if (paths.databaseFile !== "" && paths.databaseFile !== ":memory:" && !(yield* fs.exists(paths.databaseFile).pipe(Effect.orElseSucceed(() => false)))) {
      return []
    }
    return yield* installedExtensionFacts.pipe(
      Effect.provide(dryRun ? dataLayer(invocation, { recover: false }) : operationsLayer(invocation, { listeners: false }))
    )
  })

/** The command line to run again as another user. */
const rerunCommand = (command: string, root: string, panelRoot: string, extra: ReadonlyArray<string>) =>
  commandLine(["host", "--root", root, command, "--panel-root", panelRoot, ...extra])

/**
 * Refuses, before anything is written, a plan that would fail part-way for want of permission; a dry run
 * gets the same facts to mark its lines with.
 */
const writeCheck = (plan: PanelPlan, command: string) =>
  Effect.gen(function*() {
    const refused = yield* unwritableTargets(plan)
    const advice = yield* writeAdvice(plan.panel.root)
    return { refused, advice, command, error: refused.length === 0 ? undefined : new PanelNotWritable({ refused, advice, command }) }
  })

const refusedMark = (check: { readonly refused: ReadonlyArray<Unwritable>; readonly advice: WriteAdvice }, file: string) =>
  check.refused.some((r) => r.path === file) ? ` (not writable by ${check.advice.user})` : ""

/** The dry run's list of files, each marked when this user cannot write it, and how to run it instead. */
const dryRunLines = (plan: PanelPlan, root: string, path: Path.Path, check: { readonly refused: ReadonlyArray<Unwritable>; readonly advice: WriteAdvice; readonly command: string }) => [
  ...plan.changes.filter((c) => c.action !== "unchanged").map((c) => `${changeLines({ ...plan, changes: [c] }, root, path)[0]}${refusedMark(check, c.path)}`),
  ...(plan.removeFolder !== undefined && check.refused.some((r) => r.path === plan.removeFolder) ? [`  remove    ${plan.removeFolder}${refusedMark(check, plan.removeFolder)}`] : []),
  ...(check.refused.length === 0 ? [] : [`Not writable by ${check.advice.user}: ${runAsAdvice(check.advice, check.command, check.refused)}`])
]

const panelLine = (panel: DetectedPanel) =>
  `${panel.kind === "pterodactyl" ? "Pterodactyl" : "Pelican"} ${panel.version} ("${panel.name}") at ${panel.root}`

const changeLines = (plan: PanelPlan, root: string, path: Path.Path) =>
  plan.changes.map((c) => {
    const shown = c.path.startsWith(`${plan.panel.root}${path.sep}`) ? path.relative(plan.panel.root, c.path) : path.relative(root, c.path)
    return `  ${c.action.padEnd(9)} ${shown}`
  })

const commandLines = (runs: ReadonlyArray<CommandRun>, panelRoot: string, dryRun: boolean) =>
  runs.map((run) =>
    run.ran
      ? `Ran in ${panelRoot}: ${run.command} (exit ${run.exitCode ?? "none"})${run.exitCode === 0 || run.output === "" ? "" : `\n${run.output}`}`
      : `${dryRun ? "Would then run" : "Now run"} in ${panelRoot}: ${run.command}${dryRun ? "" : " (php or the panel's artisan is not here)"}`
  )

/** Each change, and whether this user may write it (`writable: false` refuses a real run). */
const changesJson = (plan: PanelPlan, check: { readonly refused: ReadonlyArray<Unwritable> }) =>
  plan.changes.map((c) => ({ path: c.path, action: c.action, writable: !check.refused.some((r) => r.path === c.path) }))

/**
 * Says so before a command that may take minutes (Pelican's `p:plugin:install` runs composer and yarn before it
 * enables the plugin): progress goes to stderr, so `--json` output stays one document.
 */
const announceSlowCommands = (plan: PanelPlan, panelRoot: string) =>
  Effect.forEach(plan.commands.filter((command) => command.timeoutSeconds > 300), (command) =>
    Effect.sync(() =>
      void process.stderr.write(
        `Running in ${panelRoot}: ${command.command} — the panel installs its packages and builds its assets first; ` +
          `this can take up to ${Math.round(command.timeoutSeconds / 60)} minutes\n`
      )
    ), { discard: true })

export const panelInstallCommand = Command.make(
  "panel:install",
  {
    panelRoot: panelRootOption,
    webServer: Options.choice("web-server", webServers).pipe(
      Options.optional,
      Options.withDescription("the web server to write the proxy snippet for (default: the one found here, else nginx)")
    ),
    dryRun: dryRunOption,
    json: jsonOption
  },
  ({ dryRun, json, panelRoot, webServer }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      yield* Effect.gen(function*() {
        const path = yield* Path.Path
        const { config, paths } = yield* HostConfig
        const install = yield* PanelInstall
        const root = yield* resolvePanelRoot(panelRoot)
        const panel = yield* install.detect(root)
        const kind = Option.isSome(webServer) ? webServer.value : yield* detectWebServer
        const listenHost = config.server.host === "0.0.0.0" || config.server.host === "::" ? "127.0.0.1" : config.server.host
        const upstream = `http://${listenHost.includes(":") ? `[${listenHost}]` : listenHost}:${config.server.port}`
        const snippetPath = path.join(paths.storage, "webserver", `${kind}.conf`)
        // The store is opened only once the folder is known to be a panel: a refusal leaves Host's root untouched.
        const extensions = yield* installedExtensions(dryRun)
        const plan = yield* install.planInstall(panel, {
          hostVersion: frameworkVersion,
          extensions,
          snippet: { kind, path: snippetPath, upstream }
        })
        const pending = plan.changes.filter((c) => c.action !== "unchanged")
        const check = yield* writeCheck(plan, rerunCommand("panel:install", paths.root, panel.root, ["--web-server", kind]))
        if (!dryRun && check.error !== undefined) return yield* check.error
        if (!dryRun) yield* install.apply(plan)
        if (!dryRun) yield* announceSlowCommands(plan, panel.root)
        const runs: ReadonlyArray<CommandRun> = dryRun
          ? plan.commands.map((c) => ({ command: c.command, ran: false, exitCode: null, output: "" }))
          : yield* install.runCommands(plan, invocation.env)
        const hint = includeHint(kind, snippetPath)
        if (json) {
          return yield* printJson({
            panel,
            changes: changesJson(plan, check),
            commands: runs,
            snippet: { kind, path: snippetPath, include: hint },
            dryRun
          })
        }
        if (dryRun) {
          yield* Console.log(`${panelLine(panel)}\n${pending.length === 0 ? "Nothing to change: Host is already installed." : "Would write (nothing written, --dry-run):"}`)
          if (pending.length > 0) yield* Console.log([...dryRunLines(plan, paths.root, path, check), planDiff(plan).trimEnd()].join("\n"))
          const lines = commandLines(runs, panel.root, true)
          if (lines.length > 0) yield* Console.log(lines.join("\n"))
          return
        }
        yield* Console.log([
          panelLine(panel),
          pending.length === 0 ? "Nothing changed: Host is already installed." : "Changes:",
          ...(pending.length === 0 ? [] : changeLines(plan, paths.root, path)),
          ...commandLines(runs, panel.root, false),
          `Web server (${kind}): ${hint}`
        ].join("\n"))
      }).pipe(Effect.provide(PanelInstall.Default.pipe(Layer.provideMerge(configLayer(invocation)))))
    })
).pipe(Command.withDescription("Install Host into a Pterodactyl or Pelican panel: the include, and the web-server snippet"))

export const panelUninstallCommand = Command.make(
  "panel:uninstall",
  { panelRoot: panelRootOption, dryRun: dryRunOption, json: jsonOption },
  ({ dryRun, json, panelRoot }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      yield* Effect.gen(function*() {
        const path = yield* Path.Path
        const { paths } = yield* HostConfig
        const install = yield* PanelInstall
        const panel = yield* install.detect(yield* resolvePanelRoot(panelRoot))
        const plan = yield* install.planUninstall(panel)
        const pending = plan.changes.filter((c) => c.action !== "unchanged")
        const check = yield* writeCheck(plan, rerunCommand("panel:uninstall", paths.root, panel.root, []))
        if (!dryRun && check.error !== undefined) return yield* check.error
        if (!dryRun) yield* install.apply(plan)
        const runs: ReadonlyArray<CommandRun> = dryRun
          ? plan.commands.map((c) => ({ command: c.command, ran: false, exitCode: null, output: "" }))
          : yield* install.runCommands(plan, invocation.env)
        if (json) return yield* printJson({ panel, changes: changesJson(plan, check), commands: runs, dryRun })
        if (dryRun) {
          yield* Console.log(`${panelLine(panel)}\n${pending.length === 0 ? "Nothing to remove: Host is not installed." : "Would remove (nothing written, --dry-run):"}`)
          if (pending.length > 0) yield* Console.log([...dryRunLines(plan, paths.root, path, check), planDiff(plan).trimEnd()].join("\n"))
          return
        }
        yield* Console.log([
          panelLine(panel),
          pending.length === 0 ? "Nothing to remove: Host is not installed." : "Removed:",
          ...(pending.length === 0 ? [] : changeLines(plan, paths.root, path)),
          ...commandLines(runs, panel.root, false),
          ...(pending.length === 0 ? [] : ["Also take the include of Host's web-server snippet out of the web server's configuration."])
        ].join("\n"))
      }).pipe(Effect.provide(PanelInstall.Default.pipe(Layer.provideMerge(configLayer(invocation)))))
    })
).pipe(Command.withDescription("Remove exactly what panel:install added to the panel (the marked block, or plugins/host)"))

/** The report as `label: value` pairs. */
export const panelReportPairs = (report: PanelReport): ReadonlyArray<readonly [string, string]> => [
  ["Driver", report.driver],
  ["Panel", report.panel === null ? report.problem ?? "not configured (panel.root)" : panelLine(report.panel)],
  ...(report.include === null ? [] : [["Include", `${report.include.state}: ${report.include.path} (${report.include.detail})`] as const]),
  ["Answers", report.answers === null ? "not checked (panel.url is not set)" : `${report.answers.answers ? "yes" : "no"}: ${report.answers.url}, ${report.answers.detail}`],
  ["Snippet", report.snippets.length === 0 ? "none written (host panel:install writes one)" : report.snippets.join(", ")],
  [
    "Self-heal",
    report.selfHeal === null
      ? "no report yet (host serve with a real driver writes it)"
      : `${report.selfHeal.heals} heal(s)${report.selfHeal.lastHealAt === null ? "" : `, last ${report.selfHeal.lastHealAt}`}; ${report.selfHeal.checks} check(s), last ${report.selfHeal.lastCheckAt ?? "never"} (${report.selfHeal.lastState}${report.selfHeal.lastError === null ? "" : `: ${report.selfHeal.lastError}`})`
  ],
  [
    "Identity cache",
    report.identityCache === null
      ? "no counters yet"
      : `${report.identityCache.hits} hit(s), ${report.identityCache.misses} miss(es), ${report.identityCache.panelRequests} panel request(s)`
  ]
]

export const panelStatusCommand = Command.make(
  "panel:status",
  { panelRoot: panelRootOption, json: jsonOption },
  ({ json, panelRoot }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const report = yield* panelReport(panelRoot).pipe(Effect.provide(PanelInstall.Default.pipe(Layer.provideMerge(configLayer(invocation)))))
      if (json) return yield* printJson(report)
      yield* Console.log(formatPairs(panelReportPairs(report)))
    })
).pipe(Command.withDescription("Show the panel driver, the panel, whether Host's include is intact, whether the panel answers, self-heal and cache counters"))
