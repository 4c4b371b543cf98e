import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Either, Layer, Schema } from "effect"
import packageJson from "../../package.json" with { type: "json" }
import { ConfigInvalid, RootNotFound } from "../domain/Errors.js"
import { statIfExists } from "./LocalFiles.js"
import { SemverVersion } from "../domain/Version.js"
import { formatPath, problem, problemsFromParseError, type Problem } from "../domain/Problems.js"

// config/host.yaml (README "Configuration", docs/architecture.md), overridden by environment variables, decoded with Schema.

export const frameworkVersion: string = packageJson.version

const PublicKeyHex = Schema.String.pipe(
  Schema.filter((key) => /^[0-9a-fA-F]{64}$/.test(key) || "must be an Ed25519 public key: 64 hex characters")
)

const InsideRoot = Schema.NonEmptyString.pipe(
  Schema.filter((path) =>
    (!path.startsWith("/") && !path.split(/[\\/]/).includes("..")) ||
    `"${path}" must be a path inside Host's root (relative, without "..")`
  )
)

// The artifact store may be a shared mount outside the root (replicas share it, docs/operations.md
// "Artifacts"), so an absolute path is accepted; a relative one is inside the root, without "..".
const ArtifactsPath = Schema.NonEmptyString.pipe(
  Schema.filter((path) =>
    path.startsWith("/") || !path.split(/[\\/]/).includes("..") ||
    `"${path}" must be an absolute path or a path inside Host's root (relative, without "..")`
  )
)

const HttpUrl = Schema.String.pipe(
  Schema.filter((url) => /^https?:\/\/[^\s/]+/.test(url) || `"${url}" must be an http(s) URL`)
)

const RegistryUrl = Schema.String.pipe(
  Schema.filter((url) => url === "" || /^(https?|file):\/\/\S+$/.test(url) || `"${url}" must be an http(s):// or file:// URL`)
)

// One of several registries (docs/registry.md "Several registries"). The name is also part of its cache
// file's name, so it is kept to letters, digits, "-" and "_".
export const RegistryName = Schema.String.pipe(
  Schema.filter((name) =>
    /^[a-z0-9][a-z0-9_-]{0,62}$/.test(name) || `"${name}" must be a registry name: lowercase letters, digits, "-" and "_" (like official)`
  )
)

export const RegistryEntryConfig = Schema.Struct({
  name: RegistryName,
  url: Schema.String.pipe(
    Schema.filter((url) => /^(https?|file):\/\/\S+$/.test(url) || `"${url}" must be an http(s):// or file:// URL`)
  ),
  public_key: Schema.optional(PublicKeyHex)
})
export type RegistryEntryConfig = typeof RegistryEntryConfig.Type

// A duplicate name is named at the second entry's name; `default` is the name `registry_url` takes.
const Registries = Schema.Array(RegistryEntryConfig).pipe(
  Schema.filter((entries) => {
    const issues: Array<Schema.FilterIssue> = []
    const seen = new Map<string, number>()
    entries.forEach((entry, position) => {
      const first = seen.get(entry.name)
      if (first !== undefined) issues.push({ path: [position, "name"], message: `"${entry.name}" is used twice (also registries[${first}]); each registry needs its own name` })
      else seen.set(entry.name, position)
    })
    return issues.length === 0 ? true : issues
  })
)

const DatabaseUrl = Schema.String.pipe(
  Schema.filter((url) => {
    if (url === "sqlite::memory:") return true
    const sqlite = /^sqlite:(.+)$/.exec(url)
    if (sqlite !== null) {
      const path = sqlite[1]!
      return (!path.startsWith("/") && !path.split(/[\\/]/).includes("..")) ||
        `"${url}": the SQLite file must be inside Host's root (relative path, without "..")`
    }
    if (/^(mysql|mariadb|postgres|postgresql):\/\//i.test(url)) {
      const shown = url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@")
      try {
        const parsed = new URL(url)
        if (parsed.hostname === "") return `"${shown}": the database server's host is missing`
        if (parsed.pathname.replace(/^\//, "") === "") return `"${shown}": the database name is missing (…/<database>)`
        return true
      } catch {
        return `"${shown}" is not a valid URL`
      }
    }
    return `"${url}" must be sqlite:<path>, mysql://user:pass@host:port/db (mariadb:// too) or postgres://user:pass@host:port/db`
  })
)

const Count = (defaultValue: number) =>
  Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { default: () => defaultValue })

// A trusted proxy: an IPv4/IPv6 address or a CIDR range (docs/operations.md "Behind a proxy").
const AddressOrRange = Schema.String.pipe(
  Schema.filter((text) => {
    const [address, bits, ...rest] = text.trim().split("/")
    const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address ?? "")
    const isV4 = v4 !== null && v4.slice(1).every((part) => Number(part) <= 255)
    const isV6 = !isV4 && /^[0-9a-fA-F:.]+$/.test(address ?? "") && (address ?? "").includes(":")
    if (rest.length > 0 || (!isV4 && !isV6)) return `"${text}" must be an IP address or a CIDR range (127.0.0.1, 10.0.0.0/8, ::1)`
    if (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > (isV4 ? 32 : 128))) {
      return `"${text}": the prefix length must be 0–${isV4 ? 32 : 128}`
    }
    return true
  })
)

/** Which panel Host serves (docs/panels.md): the embedded reference panel, or a real one beside it. */
export const PanelDriver = Schema.Literal("embedded", "pterodactyl", "pelican")
export type PanelDriver = typeof PanelDriver.Type

const panelDefaults = {
  driver: "embedded" as PanelDriver,
  url: "",
  root: "",
  cache_seconds: 30,
  lookups_per_second: 10,
  application_key: "",
  self_heal: true,
  php: ""
}

export const PanelConfig = Schema.Struct({
  driver: Schema.optionalWith(PanelDriver, { default: () => panelDefaults.driver }),
  // How Host reaches the panel, server to server (e.g. http://127.0.0.1).
  url: Schema.optionalWith(Schema.Union(Schema.Literal(""), HttpUrl), { default: () => panelDefaults.url }),
  // The panel's install folder (its version, name, session cookie name, and the include).
  root: Schema.optionalWith(Schema.String, { default: () => panelDefaults.root }),
  cache_seconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 3600)), { default: () => panelDefaults.cache_seconds }),
  // Lookups of credentials the identity cache has no answer for, per client address and second (docs/http.md
  // "Limits"): Host must not turn random cookies into as many requests to the panel.
  lookups_per_second: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100_000)), { default: () => panelDefaults.lookups_per_second }),
  application_key: Schema.optionalWith(Schema.String, { default: () => panelDefaults.application_key }),
  // `host serve` puts the include back after a panel upgrade removed it.
  self_heal: Schema.optionalWith(Schema.Boolean, { default: () => panelDefaults.self_heal }),
  // The panel's PHP version when `php` is not on the PATH (for `requires.php`).
  php: Schema.optionalWith(Schema.String, { default: () => panelDefaults.php })
}).pipe(
  Schema.filter((panel) => {
    if (panel.driver === "embedded") return true
    const issues: Array<Schema.FilterIssue> = []
    if (panel.url === "") issues.push({ path: ["url"], message: `is required with driver "${panel.driver}" (how Host reaches the panel, e.g. http://127.0.0.1)` })
    if (panel.root === "") issues.push({ path: ["root"], message: `is required with driver "${panel.driver}" (the panel's install folder, e.g. /var/www/${panel.driver})` })
    return issues.length === 0 ? true : issues
  })
)
export type PanelConfig = typeof PanelConfig.Type

export const AdminUploads = Schema.Literal("any", "signed", "off")
export type AdminUploads = typeof AdminUploads.Type

/** What the admin UI and API accept as uploads: `admin_uploads`, else `signed` when signatures are required. */
export const adminUploadPolicy = (config: ConfigDocument): AdminUploads =>
  config.admin_uploads ?? (config.require_signatures ? "signed" : "any")

const serverDefaults = { host: "127.0.0.1", port: 8080, headers_timeout: 20, connections_per_address: 256 }

export const ConfigDocument = Schema.Struct({
  version: Schema.optionalWith(SemverVersion, { default: () => frameworkVersion }),
  extensions_path: Schema.optionalWith(InsideRoot, { default: () => "host/extensions" }),
  require_signatures: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  registry_url: Schema.optionalWith(RegistryUrl, { default: () => "" }),
  // More registries, searched in order (docs/registry.md "Several registries"); registry_url is the one named default.
  registries: Schema.optionalWith(Registries, { default: () => [] }),
  registry_cache_path: Schema.optionalWith(InsideRoot, { default: () => "storage/host/registry-cache.json" }),
  artifacts_path: Schema.optionalWith(ArtifactsPath, { default: () => "storage/host/artifacts" }),
  registry_cache_ttl: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 3600 }),
  public_key: Schema.optionalWith(Schema.Union(Schema.Literal(""), PublicKeyHex), { default: () => "" }),
  trusted_keys: Schema.optionalWith(
    Schema.Array(Schema.Struct({ name: Schema.NonEmptyString, public_key: PublicKeyHex })),
    { default: () => [] }
  ),
  database: Schema.optionalWith(DatabaseUrl, { default: () => "sqlite:storage/host/host.db" }),
  base_url: Schema.optionalWith(HttpUrl, { default: () => "http://127.0.0.1:8080" }),
  server: Schema.optionalWith(
    Schema.Struct({
      host: Schema.optionalWith(Schema.NonEmptyString, { default: () => "127.0.0.1" }),
      port: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 65535)), { default: () => 8080 }),
      // Seconds a client has to send a request's headers (docs/http.md "Limits"; node's headersTimeout).
      headers_timeout: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 3600)), { default: () => serverDefaults.headers_timeout }),
      // Open connections per socket peer address (docs/http.md "Limits"); a trusted proxy is one peer.
      connections_per_address: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1_000_000)), {
        default: () => serverDefaults.connections_per_address
      })
    }),
    { default: () => serverDefaults }
  ),
  desired_state: Schema.optionalWith(Schema.NonEmptyString, { default: () => "desired-state/extensions.yaml" }),
  // How long the operation lock's lease lasts without renewal (renewed every sixth of it): how soon another
  // replica takes over the lock of a holder that died (docs/operations.md "Running replicas").
  lock_lease_seconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(3, 3600)), { default: () => 30 }),
  // The HMAC key of signed reconcile webhooks (docs/gitops.md); "" refuses every signed request. Short
  // keys are refused because a guessable key lets anyone apply the desired state.
  webhook_secret: Schema.optionalWith(
    Schema.String.pipe(
      Schema.filter((secret) =>
        secret === "" || secret.length >= 16 || "must be at least 16 characters (a long random string: openssl rand -hex 32), or empty to refuse signed webhooks"
      )
    ),
    { default: () => "" }
  ),
  panel: Schema.optionalWith(PanelConfig, { default: () => panelDefaults }),
  // Uploads through the admin UI and API (docs/operations.md "Web installs"); unset: derived, see adminUploadPolicy.
  admin_uploads: Schema.optional(AdminUploads),
  // Peers whose X-Forwarded-For / -Proto count (docs/operations.md "Behind a proxy").
  trusted_proxies: Schema.optionalWith(Schema.Array(AddressOrRange), { default: () => ["127.0.0.0/8", "::1"] }),
  // Accept webhook signatures over the body alone (the older form, replayable; docs/gitops.md).
  webhook_legacy_signatures: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  limits: Schema.optionalWith(
    Schema.Struct({
      archive_bytes: Count(50 * 1024 * 1024),
      unpacked_bytes: Count(200 * 1024 * 1024),
      files: Count(10_000),
      // Open `/api/client/host/events` streams of the whole server (docs/http.md "Live updates: caps").
      event_streams: Count(1000)
    }),
    { default: () => ({ archive_bytes: 50 * 1024 * 1024, unpacked_bytes: 200 * 1024 * 1024, files: 10_000, event_streams: 1000 }) }
  )
})
export type ConfigDocument = typeof ConfigDocument.Type

/** Environment variables that override keys, with how their text is read. */
const environmentOverrides: ReadonlyArray<{
  readonly env: string
  readonly path: readonly [string, ...Array<string>]
  readonly read: (text: string) => unknown
}> = [
  { env: "HOST_REQUIRE_SIGNATURES", path: ["require_signatures"], read: (text) => parseBoolean(text) },
  { env: "HOST_REGISTRY_URL", path: ["registry_url"], read: (text) => text },
  { env: "HOST_ARTIFACTS_PATH", path: ["artifacts_path"], read: (text) => text },
  { env: "HOST_PUBLIC_KEY", path: ["public_key"], read: (text) => text.trim() },
  { env: "HOST_DATABASE_URL", path: ["database"], read: (text) => text },
  { env: "HOST_BASE_URL", path: ["base_url"], read: (text) => text },
  { env: "HOST_PORT", path: ["server", "port"], read: (text) => (/^\d+$/.test(text.trim()) ? Number(text) : text) },
  { env: "HOST_WEBHOOK_SECRET", path: ["webhook_secret"], read: (text) => text },
  { env: "HOST_PANEL_DRIVER", path: ["panel", "driver"], read: (text) => text.trim() },
  { env: "HOST_PANEL_URL", path: ["panel", "url"], read: (text) => text.trim() },
  { env: "HOST_PANEL_ROOT", path: ["panel", "root"], read: (text) => text.trim() },
  { env: "HOST_PANEL_APPLICATION_KEY", path: ["panel", "application_key"], read: (text) => text.trim() }
]

const parseBoolean = (text: string): unknown => {
  const value = text.trim().toLowerCase()
  if (["1", "true", "yes", "on"].includes(value)) return true
  if (["0", "false", "no", "off", ""].includes(value)) return false
  return text
}

const setPath = (target: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown) => {
  const [head, ...rest] = path
  if (head === undefined) return
  if (rest.length === 0) {
    target[head] = value
    return
  }
  const inner = target[head]
  const next = inner !== null && typeof inner === "object" && !Array.isArray(inner) ? { ...inner as Record<string, unknown> } : {}
  setPath(next, rest, value)
  target[head] = next
}

export interface ConfigResult {
  readonly config: ConfigDocument
  readonly warnings: ReadonlyArray<Problem>
}

/**
 * Decodes the parsed YAML (`undefined` when there is no file) with environment overrides applied.
 * A problem with an overridden key names the variable it came from.
 */
export const decodeConfig = (
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>,
  source: string
): Either.Either<ConfigResult, ConfigInvalid> => {
  if (raw !== undefined && raw !== null && (typeof raw !== "object" || Array.isArray(raw))) {
    return Either.left(new ConfigInvalid({ source, problems: [problem("(root)", "must be a YAML mapping of keys to values")] }))
  }
  const document: Record<string, unknown> = { ...(raw as Record<string, unknown> | null | undefined) }
  const known = new Set(Object.keys(ConfigDocument.fields))
  const unknownKeys = (value: unknown, knownKeys: ReadonlySet<string>, prefix: string) =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? Object.keys(value).filter((key) => !knownKeys.has(key)).map((key) => `${prefix}${key}`)
      : []
  const warnings = [
    ...unknownKeys(document, known, ""),
    ...unknownKeys(document.server, new Set(Object.keys(serverDefaults)), "server."),
    ...unknownKeys(document.limits, new Set(["archive_bytes", "unpacked_bytes", "files", "event_streams"]), "limits."),
    ...unknownKeys(document.panel, new Set(Object.keys(panelDefaults)), "panel.")
  ].map((key) => problem(key, `unknown configuration key "${key}" is ignored`))
  const fromEnv = new Map<string, string>()
  for (const override of environmentOverrides) {
    const text = env[override.env]
    if (text === undefined) continue
    setPath(document, override.path, override.read(text))
    fromEnv.set(formatPath(override.path), override.env)
  }
  return Either.match(Schema.decodeUnknownEither(ConfigDocument, { errors: "all" })(document), {
    onLeft: (error) =>
      Either.left(
        new ConfigInvalid({
          source,
          problems: problemsFromParseError(error).map((p) => {
            const variable = fromEnv.get(p.path)
            return variable === undefined ? p : problem(`${p.path} (from ${variable})`, p.message)
          })
        })
      ),
    onRight: (config) => {
      const clash = config.registry_url === "" ? -1 : config.registries.findIndex((entry) => entry.name === defaultRegistryName)
      if (clash === -1) return Either.right({ config, warnings })
      const variable = fromEnv.get("registry_url")
      return Either.left(new ConfigInvalid({
        source,
        problems: [problem(`registries[${clash}].name`, `"default" is the name of registry_url${variable === undefined ? "" : ` (from ${variable})`}: set one of them, or give this registry another name`)]
      }))
    }
  })
}

/** The name `registry_url` takes among the registries. */
export const defaultRegistryName = "default"

/** A configured registry as the registry service uses it. */
export interface ConfiguredRegistry {
  readonly name: string
  readonly url: string
  readonly publicKey: string | undefined
}

/**
 * The registries in resolution order (docs/registry.md "Several registries"): those of `registries`, then
 * `registry_url` as `default` (so an explicit list keeps its order, and HOST_REGISTRY_URL adds a fallback).
 */
export const configuredRegistries = (config: Pick<ConfigDocument, "registry_url" | "registries">): ReadonlyArray<ConfiguredRegistry> => [
  ...config.registries.map((entry) => ({ name: entry.name, url: entry.url, publicKey: entry.public_key?.toLowerCase() })),
  ...(config.registry_url === "" ? [] : [{ name: defaultRegistryName, url: config.registry_url, publicKey: undefined }])
]

/** Absolute locations derived from the root and the configuration. */
export interface HostPaths {
  readonly root: string
  readonly configFile: string
  readonly extensions: string
  readonly storage: string
  readonly staging: string
  readonly journal: string
  /** Compiled extension modules (see kernel/ModuleLoader). */
  readonly modules: string
  readonly registryCache: string
  /** The content-addressed archives of installed extensions (archive/ArtifactStore). */
  readonly artifacts: string
  readonly publicAssets: string
  readonly desiredState: string
  /** The SQLite file, or `:memory:`; empty when `database` is a server's URL (mysql://, postgres://). */
  readonly databaseFile: string
}

export class HostConfig extends Context.Tag("host/HostConfig")<
  HostConfig,
  {
    readonly config: ConfigDocument
    readonly paths: HostPaths
    readonly warnings: ReadonlyArray<Problem>
    /** Whether `base_url` was set (file or HOST_BASE_URL); when not, a server uses its listen address. */
    readonly baseUrlConfigured?: boolean
  }
>() {}

export interface HostConfigOptions {
  readonly root: string
  readonly env: Readonly<Record<string, string | undefined>>
}

/** Reads `<root>/config/host.yaml` (optional) and the environment. */
export const loadHostConfig = Effect.fn("HostConfig.load")(function*(options: HostConfigOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(options.root)
  // A mistyped --root must not quietly become a new, empty panel.
  const rootInfo = yield* statIfExists(root)
  if (rootInfo === undefined || !rootInfo.isDirectory()) {
    return yield* new RootNotFound({ root, reason: rootInfo === undefined ? "does not exist" : "is not a folder" })
  }
  const configFile = path.join(root, "config", "host.yaml")
  const source = "config/host.yaml"
  const text = (yield* statIfExists(configFile)) !== undefined
    ? yield* fs.readFileString(configFile).pipe(
      Effect.mapError((error) => new ConfigInvalid({ source, problems: [problem("(file)", `cannot be read: ${error.message}`)] }))
    )
    : undefined
  // The YAML parser is loaded only when there is a file to parse: most commands on a panel without one
  // start without it (docs/architecture.md, "Startup").
  const yaml = text === undefined ? undefined : yield* Effect.promise(() => import("yaml"))
  const raw = text === undefined || yaml === undefined ? undefined : yield* Effect.try({
    try: () => yaml.parse(text) as unknown,
    catch: (error) =>
      new ConfigInvalid({ source, problems: [problem("(yaml)", error instanceof Error ? error.message : String(error))] })
  })
  const { config, warnings } = yield* decodeConfig(raw, options.env, source)
  const storage = path.join(root, "storage", "host")
  const databasePath = config.database.startsWith("sqlite:") ? config.database.slice("sqlite:".length) : undefined
  const paths: HostPaths = {
    root,
    configFile,
    extensions: path.join(root, config.extensions_path),
    storage,
    staging: path.join(storage, "staging"),
    journal: path.join(storage, "journal"),
    modules: path.join(storage, "modules"),
    registryCache: path.join(root, config.registry_cache_path),
    artifacts: path.resolve(root, config.artifacts_path),
    publicAssets: path.join(root, "public", "host"),
    desiredState: path.resolve(root, config.desired_state),
    databaseFile: databasePath === undefined ? "" : databasePath === ":memory:" ? ":memory:" : path.join(root, databasePath)
  }
  const baseUrlConfigured = (options.env.HOST_BASE_URL ?? "") !== "" ||
    (typeof raw === "object" && raw !== null && Object.hasOwn(raw, "base_url"))
  return { config, paths, warnings, baseUrlConfigured }
})

export const layer = (options: HostConfigOptions): Layer.Layer<HostConfig, ConfigInvalid | RootNotFound, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(HostConfig, loadHostConfig(options))
