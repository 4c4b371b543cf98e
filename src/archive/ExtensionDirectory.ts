import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { posix } from "node:path"
import {
  decodeManifest,
  type ExtensionLayout,
  type Manifest,
  type ManifestDocument,
  resolveEntrypoint,
  resolveLayout
} from "../domain/Manifest.js"
import { problem, type Problem, type ValidationReport } from "../domain/Problems.js"
import { manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { bundleSlotReferences, isKnownSlot } from "../domain/Slots.js"
import { listFiles } from "./Tree.js"
import { pathHasServer, scanPermissionRoutes } from "../domain/RouteScan.js"

// An extension directory on disk: find and decode its manifest, resolve its layout, and check that
// everything the manifest declares is really there (`host validate`, and every loader before install).

export interface DirectoryValidation extends ValidationReport {
  readonly root: string
  /** Present when there are no errors. */
  readonly manifest: Manifest | undefined
  readonly layout: ExtensionLayout | undefined
}

const PackageJson = Schema.Struct({
  host: Schema.optional(Schema.Struct({ entrypoint: Schema.optional(Schema.String) }))
})

const migrationModuleExtensions = [".ts", ".js", ".mjs"]
const CREATE_TABLE = /create\s+table\s+(?:if\s+not\s+exists\s+)?[`"[]?([A-Za-z0-9_]+)/gi
/** The id a prebuilt bundle gives `createExtension({ id })` (static scan; also `host doctor`). */
export const CREATE_EXTENSION_ID = /createExtension\)?\s*\(\s*\{[\s\S]{0,400}?\bid\s*:\s*(["'`])([^"'`]+)\1/

/** Within the manifest limits, linear in the text (domain/YamlText); alias errors are problems too. */
const parseManifestYaml = (text: string): { raw: unknown; errors: ReadonlyArray<Problem> } =>
  Either.match(readYaml(text, manifestYamlLimits), {
    onLeft: (errors) => ({ raw: undefined, errors }),
    onRight: (raw) => ({ raw, errors: [] })
  })

/** Finds `extension.yaml`: `target` is the extension folder or the manifest file itself. */
const locateRoot = Effect.fn("ExtensionDirectory.locate")(function*(target: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const absolute = path.resolve(target)
  const info = yield* fs.stat(absolute).pipe(Effect.option)
  if (info._tag === "None") return { root: absolute, problem: problem("(path)", `${target} does not exist`) }
  if (info.value.type === "File") {
    return path.basename(absolute) === "extension.yaml" || path.basename(absolute) === "extension.yml"
      ? { root: path.dirname(absolute), problem: undefined }
      : { root: absolute, problem: problem("(path)", `${target} is a file, not an extension folder or extension.yaml`) }
  }
  const manifestExists = yield* fs.exists(path.join(absolute, "extension.yaml"))
  return manifestExists
    ? { root: absolute, problem: undefined }
    : { root: absolute, problem: problem("extension.yaml", `not found in ${absolute}`) }
})

/** One directory being checked against its manifest; the problems found are pushed onto `errors` and `warnings`. */
interface DirectoryCheck {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly root: string
  readonly document: ManifestDocument
  readonly files: ReadonlySet<string>
  readonly fileExists: (file: string) => boolean
  readonly directoryExists: (directory: string) => boolean
  readonly errors: Array<Problem>
  readonly warnings: Array<Problem>
}

/** The route files, migrations folder, bundle and stylesheet the manifest names must exist. */
const checkDeclaredPaths = ({ directoryExists, document, errors, fileExists }: DirectoryCheck) => {
  for (const [group, file] of Object.entries(document.backend?.routes ?? {})) {
    if (!fileExists(file)) errors.push(problem(`backend.routes.${group}`, `route file "${file}" does not exist`))
  }
  if (document.backend?.migrations !== undefined && !directoryExists(document.backend.migrations)) {
    errors.push(problem("backend.migrations", `migrations folder "${document.backend.migrations}" does not exist`))
  }
  if (document.frontend?.bundle !== undefined && !fileExists(document.frontend.bundle)) {
    errors.push(problem("frontend.bundle", `bundle "${document.frontend.bundle}" does not exist (build the frontend first)`))
  }
  if (document.frontend?.styles !== undefined && !fileExists(document.frontend.styles)) {
    errors.push(problem("frontend.styles", `stylesheet "${document.frontend.styles}" does not exist`))
  }
}

/** package.json's `host.entrypoint`; a package.json that is not JSON is a warning. */
const packageEntrypoint = ({ fs, path, root, warnings }: DirectoryCheck) =>
  fs.readFileString(path.join(root, "package.json")).pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(PackageJson))),
    Effect.map((pkg): string | undefined => pkg.host?.entrypoint),
    Effect.catchAll(() =>
      Effect.sync((): string | undefined => {
        warnings.push(problem("package.json", "cannot be read as JSON; its host.entrypoint is ignored"))
        return undefined
      })
    )
  )

/** The entrypoint class must map to a file, as must a module package.json names. */
const checkEntrypoint = (check: DirectoryCheck) =>
  Effect.gen(function*() {
    const fromPackage = check.files.has("package.json") ? yield* packageEntrypoint(check) : undefined
    const entrypoint = resolveEntrypoint(check.document, check.fileExists, fromPackage)
    if (entrypoint._tag === "Missing") {
      check.errors.push(problem(
        "entrypoint",
        `class ${entrypoint.className} maps to ${entrypoint.candidates.join(", ") || "no autoload directory"}; none exists`
      ))
    } else if (entrypoint._tag === "PackageJson" && !check.fileExists(entrypoint.module)) {
      check.errors.push(problem("package.json", `host.entrypoint "${entrypoint.module}" does not exist`))
    }
  })

/** A prebuilt bundle registers the manifest's id, and into slots that exist. */
const checkBundle = ({ document, errors, fileExists, fs, path, root, warnings }: DirectoryCheck, layout: ExtensionLayout) =>
  Effect.gen(function*() {
    if (layout.bundle === undefined || !fileExists(layout.bundle)) return
    const bundle = yield* fs.readFileString(path.join(root, layout.bundle))
    const registered = CREATE_EXTENSION_ID.exec(bundle)?.[2]
    if (registered !== undefined && registered !== document.id) {
      errors.push(problem(
        document.frontend?.bundle !== undefined ? "frontend.bundle" : "id",
        `the bundle ${layout.bundle} calls createExtension with id "${registered}", but the manifest id is "${document.id}"`
      ))
    }
    for (const slot of bundleSlotReferences(bundle)) {
      if (!isKnownSlot(slot)) warnings.push(problem("frontend.bundle", `${layout.bundle} registers into unknown slot "${slot}"`))
    }
  })

/** One file of the migrations folder: a migration by its extension, an `-- up` section in SQL, prefixed tables. */
const checkMigrationFile = (
  { errors, fs, path, root, warnings }: DirectoryCheck,
  file: string,
  at: { readonly path: string; readonly prefixes: ReadonlyArray<string> }
) =>
  Effect.gen(function*() {
    const extension = path.extname(file)
    if (extension !== ".sql" && !migrationModuleExtensions.includes(extension)) {
      warnings.push(problem(at.path, `${file} is not a migration (.ts, .js, .mjs or .sql) and is ignored`))
      return
    }
    const text = yield* fs.readFileString(path.join(root, file))
    if (extension === ".sql" && !/^\s*--\s*up\b/im.test(text)) {
      errors.push(problem(at.path, `${file} has no "-- up" section`))
    }
    for (const match of text.matchAll(CREATE_TABLE)) {
      const table = match[1]!
      if (!at.prefixes.some((prefix) => table.toLowerCase().startsWith(prefix))) {
        warnings.push(problem(at.path, `${file} creates table "${table}"; prefix extension tables with ${at.prefixes.join(" or ")}`))
      }
    }
  })

/** Every file directly in the migrations folder, in name order. */
const checkMigrations = (check: DirectoryCheck, layout: ExtensionLayout) =>
  Effect.gen(function*() {
    if (layout.migrations === undefined || !check.directoryExists(layout.migrations)) return
    const { document } = check
    const prefixes = ["ext_", `${document.id.split("/")[0]!.replace(/-/g, "_")}_`]
    const migrationFiles = [...check.files].filter((file) => posix.dirname(file) === posix.normalize(layout.migrations!))
    const migrationsPath = document.backend?.migrations !== undefined ? "backend.migrations" : "database/migrations"
    for (const file of migrationFiles.sort()) yield* checkMigrationFile(check, file, { path: migrationsPath, prefixes })
  })

const checkFiles = Effect.fn("ExtensionDirectory.checkFiles")(function*(
  root: string,
  document: ManifestDocument,
  files: ReadonlySet<string>,
  directories: ReadonlySet<string>,
  errors: Array<Problem>,
  warnings: Array<Problem>
) {
  const fileExists = (file: string) => files.has(posix.normalize(file))
  const directoryExists = (directory: string) => directories.has(posix.normalize(directory).replace(/\/$/, ""))
  const check: DirectoryCheck = {
    fs: yield* FileSystem.FileSystem,
    path: yield* Path.Path,
    root,
    document,
    files,
    fileExists,
    directoryExists,
    errors,
    warnings
  }
  const layout = resolveLayout(document, fileExists, directoryExists)
  checkDeclaredPaths(check)
  yield* checkEntrypoint(check)
  yield* checkBundle(check, layout)
  yield* checkMigrations(check, layout)
  return layout
})

/** Every directory that contains a listed file (POSIX, relative). */
const directoriesOf = (files: ReadonlyArray<string>): ReadonlySet<string> => {
  const directories = new Set<string>()
  for (const file of files) {
    const parts = file.split("/")
    for (let index = 1; index < parts.length; index++) directories.add(parts.slice(0, index).join("/"))
  }
  return directories
}

/**
 * Validates an extension folder: manifest shape and rules, settings, schedules, health checks, and
 * that declared files exist. Never fails: unreadable input is reported as errors.
 */
export const validateDirectory = Effect.fn("ExtensionDirectory.validate")(function*(
  target: string,
  frameworkVersion: string
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const located = yield* locateRoot(target)
  const empty = (errors: ReadonlyArray<Problem>, warnings: ReadonlyArray<Problem> = []): DirectoryValidation => ({
    root: located.root,
    manifest: undefined,
    layout: undefined,
    errors,
    warnings
  })
  if (located.problem !== undefined) return empty([located.problem])
  const text = yield* fs.readFileString(path.join(located.root, "extension.yaml"))
  const parsed = parseManifestYaml(text)
  if (parsed.errors.length > 0) return empty(parsed.errors)
  const decoded = decodeManifest(parsed.raw, frameworkVersion)
  if (decoded.document === undefined) return empty(decoded.errors, decoded.warnings)
  const errors = [...decoded.errors]
  const warnings = [...decoded.warnings]
  const files = yield* listFiles(located.root)
  const layout = yield* checkFiles(located.root, decoded.document, new Set(files), directoriesOf(files), errors, warnings)
  // A permission on a route without {server} is held by every server owner under a real panel (DESIGN §24).
  // The admin group is for panel administrators, who hold every permission anyway.
  for (const [group, file] of Object.entries(layout.routes)) {
    if (group === "admin" || file === undefined || !files.includes(posix.normalize(file))) continue
    const source = yield* fs.readFileString(path.join(located.root, file))
    for (const route of scanPermissionRoutes(source)) {
      if (pathHasServer(route.path)) continue
      warnings.push(problem(
        `backend.routes.${group}`,
        `route ${route.method} ${route.path} in ${file} requires permission "${route.permission}" but has no {server} in its path: ` +
          `under a real panel every server owner holds it (the permission is checked against any server the user owns); ` +
          `put {server} in the path to check it on one server (docs/authoring.md "Routes")`
      ))
    }
  }
  return {
    root: located.root,
    manifest: errors.length === 0 ? decoded.manifest : undefined,
    layout: errors.length === 0 ? layout : undefined,
    errors,
    warnings
  } satisfies DirectoryValidation
}, (effect, target) =>
  Effect.catchAll(effect, (error) =>
    Effect.succeed<DirectoryValidation>({
      root: target,
      manifest: undefined,
      layout: undefined,
      errors: [problem("(path)", `cannot read ${target}: ${error.message}`)],
      warnings: []
    })))
