import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { presets, scaffoldExtension, type ScaffoldResult } from "../../archive/Scaffold.js"
import { frameworkVersion } from "../../config/HostConfig.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, printJson } from "../Output.js"

// `host new <vendor/name>` (docs/authoring.md, "Scaffold"): writes a new extension folder from a preset.

const nextSteps = (result: ScaffoldResult, shownPath: string) =>
  [
    `Created ${result.id} (preset ${result.preset}) in ${result.path}: ${result.files.length} files`,
    ...result.files.map((file) => `  ${file}`),
    "",
    "Next:",
    `  cd ${shownPath}`,
    ...(result.parts.frontend ? ["  host build"] : []),
    "  host validate --strict",
    "  host export",
    "  host add <the .host file> --root <panel>     (or: host dev . --link --watch --root <panel>)",
    ...(result.parts.tests ? ["  npm test                                   (runs tests/ on a temporary panel)"] : [])
  ].join("\n")

export const newCommand = Command.make(
  "new",
  {
    id: Args.text({ name: "vendor/name" }).pipe(Args.withDescription("the new extension's id, e.g. acme/server-notes")),
    path: Options.text("path").pipe(Options.optional, Options.withDescription("folder to write (default ./<name>); must be empty or absent")),
    preset: Options.choice("preset", presets).pipe(
      Options.withDefault("standard" as const),
      Options.withDescription("standard: frontend + api routes; backend: api routes; full: everything; minimal: manifest and entrypoint")
    ),
    withApiRoutes: Options.boolean("with-api-routes").pipe(Options.withDescription("add api-client routes")),
    noApiRoutes: Options.boolean("no-api-routes").pipe(Options.withDescription("leave out api-client routes")),
    withAdminRoutes: Options.boolean("with-admin-routes").pipe(Options.withDescription("add admin routes (/admin/host/<id>/…)")),
    withAdmin: Options.boolean("with-admin").pipe(Options.withDescription("add admin settings (a form in the admin UI)")),
    withMigrations: Options.boolean("with-migrations").pipe(Options.withDescription("add a migration creating the extension's table")),
    withTests: Options.boolean("with-tests").pipe(Options.withDescription("add route tests run on a temporary panel (@host/sdk/testing)")),
    json: Options.boolean("json").pipe(Options.withDescription("print {id, preset, parts, path, files} only"))
  },
  (options) =>
    Effect.gen(function*() {
      if (options.withApiRoutes && options.noApiRoutes) {
        yield* Console.error("error: new: --with-api-routes and --no-api-routes contradict each other; give one")
        return yield* exitWith(2)
      }
      const invocation = yield* CliInvocation
      const result = yield* scaffoldExtension({
        id: options.id,
        path: Option.getOrUndefined(options.path),
        cwd: process.cwd(),
        preset: options.preset,
        apiRoutes: options.withApiRoutes ? true : options.noApiRoutes ? false : undefined,
        withAdminRoutes: options.withAdminRoutes,
        withAdmin: options.withAdmin,
        withMigrations: options.withMigrations,
        withTests: options.withTests,
        frameworkRoot: invocation.frameworkRoot,
        frameworkVersion
      })
      if (options.json) return yield* printJson(result)
      yield* Console.log(nextSteps(result, Option.getOrElse(options.path, () => result.id.split("/")[1]!)))
    })
).pipe(Command.withDescription("Scaffold a new extension (presets standard, backend, full, minimal)"))
