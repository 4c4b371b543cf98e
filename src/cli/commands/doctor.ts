import { Args, Command, Options } from "@effect/cli"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Layer, Option } from "effect"
import { formatDoctorReport } from "../../domain/Doctor.js"
import { cliDoctor } from "../../usecases/Doctor.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, printJson } from "../Output.js"
import { operationsLayer } from "../Runtime.js"

// `host doctor [<id>] [--json]` (docs/operations.md "host doctor"): the report of usecases/Doctor.ts,
// printed as text or JSON.

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
      const report = yield* cliDoctor(Option.getOrUndefined(extension)).pipe(
        Effect.provide(Layer.merge(NodeHttpClient.layer, operationsLayer(invocation, { sweepLeftovers: false })))
      )
      yield* json ? printJson(report) : Console.log(formatDoctorReport(report))
      if (!report.healthy) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Check why extensions do not load, show or answer: each check with its evidence and fix"))
