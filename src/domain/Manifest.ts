import { Either, type ParseResult, Schema } from "effect"
import semver from "semver"
import { HealthCheckDeclaration } from "./Health.js"
import { joinPath, problem, problemsFromParseError, type Problem } from "./Problems.js"
import { pelicanKeyClashes, pelicanPermissionKey } from "./PelicanPermissions.js"
import { resolveTaskCron, ScheduleTaskDeclaration, type ScheduledTask } from "./Schedules.js"
import { normalizeSettings, SettingsSection, type SettingField } from "./Settings.js"
import { isKnownSlot } from "./Slots.js"
import { SemverVersion, VersionRange } from "./Version.js"

// extension.yaml: one decoder, used by `host validate` and by every loader, so validate never passes
// what install refuses. Shapes are Schema; rules across fields are checked after decoding.

export const reservedVendors: ReadonlyArray<string> = ["host", "extensions", "slots", "config"]

const ID_SEGMENT = /^[a-z0-9]+(-[a-z0-9]+)*$/

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether `id` is an acceptable extension id, in one regular expression: one "/", each side a segment of at
 * most 64 characters, the vendor not reserved. A registry index checks thousands of ids in a short command,
 * where splitting each and testing its parts cost about seven times as much (docs/decisions.md
 * "registry:sync: fewer, larger steps"). `extensionIdProblem` below says the same by the parts, and why;
 * test/domain/manifest.test.ts holds the two to the same verdicts.
 */
const validExtensionId = new RegExp(
  `^(?!(?:${reservedVendors.map(escapeRegExp).join("|")})/)(?=[^/]{1,64}/[^/]{1,64}$)${ID_SEGMENT.source.slice(1, -1)}/${ID_SEGMENT.source.slice(1, -1)}$`
)
export const isExtensionId = (id: string): boolean => validExtensionId.test(id)

/** Why an extension id is not acceptable, or undefined when it is. */
export const extensionIdProblem = (id: string): string | undefined => {
  const parts = id.split("/")
  if (parts.length !== 2 || !ID_SEGMENT.test(parts[0]!) || !ID_SEGMENT.test(parts[1]!)) {
    return `"${id}" is not a valid extension id (expected <vendor>/<name>: lowercase letters and digits, words joined by single "-")`
  }
  const [vendor, name] = parts as [string, string]
  if (vendor.length > 64 || name.length > 64) return `"${id}": vendor and name are at most 64 characters each`
  if (reservedVendors.includes(vendor)) {
    return `"${id}": vendor "${vendor}" is reserved (${reservedVendors.join(", ")})`
  }
  return undefined
}

export const ExtensionId = Schema.String.pipe(
  Schema.filter((id) => extensionIdProblem(id) ?? true, { identifier: "ExtensionId" })
)

/** Paths inside the extension: relative, POSIX, never leaving the extension root. */
export const RelativePath = Schema.String.pipe(
  Schema.filter((path) => {
    if (path.trim() === "") return "path is empty"
    if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path)) return `"${path}" must be relative to the extension root`
    if (path.split(/[\\/]/).includes("..")) return `"${path}" must not contain ".." segments`
    return true
  })
)

export const Permission = Schema.String.pipe(
  Schema.filter((permission) =>
    /^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/.test(permission) ||
    `permission "${permission}" must have the shape <area>.<action> (lowercase, like analytics.view)`
  )
)

const ClassName = Schema.String.pipe(
  Schema.filter((name) =>
    /^\\?[A-Za-z_][A-Za-z0-9_]*(\\[A-Za-z_][A-Za-z0-9_]*)*$/.test(name) ||
    `"${name}" is not a fully qualified class name (like Acme\\Analytics\\AnalyticsExtension)`
  )
)

export const routeGroups = ["api-client", "admin", "web"] as const
export type RouteGroup = (typeof routeGroups)[number]

const RouteFiles = Schema.Record({ key: Schema.String, value: RelativePath }).pipe(
  Schema.filter((routes) => {
    const unknown = Object.keys(routes).filter((group) => !(routeGroups as ReadonlyArray<string>).includes(group))
    return unknown.length === 0 || `unknown route group "${unknown[0]}" (groups: ${routeGroups.join(", ")})`
  })
)

const SchemaVersion = Schema.Union(Schema.String, Schema.Number).pipe(
  Schema.filter((value) =>
    String(value) === "1.0" || String(value) === "1" || `unsupported manifest schema version "${value}" (supported: "1.0")`
  )
)

const CssClass = Schema.String.pipe(
  Schema.filter((name) => /^-?[_a-zA-Z][_a-zA-Z0-9-]*$/.test(name) || `"${name}" is not a CSS class name`)
)

/** At most this many `tags`, each at most this long (docs/authoring.md "The manifest"). */
export const maxTags = 20
export const maxTagLength = 32

/** One of `tags`: words a registry search finds the extension by (docs/registry.md). */
const Tag = Schema.String.pipe(
  Schema.filter((tag) => {
    if (tag.trim() === "") return "a tag must not be empty"
    if (tag.length > maxTagLength) return `tag "${tag.slice(0, maxTagLength)}…" is longer than ${maxTagLength} characters`
    if (tag !== tag.trim() || /[\u0000-\u001f\u007f]/.test(tag)) return `tag ${JSON.stringify(tag)} must not start or end with spaces or hold control characters`
    return true
  })
)

const Tags = Schema.Array(Tag).pipe(
  Schema.filter((tags) => tags.length <= maxTags || `at most ${maxTags} tags (there are ${tags.length})`)
)

/** `repository`: where the source lives, an http(s) URL; registry:build copies it into the index. */
const RepositoryUrl = Schema.String.pipe(
  Schema.filter((text) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return `"${text}" is not a URL (like https://github.com/acme/hello-world)`
    }
    return url.protocol === "https:" || url.protocol === "http:" || `"${text}" must be an http(s) URL (like https://github.com/acme/hello-world)`
  })
)

export const ManifestDocument = Schema.Struct({
  host: SchemaVersion,
  id: ExtensionId,
  name: Schema.NonEmptyString,
  version: SemverVersion,
  description: Schema.String,
  license: Schema.NonEmptyString,
  /** For the registry index (`host registry:build`) and its search; not used by the runtime. */
  tags: Schema.optional(Tags),
  repository: Schema.optional(RepositoryUrl),
  authors: Schema.optional(
    Schema.Array(Schema.Struct({
      name: Schema.NonEmptyString,
      email: Schema.optional(Schema.String),
      url: Schema.optional(Schema.String)
    }))
  ),
  requires: Schema.optional(Schema.Record({ key: Schema.String, value: VersionRange })),
  dependencies: Schema.optional(Schema.Record({ key: Schema.String, value: VersionRange })),
  capabilities: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  entrypoint: Schema.optional(ClassName),
  autoload: Schema.optional(Schema.Struct({ "psr-4": Schema.Record({ key: Schema.String, value: RelativePath }) })),
  backend: Schema.optional(Schema.Struct({
    routes: Schema.optional(RouteFiles),
    migrations: Schema.optional(RelativePath),
    permissions: Schema.optional(Schema.Array(Permission))
  })),
  frontend: Schema.optional(Schema.Struct({
    bundle: Schema.optional(RelativePath),
    styles: Schema.optional(RelativePath),
    css_isolation: Schema.optional(Schema.Struct({
      mode: Schema.Literal("root-class"),
      class: Schema.optional(CssClass)
    })),
    slots: Schema.optional(Schema.Unknown)
  })),
  admin: Schema.optional(Schema.Struct({ settings: Schema.optional(SettingsSection) })),
  health: Schema.optional(Schema.Struct({ checks: Schema.optional(Schema.Array(HealthCheckDeclaration)) })),
  schedules: Schema.optional(Schema.Struct({ tasks: Schema.optional(Schema.Array(ScheduleTaskDeclaration)) }))
})
export type ManifestDocument = typeof ManifestDocument.Type

/** A decoded manifest together with what is derived from it (normalized settings, schedules with cron). */
export interface Manifest {
  readonly document: ManifestDocument
  readonly id: string
  readonly vendor: string
  readonly name: string
  readonly version: string
  readonly settings: ReadonlyArray<SettingField>
  readonly schedules: ReadonlyArray<ScheduledTask>
  readonly permissions: ReadonlyArray<string>
}

export interface ManifestResult {
  /** The decoded document when its shape is right (even if cross-field rules failed). */
  readonly document: ManifestDocument | undefined
  /** Present only when there are no errors. */
  readonly manifest: Manifest | undefined
  readonly errors: ReadonlyArray<Problem>
  readonly warnings: ReadonlyArray<Problem>
}

const knownTopLevelKeys: ReadonlySet<string> = new Set(Object.keys(ManifestDocument.fields))
export const requiresKeys = ["host", "panel", "php", "node"] as const
const knownCapabilities = ["routes", "health", "schedules", "css_isolation"]

const checkSchedules = (document: ManifestDocument, errors: Array<Problem>): ReadonlyArray<ScheduledTask> => {
  const tasks: Array<ScheduledTask> = []
  const seen = new Set<string>()
  ;(document.schedules?.tasks ?? []).forEach((task, index) => {
    const path = joinPath("schedules.tasks", index)
    if (seen.has(task.id)) errors.push(problem(`${path}.id`, `duplicate task id "${task.id}"`))
    seen.add(task.id)
    Either.match(resolveTaskCron(task), {
      onLeft: (message) => errors.push(problem(task.cron !== undefined ? `${path}.cron` : `${path}.schedule`, message)),
      onRight: (cron) =>
        tasks.push({
          id: task.id,
          label: task.label,
          command: task.command,
          cron,
          withoutOverlapping: task.without_overlapping ?? false
        })
    })
  })
  return tasks
}

const checkHealth = (document: ManifestDocument, errors: Array<Problem>) => {
  const seen = new Set<string>()
  ;(document.health?.checks ?? []).forEach((check, index) => {
    if (seen.has(check.id)) errors.push(problem(joinPath("health.checks", index, "id"), `duplicate health check id "${check.id}"`))
    seen.add(check.id)
  })
}

const checkDeprecations = (document: ManifestDocument, warnings: Array<Problem>) => {
  if (document.capabilities !== undefined) {
    warnings.push(problem("capabilities", "capabilities is deprecated: capabilities are detected automatically; remove the section"))
    for (const [capability, range] of Object.entries(document.capabilities)) {
      if (!knownCapabilities.includes(capability)) {
        warnings.push(problem(`capabilities.${capability}`, `unknown capability "${capability}" (known: ${knownCapabilities.join(", ")})`))
      } else if (typeof range !== "string" || semver.validRange(range) === null) {
        warnings.push(problem(`capabilities.${capability}`, `capability version must be a range like ^1`))
      }
    }
    if ((document.schedules?.tasks?.length ?? 0) > 0 && schedulesIgnored(document)) {
      warnings.push(problem("capabilities", `capabilities is declared without "schedules: ^1", so the scheduled tasks are ignored`))
    }
  }
  const slots = document.frontend?.slots
  if (slots !== undefined) {
    warnings.push(problem("frontend.slots", "frontend.slots is deprecated: register slots with createExtension({ slots }) in the bundle"))
    const ids = Array.isArray(slots)
      ? slots.flatMap((entry) => (typeof entry === "string" ? [entry] : typeof entry === "object" && entry !== null && "slot" in entry ? [String(entry.slot)] : []))
      : typeof slots === "object" && slots !== null ? Object.keys(slots) : []
    for (const id of ids) {
      if (!isKnownSlot(id)) warnings.push(problem("frontend.slots", `unknown slot id "${id}"`))
    }
  }
}

const checkRequires = (document: ManifestDocument, frameworkVersion: string | undefined, warnings: Array<Problem>) => {
  for (const key of Object.keys(document.requires ?? {})) {
    if (!(requiresKeys as ReadonlyArray<string>).includes(key)) {
      warnings.push(problem(`requires.${key}`, `unknown requirement "${key}" (known: ${requiresKeys.join(", ")})`))
    }
  }
  const hostRange = document.requires?.host
  if (hostRange !== undefined && frameworkVersion !== undefined && !semver.satisfies(frameworkVersion, hostRange)) {
    warnings.push(problem("requires.host", `this framework is ${frameworkVersion}, which does not satisfy "${hostRange}": install will be refused`))
  }
}

/**
 * The document's decoder, made on first use (making it builds the schema's parser, which a command that
 * decodes no manifest should not pay at load) and kept: one per call cost a registry build a lookup of the
 * memoised parser per archive.
 */
let documentDecoder: ((raw: unknown) => Either.Either<ManifestDocument, ParseResult.ParseError>) | undefined
const decodeManifestDocument = (raw: unknown) =>
  (documentDecoder ??= Schema.decodeUnknownEither(ManifestDocument, { errors: "all" }))(raw)

/**
 * Decodes and checks a parsed `extension.yaml`. Pure: file checks are the caller's (see `resolveLayout`).
 * `frameworkVersion`, when given, adds a warning if `requires.host` excludes it.
 */
export const decodeManifest = (raw: unknown, frameworkVersion?: string): ManifestResult => {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return {
      document: undefined,
      manifest: undefined,
      errors: [problem("(root)", "the manifest must be a YAML mapping of keys to values")],
      warnings: []
    }
  }
  const warnings: Array<Problem> = Object.keys(raw)
    .filter((key) => !knownTopLevelKeys.has(key))
    .map((key) => problem(key, `unknown top-level key "${key}" is ignored`))
  const decoded = decodeManifestDocument(raw)
  if (Either.isLeft(decoded)) {
    return { document: undefined, manifest: undefined, errors: problemsFromParseError(decoded.left), warnings }
  }
  const document = decoded.right
  const errors: Array<Problem> = []
  const settings = document.admin?.settings !== undefined
    ? normalizeSettings(document.admin.settings)
    : { fields: [], errors: [], warnings: [] }
  errors.push(...settings.errors)
  warnings.push(...settings.warnings)
  const schedules = checkSchedules(document, errors)
  checkHealth(document, errors)
  for (const dependency of Object.keys(document.dependencies ?? {})) {
    const idProblem = extensionIdProblem(dependency)
    if (idProblem !== undefined) errors.push(problem(`dependencies.${dependency}`, idProblem))
    else if (dependency === document.id) errors.push(problem(`dependencies.${dependency}`, "an extension cannot depend on itself"))
  }
  const permissions = document.backend?.permissions ?? []
  permissions.forEach((permission, index) => {
    if (permissions.indexOf(permission) !== index) {
      warnings.push(problem(joinPath("backend.permissions", index), `duplicate permission "${permission}"`))
    }
  })
  for (const [first, second] of pelicanKeyClashes(permissions)) {
    errors.push(problem(
      joinPath("backend.permissions", permissions.indexOf(second)),
      `permissions "${first}" and "${second}" are one permission on Pelican (${pelicanPermissionKey(second)}): rename one`
    ))
  }
  checkDeprecations(document, warnings)
  checkRequires(document, frameworkVersion, warnings)
  const [vendor, name] = document.id.split("/") as [string, string]
  const manifest: Manifest = {
    document,
    id: document.id,
    vendor,
    name,
    version: document.version,
    settings: settings.fields,
    schedules: schedulesIgnored(document) ? [] : schedules,
    permissions: [...new Set(permissions)]
  }
  return { document, manifest: errors.length === 0 ? manifest : undefined, errors, warnings }
}

/** A deprecated `capabilities` section without a `schedules` range that accepts 1 turns the tasks off. */
const schedulesIgnored = (document: ManifestDocument): boolean => {
  if (document.capabilities === undefined) return false
  const range = document.capabilities.schedules
  return typeof range !== "string" || semver.validRange(range) === null || !semver.satisfies("1.0.0", range)
}

// ---- Entrypoint (PSR-4) and conventional file layout ----------------------------------------------

/** `server-analytics` → `ServerAnalytics`. */
export const studly = (value: string): string =>
  value
    .split("-")
    .filter((part) => part !== "")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")

/** `Studly(vendor)\Studly(name)\Studly(name)Extension`, without a doubled `Extension`. */
export const defaultEntrypointClass = (id: string): string => {
  const [vendor, name] = id.split("/") as [string, string]
  const className = studly(name).endsWith("Extension") ? studly(name) : `${studly(name)}Extension`
  return `${studly(vendor)}\\${studly(name)}\\${className}`
}

const normalizeNamespace = (prefix: string) => prefix.replace(/^\\+/, "").replace(/\\*$/, "\\")
const normalizeDirectory = (directory: string) => directory.replace(/^\.\//, "").replace(/\/*$/, "")

export const moduleExtensions = ["ts", "js", "mjs"] as const

/**
 * The module candidates a class maps to under PSR-4: the longest matching namespace prefix, the rest of
 * the class name as a path below its directory, tried with `.ts`, `.js` and `.mjs`.
 */
export const psr4Candidates = (className: string, mappings: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const fqcn = className.replace(/^\\+/, "")
  const prefixes = Object.keys(mappings)
    .map((prefix) => [normalizeNamespace(prefix), mappings[prefix]!] as const)
    .filter(([prefix]) => prefix === "\\" || fqcn.startsWith(prefix))
    .sort(([a], [b]) => b.length - a.length)
  const match = prefixes[0]
  if (match === undefined) return []
  const [prefix, directory] = match
  const relative = (prefix === "\\" ? fqcn : fqcn.slice(prefix.length)).split("\\").join("/")
  const base = normalizeDirectory(directory)
  return moduleExtensions.map((extension) => `${base === "" ? "" : `${base}/`}${relative}.${extension}`)
}

export type EntrypointResolution =
  | { readonly _tag: "Class"; readonly className: string; readonly exportName: string; readonly module: string }
  | { readonly _tag: "PackageJson"; readonly module: string }
  | { readonly _tag: "None" }
  | { readonly _tag: "Missing"; readonly className: string; readonly candidates: ReadonlyArray<string> }

const inferredMapping = (id: string): Record<string, string> => {
  const [vendor, name] = id.split("/") as [string, string]
  return { [`${studly(vendor)}\\${studly(name)}\\`]: "src/" }
}

/**
 * Resolves the backend entrypoint (README, docs/backend.md): explicit `entrypoint` via `autoload` (or the inferred
 * mapping); else the default class name; else package.json `host.entrypoint`; else none.
 * An explicit entrypoint that resolves to no file is `Missing`.
 */
export const resolveEntrypoint = (
  document: ManifestDocument,
  fileExists: (path: string) => boolean,
  packageEntrypoint: string | undefined
): EntrypointResolution => {
  const mappings = document.autoload?.["psr-4"] ?? inferredMapping(document.id)
  const className = (document.entrypoint ?? defaultEntrypointClass(document.id)).replace(/^\\+/, "")
  const candidates = psr4Candidates(className, mappings)
  const found = candidates.find(fileExists)
  const exportName = className.split("\\").pop()!
  if (found !== undefined) return { _tag: "Class", className, exportName, module: found }
  if (document.entrypoint !== undefined) return { _tag: "Missing", className, candidates }
  if (packageEntrypoint !== undefined) return { _tag: "PackageJson", module: packageEntrypoint }
  return { _tag: "None" }
}

export interface ExtensionLayout {
  readonly routes: Readonly<Partial<Record<RouteGroup, string>>>
  readonly migrations: string | undefined
  readonly bundle: string | undefined
  readonly styles: string | undefined
}

const defaultBundles = [
  "resources/frontend/dist/extension",
  "resources/frontend/dist/bundle",
  "dist/extension",
  "dist/bundle"
]

/**
 * Where the extension's parts are: declared paths win (kept even if missing, so checks can name them),
 * else the conventional locations that exist.
 */
export const resolveLayout = (
  document: ManifestDocument,
  fileExists: (path: string) => boolean,
  directoryExists: (path: string) => boolean
): ExtensionLayout => {
  const routes: Partial<Record<RouteGroup, string>> = {}
  const declaredRoutes = document.backend?.routes
  if (declaredRoutes !== undefined) {
    for (const [group, path] of Object.entries(declaredRoutes)) routes[group as RouteGroup] = path
  } else {
    for (const group of routeGroups) {
      const found = ["ts", "js"].map((extension) => `src/routes/${group}.${extension}`).find(fileExists)
      if (found !== undefined) routes[group] = found
    }
  }
  const conventionalMigrations = directoryExists("database/migrations") ? "database/migrations" : undefined
  return {
    routes,
    migrations: document.backend?.migrations ?? conventionalMigrations,
    bundle: document.frontend?.bundle ?? defaultBundles.map((base) => `${base}.js`).find(fileExists),
    styles: document.frontend?.styles ?? defaultBundles.map((base) => `${base}.css`).find(fileExists)
  }
}

/** The CSS isolation root class: `css_isolation.class`, else `host-ext--<vendor>-<name>`. */
export const isolationClass = (document: ManifestDocument): string =>
  document.frontend?.css_isolation?.class ?? `host-ext--${document.id.replace("/", "-")}`

/** The migration names (file names without extension) directly in `folder` among an archive's or tree's file paths. */
export const migrationNames = (files: ReadonlyArray<string>, folder: string | undefined): ReadonlyArray<string> =>
  folder === undefined
    ? []
    : files
      .filter((file) => file.startsWith(`${folder.replace(/\/$/, "")}/`) && !file.slice(folder.length + 1).includes("/"))
      .map((file) => file.slice(folder.length + 1))
      .filter((name) => [".sql", ...moduleExtensions.map((extension) => `.${extension}`)].some((ext) => name.endsWith(ext)))
      .map((name) => name.replace(/\.[^.]+$/, ""))
