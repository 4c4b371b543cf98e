import { Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Layer } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import type { SetupStep } from "../../domain/Setup.js"
import { PanelInstall } from "../../panel/PanelInstall.js"
import { installedExtensionFacts } from "../../panel/PanelSelfHeal.js"
import { cliDoctor } from "../../usecases/Doctor.js"
import { runSetup, runSetupRemove, SetupStepFailed } from "../../usecases/Setup.js"
import { commandLine } from "../../system/Programs.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, printJson } from "../Output.js"
import { configLayer, dataLayer, operationsLayer } from "../Runtime.js"

// `host setup` and `host setup --remove` (docs/panels.md "Five minutes", DESIGN §22): the steps of
// usecases/Setup.ts printed as each ends (or one JSON document), and the exit code.

const order = ["panel", "config", "include", "webserver", "service", "check"] as const

const stepLine = (step: SetupStep, remove: boolean) => {
  const number = remove ? "" : `[${order.indexOf(step.id) + 1}/6] `
  const first = `${number}${step.id.padEnd(9)} ${step.action.padEnd(9)} ${step.path ?? ""}`.trimEnd()
  const output = step.output === undefined ? [] : step.output.split("\n").map((line) => `      ${line}`)
  return [first, ...output].join("\n")
}

/** This command as a person re-runs it as root: with `--root` of this run, whatever gave it. */
const asRootCommand = (root: string) => {
  const args = process.argv.slice(2)
  return `sudo ${commandLine(["host", ...(args.includes("--root") ? [] : ["--root", root]), ...args])}`
}

export const setupCommand = Command.make(
  "setup",
  {
    remove: Options.boolean("remove").pipe(Options.withDescription("undo, in reverse, what setup did (its record under Host's root)")),
    panelRoot: Options.directory("panel-root", { exists: "either" }).pipe(
      Options.optional,
      Options.withDescription("the panel's install folder (default: panel.root of config/host.yaml, HOST_PANEL_ROOT)")
    ),
    panelUrl: Options.text("panel-url").pipe(Options.optional, Options.withDescription("how Host reaches the panel, server to server (default: the panel's APP_URL)")),
    webServer: Options.choice("web-server", ["nginx", "caddy", "apache", "none"] as const).pipe(
      Options.optional,
      Options.withDescription("the web server serving the panel (default: the one whose enabled site serves the panel's public/); none: print the include")
    ),
    site: Options.file("site", { exists: "either" }).pipe(Options.optional, Options.withDescription("the web server's file holding the panel's site")),
    service: Options.choice("service", ["systemd", "none"] as const).pipe(Options.optional, Options.withDescription("run Host as a systemd service (default), or not")),
    user: Options.text("user").pipe(Options.optional, Options.withDescription("the service's user (default: the owner of the panel folder)")),
    port: Options.integer("port").pipe(Options.optional, Options.withDescription("Host's port on 127.0.0.1 (default 8080, or the next free one)")),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("print each file's diff and each command; write nothing anywhere")),
    json: Options.boolean("json").pipe(Options.withDescription("print one JSON document"))
  },
  (flags) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const { json, dryRun } = flags
      const onStep = (step: SetupStep, detail: { readonly diff: string; readonly lines: ReadonlyArray<string> }) =>
        json ? Effect.void : Console.log([stepLine(step, flags.remove), ...(detail.diff === "" ? [] : [detail.diff.trimEnd()]), ...detail.lines.map((l) => `      ${l}`)].join("\n"))
      yield* Effect.gen(function*() {
        const { paths } = yield* HostConfig
        const fs = yield* FileSystem.FileSystem
        // The run's platform (cli/main.ts builds it once), for the steps the use case runs on its own.
        const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
        const asRoot = asRootCommand(paths.root)
        if (flags.remove) {
          const outcome = yield* Effect.either(runSetupRemove({ panelRoot: flags.panelRoot, dryRun, env: invocation.env, asRoot, onStep }))
          if (outcome._tag === "Left") {
            if (json && outcome.left instanceof SetupStepFailed) {
              yield* printJson({ steps: outcome.left.steps, dry_run: dryRun, error: outcome.left.message })
              return yield* exitWith(1)
            }
            return yield* outcome.left
          }
          const result = outcome.right
          if (json) return yield* printJson({ steps: result.steps, dry_run: dryRun })
          yield* Console.log(
            result.nothing
              ? `Nothing to remove: setup keeps no record under ${paths.root} (storage/host/setup.json).`
              : dryRun
              ? "Nothing written (--dry-run)."
              : `Removed what setup did. Host's root, its config and its database stay in ${paths.root} (host framework:uninstall removes them).`
          )
          return
        }
        const outcome = yield* Effect.either(runSetup({
          panelRoot: flags.panelRoot,
          panelUrl: flags.panelUrl,
          webServer: flags.webServer,
          site: flags.site,
          service: flags.service,
          user: flags.user,
          port: flags.port,
          dryRun,
          env: invocation.env,
          node: process.execPath,
          bin: invocation.frameworkRoot === "" ? process.argv[1] ?? "host" : `${invocation.frameworkRoot}/bin/host.js`,
          asRoot,
          // Read only when the panel is Pelican (its plugin lists the extensions' permissions and pages); a
          // database that is not there has none and is not created, and a dry run opens it without recovery
          // (as `panel:install --dry-run` does).
          extensions: Effect.gen(function*() {
            if (paths.databaseFile !== "" && paths.databaseFile !== ":memory:" && !(yield* fs.exists(paths.databaseFile).pipe(Effect.orElseSucceed(() => false)))) return []
            return yield* installedExtensionFacts.pipe(
              Effect.provide(dryRun ? dataLayer(invocation, { recover: false }) : operationsLayer(invocation, { listeners: false }))
            )
          }).pipe(Effect.provide(platform)),
          doctor: cliDoctor(undefined).pipe(
            Effect.provide(Layer.merge(NodeHttpClient.layer, operationsLayer(invocation, { sweepLeftovers: false }))),
            Effect.provide(platform)
          ),
          onStep,
          onWait: (message) => (json ? Effect.void : Effect.sync(() => process.stderr.write(`${message}\n`)))
        }))
        if (outcome._tag === "Left") {
          if (json && outcome.left instanceof SetupStepFailed) {
            yield* printJson({ steps: outcome.left.steps, admin_url: null, dry_run: dryRun, error: outcome.left.message })
            return yield* exitWith(1)
          }
          if (outcome.left instanceof SetupStepFailed) {
            yield* Effect.sync(() => process.stderr.write(`error: setup: ${outcome.left.message}\n`))
            return yield* exitWith(1)
          }
          return yield* outcome.left
        }
        const result = outcome.right
        if (json) return yield* printJson({ steps: result.steps, admin_url: result.adminUrl, dry_run: dryRun })
        yield* Console.log(dryRun ? `Nothing written (--dry-run). Admin, once set up: ${result.adminUrl}` : `Host's admin screens: ${result.adminUrl}`)
      }).pipe(Effect.provide(PanelInstall.Default.pipe(Layer.provideMerge(configLayer(invocation)))))
    })
).pipe(Command.withDescription("Set Host up in a panel server: config, the panel's include, the web server, a systemd service, a check; --remove undoes it"))
