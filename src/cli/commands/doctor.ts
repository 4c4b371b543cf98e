import { Args, Command, Options } from "@effect/cli"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Layer, Option } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import { formatDoctorReport } from "../../domain/Doctor.js"
import { DoctorUnknownExtension, runDoctor } from "../../lifecycle/Doctor.js"
import { ExtensionsRepo } from "../../store/ExtensionsRepo.js"
import { Panel } from "../../panel/Panel.js"
import { bootForCli, runHealthChecks } from "../../runtime/Backend.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, printJson } from "../Output.js"
import { storeLayer } from "../Runtime.js"
import { runtimeVersions } from "../../system/RuntimeVersions.js"

// `host doctor [<id>] [--json]` (docs/operations.md "host doctor"): boots the enabled extensions as
// `host status --health` does, runs their health checks, and prints lifecycle/Doctor.ts's report.

export const doctorCommand = Command.make(
  "doctor",
  {
    extension: Args.text({ name: "extension" }).pipe(
      Args.withDescription("one installed extension (vendor/name); default: all of them"),
      Args.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print the report as one JSON document"))
  },
  ({ extension, json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const report = yield* Effect.gen(function*() {
        const { config } = yield* HostConfig
        const panel = yield* Panel
        const only = Option.getOrUndefined(extension)
        // An id that is not installed is said before the extensions are booted for nothing.
        if (only !== undefined && Option.isNone(yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.find(only)))) {
          return yield* new DoctorUnknownExtension({ extensionId: only })
        }
        const generation = yield* bootForCli
        const health = yield* runHealthChecks(generation)
        return yield* runDoctor(only, {
          generation,
          health,
          versions: runtimeVersions(config.version, panel.info)
        })
      }).pipe(
        Effect.provide(Layer.merge(NodeHttpClient.layer, storeLayer(invocation, { sweepLeftovers: false })))
      )
      yield* json ? printJson(report) : Console.log(formatDoctorReport(report))
      if (!report.healthy) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Check why extensions do not load, show or answer: each check with its evidence and fix"))
