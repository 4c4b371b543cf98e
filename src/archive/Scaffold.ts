import { FileSystem, Path } from "@effect/platform"
import { Data, Effect } from "effect"
import { Eta } from "eta"
import { defaultEntrypointClass, extensionIdProblem, studly } from "../domain/Manifest.js"

// `host new` (docs/authoring.md, "Scaffold"): renders the templates of src/archive/scaffold/ with Eta
// for one preset and its flags. Every file is rendered in memory first and written into a temporary
// folder beside the target, which is then renamed into place: a refused or failed scaffold leaves
// nothing behind, and an existing non-empty folder is never touched.

export const presets = ["standard", "backend", "full", "minimal"] as const
export type Preset = (typeof presets)[number]

/** What a scaffold holds. */
export interface ScaffoldParts {
  readonly frontend: boolean
  readonly api: boolean
  readonly adminRoutes: boolean
  /** Admin settings (the admin UI renders their form). */
  readonly admin: boolean
  readonly migrations: boolean
  readonly tests: boolean
}

const presetParts: Readonly<Record<Preset, ScaffoldParts>> = {
  standard: { frontend: true, api: true, adminRoutes: false, admin: false, migrations: false, tests: false },
  backend: { frontend: false, api: true, adminRoutes: false, admin: false, migrations: false, tests: false },
  full: { frontend: true, api: true, adminRoutes: true, admin: true, migrations: true, tests: true },
  minimal: { frontend: false, api: false, adminRoutes: false, admin: false, migrations: false, tests: false }
}

export interface ScaffoldFlags {
  /** `--with-api-routes` (true) / `--no-api-routes` (false); undefined keeps the preset's choice. */
  readonly apiRoutes?: boolean | undefined
  readonly withAdminRoutes?: boolean
  readonly withAdmin?: boolean
  readonly withMigrations?: boolean
  readonly withTests?: boolean
}

/** The preset's parts with the flags applied: flags only add, except `--no-api-routes`. */
export const resolveParts = (preset: Preset, flags: ScaffoldFlags): ScaffoldParts => {
  const base = presetParts[preset]
  return {
    frontend: base.frontend,
    api: flags.apiRoutes ?? base.api,
    adminRoutes: base.adminRoutes || flags.withAdminRoutes === true,
    admin: base.admin || flags.withAdmin === true,
    migrations: base.migrations || flags.withMigrations === true,
    tests: base.tests || flags.withTests === true
  }
}

export class ScaffoldRefused extends Data.TaggedError("ScaffoldRefused")<{
  readonly target: string
  readonly detail: string
}> {
  override get message() {
    return `${this.target}: ${this.detail}; nothing was written`
  }
}

export interface ScaffoldOptions extends ScaffoldFlags {
  readonly id: string
  /** The folder to write; default `<cwd>/<name>`. */
  readonly path?: string | undefined
  readonly cwd: string
  readonly preset: Preset
  /** The framework's folder: templates, and the paths the scaffold's tsconfig and tests point at. */
  readonly frameworkRoot: string
  readonly frameworkVersion: string
}

export interface ScaffoldResult {
  readonly id: string
  readonly preset: Preset
  readonly parts: ScaffoldParts
  /** The extension folder (absolute). */
  readonly path: string
  /** What was written, relative to `path`, sorted. */
  readonly files: ReadonlyArray<string>
}

const titleOf = (segment: string) =>
  segment.split("-").filter((part) => part !== "").map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join(" ")

/** Paths into the framework that the scaffold's tsconfig, vitest config and README name. */
const frameworkPaths = (root: string, path: Path.Path) => {
  const modules = path.join(root, "node_modules")
  return {
    framework: root,
    typeRoots: path.join(modules, "@types"),
    tscBin: path.join(modules, "typescript", "bin", "tsc"),
    vitestBin: path.join(modules, "vitest", "vitest.mjs"),
    vitestJs: path.join(modules, "vitest", "dist", "index.js"),
    sdkTestingJs: path.join(root, "sdk", "dist", "testing.js"),
    tsPaths: {
      "@host/sdk": [path.join(root, "sdk", "src", "index.ts")],
      "@host/sdk/server": [path.join(root, "sdk", "src", "server.ts")],
      "@host/sdk/testing": [path.join(root, "sdk", "src", "testing.ts")],
      react: [path.join(modules, "@types", "react", "index.d.ts")],
      "react/jsx-runtime": [path.join(modules, "@types", "react", "jsx-runtime.d.ts")],
      vitest: [path.join(modules, "vitest", "dist", "index.d.ts")]
    }
  }
}

/** Template (under src/archive/scaffold) → file written, for the parts a scaffold has. */
const fileList = (parts: ScaffoldParts, names: { readonly className: string; readonly widgetName: string; readonly table: string }) => {
  const files: Array<readonly [template: string, output: string]> = [
    ["extension.yaml.eta", "extension.yaml"],
    ["README.md.eta", "README.md"],
    ["package.json.eta", "package.json"],
    ["tsconfig.json.eta", "tsconfig.json"],
    ["gitignore.eta", ".gitignore"],
    ["Extension.ts.eta", `src/${names.className}.ts`]
  ]
  if (parts.api || parts.adminRoutes) files.push(["types.ts.eta", "src/types.ts"])
  if (parts.api) files.push(["routes/api-client.ts.eta", "src/routes/api-client.ts"])
  if (parts.adminRoutes) files.push(["routes/admin.ts.eta", "src/routes/admin.ts"])
  if (parts.migrations) files.push(["migration.ts.eta", `database/migrations/2026_01_01_000000_create_${names.table}.ts`])
  if (parts.frontend) {
    files.push(
      ["frontend/index.tsx.eta", "resources/frontend/src/index.tsx"],
      ["frontend/Widget.tsx.eta", `resources/frontend/src/components/${names.widgetName}.tsx`],
      ["frontend/ServerPage.tsx.eta", "resources/frontend/src/pages/ServerPage.tsx"],
      ["frontend/styles.css.eta", "resources/frontend/src/styles.css"]
    )
  }
  if (parts.tests) {
    files.push(["tests/extension.test.ts.eta", "tests/extension.test.ts"], ["tests/vitest.config.mjs.eta", "vitest.config.mjs"])
  }
  return files
}

/** A line holding only a control tag (`<% if (…) { %>`) leaves no blank line in the output. */
const controlLines = (template: string) => template.replace(/^[ \t]*(<%(?![=~])[^\n]*?%>)[ \t]*\n/gm, "$1")

/** One scaffold under way: the request, the folder it writes, and the names derived from the id. */
interface Scaffolding {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly options: ScaffoldOptions
  readonly target: string
  readonly vendor: string
  readonly name: string
  readonly names: { readonly className: string; readonly widgetName: string; readonly table: string }
}

/** The scaffold of `options.id`, refused when the id is not valid or its name cannot name a class. */
const scaffolding = (fs: FileSystem.FileSystem, path: Path.Path, options: ScaffoldOptions) =>
  Effect.gen(function*() {
    const idProblem = extensionIdProblem(options.id)
    const [vendor = "", name = ""] = options.id.split("/")
    const target = path.resolve(options.cwd, options.path ?? name)
    if (idProblem !== undefined) return yield* new ScaffoldRefused({ target, detail: idProblem })
    const className = defaultEntrypointClass(options.id).split("\\").pop()!
    if (!/^[A-Za-z_$]/.test(className)) {
      return yield* new ScaffoldRefused({ target, detail: `the name "${name}" must start with a letter: it names the class ${className}` })
    }
    const names = { className, widgetName: `${studly(name)}Widget`, table: `ext_${vendor}_${name}_visits`.replace(/-/g, "_") }
    return { fs, path, options, target, vendor, name, names } satisfies Scaffolding
  })

/** An existing folder must be empty; anything in it (even a dotfile) refuses the whole scaffold. */
const requireEmptyTarget = ({ fs, target }: Scaffolding) =>
  Effect.gen(function*() {
    const existing = yield* fs.stat(target).pipe(Effect.option)
    if (existing._tag === "None") return
    if (existing.value.type !== "Directory") return yield* new ScaffoldRefused({ target, detail: "exists and is not a folder" })
    const entries = yield* fs.readDirectory(target).pipe(
      Effect.mapError((error) => new ScaffoldRefused({ target, detail: `cannot be read (${error.message})` }))
    )
    if (entries.length > 0) {
      return yield* new ScaffoldRefused({
        target,
        detail: `the folder is not empty (${entries.length} entr${entries.length === 1 ? "y" : "ies"}); choose another --path`
      })
    }
  })

/** The package.json scripts: build only with a frontend, test only with tests. */
const packageScripts = (parts: ScaffoldParts, paths: ReturnType<typeof frameworkPaths>): Record<string, string> => ({
  ...(parts.frontend ? { build: "host build", "build:watch": "host build --watch" } : {}),
  validate: "host validate --strict",
  export: "host export",
  dev: "host dev . --link --watch",
  typecheck: `node ${paths.tscBin} -p .`,
  ...(parts.tests ? { test: `node ${paths.vitestBin} run` } : {})
})

/** What the templates see. */
const templateData = ({ name, names, options, path, vendor }: Scaffolding, parts: ScaffoldParts) => {
  const paths = frameworkPaths(options.frameworkRoot, path)
  const [major, minor] = options.frameworkVersion.split(".")
  const tsInclude = [
    "src",
    ...(parts.migrations ? ["database"] : []),
    ...(parts.frontend ? ["resources/frontend/src"] : []),
    ...(parts.tests ? ["tests"] : [])
  ]
  return {
    id: options.id,
    vendor,
    name,
    preset: options.preset,
    title: titleOf(name),
    vendorTitle: titleOf(vendor),
    namespace: `${studly(vendor)}\\${studly(name)}`,
    ...names,
    cssPrefix: `${vendor}-${name}`,
    hostMajorMinor: `${major ?? "1"}.${minor ?? "0"}`,
    tsInclude,
    paths,
    packageJson: {
      name: `@${vendor}/${name}`,
      version: "0.1.0",
      private: true,
      type: "module",
      description: `${titleOf(name)}: a Host extension (host new --preset ${options.preset})`,
      scripts: packageScripts(parts, paths)
    },
    ...parts
  }
}

/** Every file of the scaffold rendered in memory, as [path in the extension, text]. */
const renderFiles = (scaffold: Scaffolding, parts: ScaffoldParts) => {
  const { fs, options, path, target } = scaffold
  const data = templateData(scaffold, parts)
  const templates = path.join(options.frameworkRoot, "src", "archive", "scaffold")
  const eta = new Eta({ autoEscape: false, autoTrim: false, useWith: false })
  return Effect.forEach(fileList(parts, scaffold.names), ([template, output]) =>
    fs.readFileString(path.join(templates, template)).pipe(
      Effect.map((text) => [output, eta.renderString(controlLines(text), data).replace(/\n{3,}/g, "\n\n")] as const),
      Effect.mapError((error) => new ScaffoldRefused({ target, detail: `template ${template} is unreadable (${error.message})` }))
    ))
}

/** Writes the files into a folder beside the target and renames it into place; a failure removes it. */
const writeStaged = ({ fs, path, target }: Scaffolding, rendered: ReadonlyArray<readonly [output: string, text: string]>) => {
  const staging = path.join(path.dirname(target), `.${path.basename(target)}.host-new-${process.pid}`)
  const write = Effect.gen(function*() {
    for (const [output, text] of rendered) {
      const file = path.join(staging, output)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      yield* fs.writeFileString(file, text)
    }
    // rename(2) replaces an empty folder, so `--path` may name one that exists.
    yield* fs.rename(staging, target)
  })
  return write.pipe(
    Effect.mapError((error) => new ScaffoldRefused({ target, detail: `could not be written (${error.message})` })),
    Effect.tapError(() => Effect.ignore(fs.remove(staging, { recursive: true })))
  )
}

export const scaffoldExtension = Effect.fn("Scaffold.new")(function*(options: ScaffoldOptions) {
  const scaffold = yield* scaffolding(yield* FileSystem.FileSystem, yield* Path.Path, options)
  yield* requireEmptyTarget(scaffold)
  const parts = resolveParts(options.preset, options)
  const rendered = yield* renderFiles(scaffold, parts)
  yield* writeStaged(scaffold, rendered)
  return {
    id: options.id,
    preset: options.preset,
    parts,
    path: scaffold.target,
    files: rendered.map(([output]) => output).sort()
  } satisfies ScaffoldResult
})
