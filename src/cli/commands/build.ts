import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Stream } from "effect"
import {
  type BuildResult,
  buildTarget,
  formatBuildMessage,
  frontendBuildContext,
  FrontendBuildFailed,
  resolveFrontendTarget
} from "../../archive/ExtensionFrontend.js"
import { watchTree } from "../../archive/Watch.js"
import { printJson } from "../Output.js"
import { untilStopSignal } from "../StopSignal.js"

// `host build [path] [--watch] [--json]`: bundles the extension's frontend (docs/authoring.md, "Build").
// A failed build prints each error as file:line:column and leaves the previous bundle in place.

const summary = (result: BuildResult) =>
  `Built ${result.bundle} (${(result.bytes / 1024).toFixed(1)} KiB${result.styles === undefined ? "" : `, styles ${result.styles}`}) in ${result.ms} ms`

export const buildCommand = Command.make(
  "build",
  {
    path: Args.text({ name: "path" }).pipe(
      Args.withDefault("."),
      Args.withDescription("extension folder (default: the current folder)")
    ),
    watch: Options.boolean("watch").pipe(Options.withDescription("rebuild on every saved change until Ctrl-C")),
    json: Options.boolean("json").pipe(Options.withDescription("print {bundle, bytes, styles?, ms} only"))
  },
  ({ json, path, watch }) =>
    Effect.gen(function*() {
      const target = yield* resolveFrontendTarget(path)
      if (!watch) {
        const result = yield* buildTarget(target)
        return yield* json ? printJson(result) : Console.log(summary(result))
      }
      // Watching: one incremental esbuild context; a failed rebuild is reported and the watch goes on.
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* frontendBuildContext(target)
        const once = buildTarget(target, context).pipe(
          Effect.tap((result) => json ? Console.log(JSON.stringify(result)) : Console.log(summary(result))),
          Effect.catchTag("FrontendBuildFailed", (error: FrontendBuildFailed) =>
            json
              ? Console.log(JSON.stringify({ errors: error.errors }))
              : Console.error(`error: build: ${error.errors.map(formatBuildMessage).join("\n")}`))
        )
        const output = new Set([target.bundle, `${target.bundle}.map`, ...(target.styles === undefined ? [] : [target.styles, `${target.styles}.map`])])
        // Watch first, build second: a save during the first build is not missed.
        const changes = yield* watchTree(target.root, { ignore: (file) => output.has(file) })
        yield* once
        if (!json) yield* Console.error(`Watching ${target.root} for changes (Ctrl-C to stop)`)
        const signal = yield* Effect.raceFirst(
          changes.pipe(Stream.runForEach(() => once), Effect.as("end")),
          untilStopSignal
        )
        if (!json) yield* Console.error(`${signal}: stopped watching`)
      }))
    })
).pipe(Command.withDescription("Build the extension's frontend bundle (esbuild: one minified IIFE with a linked source map)"))
