import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import semver from "semver"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { encodeChecksums, type Inspection, inspectArchive, inspectFile, limitsFromConfig, readDetachedSignature } from "../archive/Archive.js"
import { validateDirectory } from "../archive/ExtensionDirectory.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { sha256Hex } from "../system/Hash.js"
import { hashFiles, listFiles, packageMetaFiles, parseChecksums, readTextIfExists } from "../archive/Tree.js"
import { type TreeHashes, TreeHashing } from "../archive/TreeCache.js"
import { frameworkVersion, HostConfig } from "../config/HostConfig.js"
import { type DesiredState, decodeDesiredState } from "../domain/DesiredState.js"
import { DesiredStateInvalid, ManifestInvalid } from "../domain/Errors.js"
import { dependenciesOf, type InstalledExtension, manifestOf } from "../domain/Installed.js"
import { decodeManifest, type ExtensionLayout, type Manifest, migrationNames, resolveLayout } from "../domain/Manifest.js"
import { type ActualExtension, type Candidate, capabilitiesOf, type Integrity, noCapabilities } from "../domain/Plan.js"
import { problem } from "../domain/Problems.js"
import { desiredStateYamlLimits, manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { discoverMigrations } from "../lifecycle/Migrations.js"
import { pinRegistryVersion } from "../lifecycle/RegistryPin.js"
import { Registry, type RegistryService, type ResolvedExtension } from "../registry/Registry.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { CoreKeys, CoreRows, type SensitiveKeys } from "../store/CoreRows.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { join } from "node:path"
import { readYamlCached } from "./ParsedYamlCache.js"

// Reading what the planner compares: the desired-state file, the installed extensions (tables and files)
// and what each desired source provides.

export interface DesiredFile {
  readonly file: string
  readonly state: DesiredState
}

/** Reads and decodes the desired-state file; relative source paths become absolute, from the file's folder. */
export const readDesiredFile = Effect.fn("Reconcile.readDesiredFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const absolute = path.resolve(file)
  const invalid = (where: string, message: string) => new DesiredStateInvalid({ source: file, problems: [problem(where, message)] })
  const { paths } = yield* HostConfig
  const text = yield* fs.readFileString(absolute).pipe(Effect.mapError((error) => invalid("(file)", error.message)))
  // Within limits and linear in the text; alias errors are problems (domain/YamlText). The parse of the
  // same text is remembered (reconcile/ParsedYamlCache).
  const parsed = yield* readYamlCached(text, desiredStateYamlLimits, path.join(paths.storage, "cache", "desired-state.json"))
  const raw = yield* Either.mapLeft(parsed, (problems) => new DesiredStateInvalid({ source: file, problems }))
  const decoded = decodeDesiredState(raw)
  if (decoded._tag === "Left") return yield* new DesiredStateInvalid({ source: file, problems: decoded.left })
  const folder = path.dirname(absolute)
  const state: DesiredState = {
    prune: decoded.right.prune,
    extensions: decoded.right.extensions.map((entry) => {
      if (entry._tag === "Absent" || entry.source._tag === "Registry") return entry
      return entry.source._tag === "Path"
        ? { ...entry, source: { _tag: "Path", path: path.resolve(folder, entry.source.path) } }
        : /^https?:\/\//.test(entry.source.archive)
        ? entry
        : { ...entry, source: { ...entry.source, archive: path.resolve(folder, entry.source.archive) } }
    })
  }
  return { file: absolute, state } satisfies DesiredFile
})

/** The extension ids protected from removal by an applied desired state (a `host/core` row). */
export const readProtected = Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.protectedIds)).pipe(
  Effect.map((ids) => new Set(Option.getOrElse(ids, () => [])))
)

/** Per extension, the settings whose stored value came from `${ENV}` (a `host/core` row). */
export const readSensitiveKeys = Effect.flatMap(CoreRows, (rows) => rows.get(CoreKeys.sensitiveKeys)).pipe(
  Effect.map(Option.getOrElse((): SensitiveKeys => ({})))
)

interface TreeReading {
  readonly manifest: Manifest
  readonly layout: ExtensionLayout
  readonly capabilities: Candidate["capabilities"]
  /** What checksums.json of the tree's files holds (and its sha256). */
  readonly checksums: Readonly<Record<string, string>>
  readonly digest: string
}

/** Reads an extension folder: manifest, layout, capabilities and the digest of its files. */
const readTree = Effect.fnUntraced(function*(root: string, label: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const validation = yield* validateDirectory(root, frameworkVersion)
  if (validation.manifest === undefined || validation.layout === undefined) {
    return yield* new ManifestInvalid({ source: label, problems: validation.errors })
  }
  const files = yield* listFiles(root)
  const checksums = yield* hashFiles(root, files.filter((file) => !packageMetaFiles.has(file)))
  const bundle = validation.layout.bundle === undefined
    ? undefined
    : yield* fs.readFileString(path.join(root, validation.layout.bundle)).pipe(Effect.orElseSucceed(() => undefined))
  const migrations = validation.layout.migrations === undefined
    ? []
    : (yield* discoverMigrations(path.join(root, validation.layout.migrations))).map((migration) => migration.name)
  return {
    manifest: validation.manifest,
    layout: validation.layout,
    capabilities: capabilitiesOf(validation.manifest, validation.layout, bundle, migrations),
    checksums,
    digest: sha256Hex(encodeChecksums(checksums))
  } satisfies TreeReading
})

/** How much to read: `light` skips capabilities (enough to tell in-sync from not), `full` reads everything. */
export type Detail = "light" | "full"

/** The manifest and file digest of a folder, without the declared-file checks (planning in-sync extensions). */
const readTreeLight = Effect.fnUntraced(function*(root: string, label: string) {
  const path = yield* Path.Path
  const text = yield* readTextIfExists(path.join(root, "extension.yaml"))
  if (text === undefined) return yield* new ManifestInvalid({ source: label, problems: [problem("extension.yaml", `not found in ${root}`)] })
  const raw = yield* Either.mapLeft(readYaml(text, manifestYamlLimits), (problems) => new ManifestInvalid({ source: label, problems }))
  const decoded = decodeManifest(raw, frameworkVersion)
  if (decoded.manifest === undefined) return yield* new ManifestInvalid({ source: label, problems: decoded.errors })
  const files = yield* listFiles(root)
  const checksums = yield* hashFiles(root, files.filter((file) => !packageMetaFiles.has(file)))
  return { manifest: decoded.manifest, checksums, digest: sha256Hex(encodeChecksums(checksums)) }
})

/** What readInstalled needs that is the same for every extension: read once per readActual. */
interface InstalledContext {
  readonly extensionsFolder: string
  readonly trees: TreeHashes
  readonly settings: ReadonlyMap<string, Readonly<Record<string, unknown>>>
  readonly sensitive: SensitiveKeys
  readonly protectedIds: ReadonlySet<string>
  readonly detail: Detail
}

/** Whether an installed tree's entries match its checksums.json (same paths, same order, same digests). */
const integrityOf = (present: boolean, recorded: string | undefined, hashes: Option.Option<Record<string, string>>): Integrity =>
  !present
    ? "missing"
    : recorded === undefined
    ? "unverifiable"
    : Option.match(hashes, {
      onNone: () => "modified",
      onSome: (actual) =>
        Option.match(Either.getRight(parseChecksums(recorded)), {
          onNone: () => "modified",
          onSome: (expected) => (JSON.stringify(expected) === JSON.stringify(actual) ? "intact" : "modified")
        })
    })

/**
 * One installed extension: its record, settings, files, and whether the files match checksums.json.
 * Called once per installed extension, so it is untraced and takes its services from `context`: a
 * span and a service lookup per extension cost a panel of hundreds more than the stat calls
 * (docs/decisions.md "Planning in sync costs one pass of stats").
 */
const readInstalled = Effect.fnUntraced(function*(record: InstalledExtension, context: InstalledContext) {
  const root = join(context.extensionsFolder, ...record.extensionId.split("/"))
  const manifest = manifestOf(record)
  // checksums.json missing while the folder exists reads as unverifiable; both missing as missing.
  // A dev link (host dev --link) is the author's working folder and never checked: unverifiable.
  const linked = record.source.type === "dev-link"
  const recorded = linked ? undefined : yield* readTextIfExists(join(root, "checksums.json"))
  const present = recorded !== undefined || Either.isRight(yield* Effect.either(listFiles(root)))
  // Integrity compares every entry of the tree (hashInstalledTree); the full reading adds capabilities.
  const hashes = present && !linked ? yield* Effect.option(context.trees.installed(root)) : Option.none()
  const capabilities = present && context.detail === "full"
    ? Option.map(yield* Effect.option(readTree(root, record.extensionId)), (reading) => reading.capabilities)
    : Option.none()
  return {
    id: record.extensionId,
    version: record.version,
    enabled: record.enabled,
    dependencies: dependenciesOf(record),
    settings: context.settings.get(record.extensionId) ?? {},
    fields: manifest?.settings ?? [],
    capabilities: Option.getOrUndefined(capabilities) ??
      { permissions: manifest?.permissions ?? [], routes: [], slots: [], migrations: [], schedules: [], settings: [] },
    integrity: integrityOf(present, recorded, hashes),
    digest: recorded === undefined ? null : sha256Hex(recorded),
    protected: context.protectedIds.has(record.extensionId),
    sensitiveKeys: context.sensitive[record.extensionId] ?? [],
    requires: manifest?.document.requires ?? {}
  } satisfies ActualExtension
})

/**
 * The installed extensions as the planner sees them, one after another (the file reads are synchronous:
 * concurrent fibers would only add their own cost); `only` limits the reading to some ids, and an empty
 * `only` reads nothing (the full reading of an in-sync plan).
 */
export const readActual = Effect.fn("Reconcile.readActual")(function*(detail: Detail, only?: ReadonlySet<string>) {
  if (only !== undefined && only.size === 0) return new Map<string, ActualExtension>()
  const records = (yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list))
    .filter((record) => only === undefined || only.has(record.extensionId))
  const { paths } = yield* HostConfig
  const context: InstalledContext = {
    extensionsFolder: paths.extensions,
    trees: yield* TreeHashing,
    protectedIds: yield* readProtected,
    settings: yield* Effect.flatMap(SettingsRepo, (repo) => repo.getEverything),
    sensitive: yield* readSensitiveKeys,
    detail
  }
  // One span for the loop: its files (checksums.json, the trees' stamps) are most of a large panel's plan.
  return yield* Effect.gen(function*() {
    const extensions = new Map<string, ActualExtension>()
    for (const record of records) extensions.set(record.extensionId, yield* readInstalled(record, context))
    return extensions
  }).pipe(Effect.withSpan("Reconcile.readInstalledFiles"))
})

/** A desired source cannot be read (or, applying, the plan's source for an action cannot be used). */
export class SourceUnavailable extends Schema.TaggedError<SourceUnavailable>()("SourceUnavailable", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `the source of ${this.id} cannot be used: ${this.detail}`
  }
}

/** A source known to provide exactly the installed version: read from the installed record, not parsed again. */
const installedCandidate = (id: string, installed: ActualExtension, digest: string | null, source: Candidate["source"]): Candidate => ({
  id,
  version: installed.version,
  dependencies: installed.dependencies,
  fields: installed.fields,
  capabilities: noCapabilities,
  digest,
  source,
  ...(installed.requires === undefined ? {} : { requires: installed.requires })
})

/** What a folder source provides now. */
export const readPathCandidate = Effect.fnUntraced(function*(
  id: string,
  folder: string,
  detail: Detail,
  installed?: ActualExtension
) {
  if (detail === "light" && installed !== undefined && installed.digest !== null) {
    // Files identical to the installed ones (same checksums.json) hold the installed manifest: no parsing.
    const checksums = yield* Effect.flatMap(TreeHashing, (trees) => trees.package(folder))
    const digest = sha256Hex(encodeChecksums(checksums))
    if (digest === installed.digest && installed.integrity === "intact") {
      return installedCandidate(id, installed, digest, { type: "path", path: folder })
    }
  }
  const tree = detail === "full" ? yield* readTree(folder, folder) : { ...yield* readTreeLight(folder, folder), capabilities: noCapabilities }
  return {
    id: tree.manifest.id,
    version: tree.manifest.version,
    dependencies: tree.manifest.document.dependencies ?? {},
    fields: tree.manifest.settings,
    capabilities: tree.capabilities,
    digest: tree.digest,
    source: { type: "path", path: folder },
    requires: tree.manifest.document.requires ?? {}
  } satisfies Candidate
}, (effect, id) => Effect.mapError(effect, (error) => new SourceUnavailable({ id, detail: error.message })))

/** The candidate an inspected archive makes (read in memory; nothing is written). */
const candidateFromInspection = (id: string, inspection: Inspection, source: Candidate["source"]) =>
  Effect.gen(function*() {
    const manifest = inspection.manifest.decoded
    if (manifest === undefined) {
      return yield* new SourceUnavailable({
        id,
        detail: inspection.manifest.problems.map((p) => `${p.path}: ${p.message}`).join("; ") || "its manifest cannot be read"
      })
    }
    const files = inspection.files.map((entry) => entry.path)
    const present = new Set(files)
    const directories = new Set(inspection.directories)
    const layout = resolveLayout(manifest.document, (path) => present.has(path), (path) => directories.has(path))
    const bundleFile = inspection.files.find((entry) => entry.path === layout.bundle)
    return {
      id: manifest.id,
      version: manifest.version,
      dependencies: manifest.document.dependencies ?? {},
      fields: manifest.settings,
      capabilities: capabilitiesOf(
        manifest,
        layout,
        bundleFile === undefined ? undefined : Buffer.from(bundleFile.data).toString("utf8"),
        migrationNames(files, layout.migrations)
      ),
      digest: sha256Hex(encodeChecksums(inspection.checksums)),
      source,
      requires: manifest.document.requires ?? {}
    } satisfies Candidate
  })

/**
 * What an artifact a plan kept provides (`source` names it): read from the store, checked against its
 * digest and inspected like the download it came from, without fetching anything.
 */
export const readStoredCandidate = Effect.fn("Reconcile.readStoredCandidate")(function*(
  id: string,
  sha256: string,
  source: Candidate["source"]
) {
  const { config } = yield* HostConfig
  const store = yield* ArtifactStore
  const inspection = yield* inspectArchive(yield* store.read(sha256), {
    source: `${sha256}.host`,
    limits: limitsFromConfig(config),
    keyring: keyringFromConfig(config),
    detachedSignature: yield* store.signature(sha256)
  })
  return yield* candidateFromInspection(id, inspection, source)
}, (effect, id) =>
  Effect.mapError(effect, (error) => error instanceof SourceUnavailable ? error : new SourceUnavailable({ id, detail: error.message })))

/** What a `.host` file provides now. */
export const readArchiveCandidate = Effect.fn("Reconcile.readArchiveCandidate")(function*(
  id: string,
  file: string,
  expectedSha256: string | undefined
) {
  const { config } = yield* HostConfig
  if (/^https?:\/\//.test(file)) {
    return yield* new SourceUnavailable({ id, detail: `downloading archives (${file}) is not supported yet; use a local file or the registry` })
  }
  const inspection = yield* inspectFile(file, { limits: limitsFromConfig(config), keyring: keyringFromConfig(config) })
  if (expectedSha256 !== undefined && inspection.sha256 !== expectedSha256.toLowerCase()) {
    return yield* new SourceUnavailable({ id, detail: `${file} has sha256 ${inspection.sha256}, not the desired ${expectedSha256}` })
  }
  return yield* candidateFromInspection(id, inspection, { type: "archive", path: file, sha256: inspection.sha256 })
}, (effect, id) =>
  Effect.mapError(effect, (error) => error instanceof SourceUnavailable ? error : new SourceUnavailable({ id, detail: error.message })))

/**
 * What a `.host` file provides now, its bytes kept in the artifact store for the apply to install
 * (docs/operations.md "Artifacts"): a file replaced after planning does not change what is installed.
 */
export const readKeptArchiveCandidate = Effect.fn("Reconcile.readKeptArchiveCandidate")(function*(
  id: string,
  file: string,
  expectedSha256: string | undefined
) {
  const candidate = yield* readArchiveCandidate(id, file, expectedSha256)
  const store = yield* ArtifactStore
  const kept = yield* store.putFile(file, { detachedSignature: yield* readDetachedSignature(file) })
  if (candidate.source.type === "archive" && kept !== candidate.source.sha256) {
    return yield* new SourceUnavailable({ id, detail: `${file} changed while it was read; plan again` })
  }
  return candidate
}, (effect, id) =>
  Effect.mapError(effect, (error) => error instanceof SourceUnavailable ? error : new SourceUnavailable({ id, detail: error.message })))

/** Downloads a resolved registry version and inspects it in memory with the configured limits and keys. */
export const inspectRegistryVersion = (registry: RegistryService, resolved: ResolvedExtension) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const downloaded = yield* registry.download(resolved)
    const inspection = yield* inspectArchive(downloaded.bytes, {
      source: resolved.archiveName,
      limits: limitsFromConfig(config),
      keyring: keyringFromConfig(config),
      detachedSignature: downloaded.detachedSignature
    })
    return { downloaded, inspection }
  })

/**
 * What the registry provides for a desired range. An installed version still in the range is in sync
 * and needs no download (the light reading); otherwise the latest satisfying version is downloaded,
 * inspected in memory and kept in the artifact store, and the candidate's source names it by sha256 so
 * that the apply installs exactly these bytes without downloading them again (docs/operations.md
 * "Artifacts").
 */
export const readRegistryCandidate = Effect.fn("Reconcile.readRegistryCandidate")(function*(
  id: string,
  range: string | undefined,
  installed: ActualExtension | undefined,
  detail: Detail,
  /** The desired entry's `registry:` (docs/registry.md "Several registries"). */
  registryName?: string
) {
  const named = registryName === undefined ? {} : { registry: registryName }
  const keepsInstalled = installed !== undefined && (range === undefined || semver.satisfies(installed.version, range))
  if (detail === "light" && keepsInstalled) {
    return installedCandidate(id, installed, null, { type: "registry", id, version: installed.version, ...named })
  }
  const registry = yield* Registry
  // While the installed version satisfies the range it stays: a repair or a settings change reads that
  // version, not a newer one in the range.
  // Pinned as every front door pins (lifecycle/RegistryPin.ts): the plan carries this exact version and
  // registry, and the apply installs the bytes downloaded here.
  const { resolved } = yield* pinRegistryVersion({ id, range: keepsInstalled ? installed.version : range }, registryName)
  const { downloaded, inspection } = yield* inspectRegistryVersion(registry, resolved)
  // The registry is named in the plan when the entry chose one or several are configured (docs/plan-format.md).
  const from = registryName !== undefined || registry.registries.length > 1 ? { registry: resolved.registry } : {}
  const candidate = yield* candidateFromInspection(id, inspection, { type: "registry", id, version: resolved.version, ...from })
  const sha256 = yield* Effect.flatMap(ArtifactStore, (store) => store.put(downloaded.bytes, { detachedSignature: downloaded.detachedSignature }))
  return {
    ...candidate,
    source: { type: "registry", id, version: resolved.version, sha256, url: resolved.archiveUrl, ...from }
  } satisfies Candidate
}, (effect, id) =>
  Effect.mapError(effect, (error) => error instanceof SourceUnavailable ? error : new SourceUnavailable({ id, detail: error.message })))
