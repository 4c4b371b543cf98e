import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { validateDirectory } from "../../archive/ExtensionDirectory.js"
import { frameworkVersion } from "../../config/HostConfig.js"
import type { Problem } from "../../domain/Problems.js"
import { exitWith, printJson } from "../Output.js"

const lines = (problems: ReadonlyArray<Problem>) => problems.map((p) => ` - ${p.path}: ${p.message}`)

export const validateCommand = Command.make(
  "validate",
  {
    path: Args.text({ name: "path" }).pipe(
      Args.withDefault("."),
      Args.withDescription("extension folder or its extension.yaml (default: the current folder)")
    ),
    strict: Options.boolean("strict").pipe(Options.withDescription("treat warnings as errors")),
    json: Options.boolean("json").pipe(Options.withDescription("print {valid, errors, warnings} only"))
  },
  ({ json, path, strict }) =>
    Effect.gen(function*() {
      const report = yield* validateDirectory(path, frameworkVersion)
      const valid = report.errors.length === 0 && !(strict && report.warnings.length > 0)
      if (json) {
        yield* printJson({ valid, errors: report.errors, warnings: report.warnings })
      } else {
        const output = report.errors.length === 0
          ? [valid ? "Manifest is valid." : "Validation failed: warnings are errors with --strict."]
          : ["Validation failed:", ...lines(report.errors)]
        if (report.warnings.length > 0) output.push("Warnings:", ...lines(report.warnings))
        yield* Console.log(output.join("\n"))
      }
      if (!valid) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Check an extension's manifest, settings, schedules, health checks and declared files"))
