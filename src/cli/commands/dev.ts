import { Args, Command, Options } from "@effect/cli"
import { Console, DateTime, Effect } from "effect"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { BridgeBuildFailed, type DevEvent, link, unlink, watchLinked } from "../../lifecycle/DevLink.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith } from "../Output.js"
import { operationsLayer } from "../Runtime.js"
import { untilStopSignal } from "../StopSignal.js"

// `host dev <path> [--link] [--unlink] [--watch] [--watch-bridge]` (docs/authoring.md, "Dev loop").
// Without a flag it links. --watch links too (a watched folder must be served to be seen).

// Progress goes to stderr as it is (Console.error would be read as a failure line `error: dev: …`).
const note = (text: string) => Effect.sync(() => void process.stderr.write(`${text}\n`))

/** The time of day (HH:MM:SS) of the run's clock. */
const time = Effect.map(DateTime.now, (now) => DateTime.formatIso(now).slice(11, 19))

const render = (event: DevEvent): Effect.Effect<void> => Effect.flatMap(time, (at) => {
  switch (event._tag) {
    case "Built":
      return Console.log(`${at} built ${event.result.bundle} (${(event.result.bytes / 1024).toFixed(1)} KiB) in ${event.result.ms} ms`)
    case "BuildFailed":
      return note(`${at} error: build failed; the previous bundle stays:\n${event.lines.join("\n")}`)
    case "Reloaded":
      return event.id === "bridge"
        ? Console.log(`${at} rebuilt /host/bridge.js (reload the page to use it)`)
        : Console.log(
          `${at} ${event.id} reloaded in the panel (${event.ms} ms)${event.migrations.length > 0 ? `; ran ${event.migrations.join(", ")}` : ""}`
        )
    case "ReloadFailed":
      return note(`${at} error: ${event.message}`)
    case "Watching":
      return note(`Watching ${event.folder} (Ctrl-C to stop)`)
  }
})

export const devCommand = Command.make(
  "dev",
  {
    path: Args.text({ name: "path" }).pipe(Args.withDescription("the extension folder")),
    link: Options.boolean("link").pipe(Options.withDescription("serve the folder on this panel in place (a dev-link source)")),
    unlink: Options.boolean("unlink").pipe(Options.withDescription("remove the link; the folder is kept")),
    keepData: Options.boolean("keep-data").pipe(Options.withDescription("with --unlink: keep the extension's tables and settings")),
    watch: Options.boolean("watch").pipe(Options.withDescription("rebuild and reload the panel on every saved change, until Ctrl-C")),
    watchBridge: Options.boolean("watch-bridge").pipe(Options.withDescription("also rebuild /host/bridge.js when src/bridge changes"))
  },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      if (options.unlink && (options.link || options.watch || options.watchBridge)) {
        yield* Console.error("error: dev: --unlink cannot be combined with --link, --watch or --watch-bridge")
        return yield* exitWith(2)
      }
      const program = Effect.gen(function*() {
        if (options.unlink) {
          const result = yield* unlink(options.path, { keepData: options.keepData })
          return yield* Console.log(`Unlinked ${result.id}; ${options.path} was left as it is.`)
        }
        const linked = yield* link(options.path)
        yield* Console.log(
          linked.action === "linked"
            ? `Linked ${linked.id} v${linked.version} from ${options.path}: the panel serves the folder itself.`
            : `${linked.id} is linked; refreshed from ${options.path}.`
        )
        if (!options.watch && !options.watchBridge) return
        const bridge = options.watchBridge
          ? {
            folder: join(invocation.frameworkRoot, "src", "bridge"),
            rebuild: Effect.async<string, BridgeBuildFailed>((resume) => {
              execFile(process.execPath, [join("scripts", "build-bridge.mjs")], { cwd: invocation.frameworkRoot }, (error, _stdout, stderr) =>
                resume(error === null ? Effect.succeed("bridge.js") : Effect.fail(new BridgeBuildFailed({ detail: stderr.trim() || error.message }))))
            })
          }
          : undefined
        const signal = yield* Effect.raceFirst(
          Effect.as(watchLinked(options.path, { report: render, bridge }), "end"),
          untilStopSignal
        )
        yield* note(`${signal}: stopped watching; ${linked.id} stays linked (host dev ${options.path} --unlink removes the link)`)
      })
      yield* program.pipe(Effect.provide(operationsLayer(invocation, { listeners: false })))
    })
).pipe(Command.withDescription("Develop an extension on this panel: link its folder, rebuild and reload on every save"))
