import { Either, Schema } from "effect"
import { extensionIdProblem } from "./Manifest.js"
import { VersionRange } from "./Version.js"
import { problem, problemsFromParseError, type Problem } from "./Problems.js"

// desired-state/extensions.yaml (docs/plan-format.md, docs/architecture.md "One reconcile"): what the panel should look like.

const Sha256 = Schema.String.pipe(
  Schema.filter((hex) => /^[0-9a-f]{64}$/i.test(hex) || `"${hex}" is not a sha256 hex digest (64 hex characters)`)
)

const NonEmptyPath = Schema.NonEmptyString

export const DesiredSource = Schema.Union(
  Schema.Literal("registry"),
  Schema.Struct({ path: NonEmptyPath }),
  Schema.Struct({ archive: NonEmptyPath, sha256: Schema.optional(Sha256) })
)
export type DesiredSource = typeof DesiredSource.Type

export const DesiredEntryObject = Schema.Struct({
  version: Schema.optional(VersionRange),
  source: Schema.optional(DesiredSource),
  // Which configured registry a registry source resolves in (docs/registry.md "Several registries").
  registry: Schema.optional(
    Schema.String.pipe(Schema.filter((name) => /^[a-z0-9][a-z0-9_-]{0,62}$/.test(name) || `"${name}" is not a registry name (like official)`))
  ),
  enabled: Schema.optional(Schema.Boolean),
  settings: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  protect: Schema.optional(Schema.Boolean)
})

/**
 * The full object, `"^1.4"` (shorthand), or `absent`. No value matches two of them, so their order only
 * decides which is tried first: the object, the common case, because every member tried before the one
 * that matches builds an issue that is thrown away (half of decoding a desired state of many entries;
 * docs/decisions.md "P4: the desired entry's object form is tried first").
 */
export const DesiredEntry = Schema.Union(DesiredEntryObject, Schema.Literal("absent"), VersionRange)

export const DesiredStateDocument = Schema.Struct({
  host: Schema.Union(Schema.String, Schema.Number).pipe(
    Schema.filter((value) =>
      String(value) === "1.0" || String(value) === "1" || `unsupported desired-state version "${value}" (supported: "1.0")`
    )
  ),
  prune: Schema.optional(Schema.Boolean),
  extensions: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.NullOr(DesiredEntry) }), {
    default: () => ({})
  })
})
export type DesiredStateDocument = typeof DesiredStateDocument.Type

export type ResolvedSource =
  | { readonly _tag: "Registry"; readonly registry?: string | undefined }
  | { readonly _tag: "Path"; readonly path: string }
  | { readonly _tag: "Archive"; readonly archive: string; readonly sha256: string | undefined }

export type DesiredExtension =
  | { readonly _tag: "Absent"; readonly id: string }
  | {
    readonly _tag: "Present"
    readonly id: string
    readonly version: string | undefined
    readonly source: ResolvedSource
    readonly enabled: boolean
    readonly settings: Readonly<Record<string, unknown>> | undefined
    readonly protect: boolean
  }

export interface DesiredState {
  readonly prune: boolean
  readonly extensions: ReadonlyArray<DesiredExtension>
}

/**
 * The plan's warning for an installed extension the desired state does not list: the plan reports it
 * in these words, and the admin's drift view, which finds such ids from the data, shows the same words.
 */
export const unlistedWarning = (id: string): string => `${id} is installed but not in the desired state (prune would remove it)`

const resolveSource = (source: DesiredSource | undefined, registry: string | undefined): ResolvedSource => {
  if (source === undefined || source === "registry") return registry === undefined ? { _tag: "Registry" } : { _tag: "Registry", registry }
  if ("path" in source) return { _tag: "Path", path: source.path }
  return { _tag: "Archive", archive: source.archive, sha256: source.sha256 }
}

/** Decodes a parsed desired-state file into one entry per extension (sorted by id). */
export const decodeDesiredState = (raw: unknown): Either.Either<DesiredState, ReadonlyArray<Problem>> => {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return Either.left([problem("(root)", "the desired-state file must be a YAML mapping with host and extensions")])
  }
  const decoded = Schema.decodeUnknownEither(DesiredStateDocument, { errors: "all" })(raw)
  if (Either.isLeft(decoded)) return Either.left(problemsFromParseError(decoded.left))
  const document = decoded.right
  const idProblems = Object.keys(document.extensions).flatMap((id) => {
    const message = extensionIdProblem(id)
    return message === undefined ? [] : [problem(`extensions.${id}`, message)]
  })
  if (idProblems.length > 0) return Either.left(idProblems)
  const registryProblems = Object.entries(document.extensions).flatMap(([id, entry]) =>
    entry !== null && typeof entry === "object" && entry.registry !== undefined && entry.source !== undefined && entry.source !== "registry"
      ? [problem(`extensions.${id}.registry`, `applies to a registry source only; remove it, or use source: registry`)]
      : []
  )
  if (registryProblems.length > 0) return Either.left(registryProblems)
  return Either.right({
    prune: document.prune ?? false,
    extensions: Object.keys(document.extensions).sort().map((id): DesiredExtension => {
      const entry = document.extensions[id]
      if (entry === "absent") return { _tag: "Absent", id }
      const full = typeof entry === "string" ? { version: entry } : entry ?? {}
      return {
        _tag: "Present",
        id,
        version: full.version,
        source: resolveSource(full.source, "registry" in full ? full.registry : undefined),
        enabled: full.enabled ?? true,
        settings: full.settings,
        protect: full.protect ?? false
      }
    })
  })
}

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** The names of `${VAR}` references in a value (deeply). */
export const envReferences = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return [...value.matchAll(ENV_REFERENCE)].map((match) => match[1]!)
  if (Array.isArray(value)) return value.flatMap(envReferences)
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(envReferences)
  return []
}

/** Replaces `${VAR}` from `env`; a missing variable is an error naming it. */
export const substituteEnv = (
  value: unknown,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<unknown, string> => {
  const missing = envReferences(value).filter((name) => env[name] === undefined)
  if (missing.length > 0) {
    return Either.left(`environment variable${missing.length > 1 ? "s" : ""} ${[...new Set(missing)].join(", ")} not set`)
  }
  const replace = (part: unknown): unknown => {
    if (typeof part === "string") return part.replace(ENV_REFERENCE, (_, name: string) => env[name]!)
    if (Array.isArray(part)) return part.map(replace)
    if (part !== null && typeof part === "object") {
      return Object.fromEntries(Object.entries(part).map(([key, inner]) => [key, replace(inner)]))
    }
    return part
  }
  return Either.right(replace(value))
}
