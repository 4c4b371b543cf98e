import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { limitsFromConfig, packTree, readArchiveFile, readDetachedSignature, verifyAndUnpack } from "../archive/Archive.js"
import { ArchiveIOError, ArchiveRefused } from "../archive/ArchiveErrors.js"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { validateDirectory } from "../archive/ExtensionDirectory.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { sha256Hex } from "../system/Hash.js"
import { HostConfig } from "../config/HostConfig.js"
import { ManifestInvalid } from "../domain/Errors.js"
import type { ExtensionSource, SignatureRecord } from "../domain/Installed.js"
import type { ExtensionLayout, Manifest } from "../domain/Manifest.js"
import { formatReference } from "../domain/Registry.js"
import { formatBytes } from "../domain/Bytes.js"
import { Registry } from "../registry/Registry.js"
import { RegistryArchiveMismatch } from "../registry/RegistryErrors.js"
import { Progress } from "../kernel/Events.js"

// Where an extension comes from. Every source ends as a verified, unpacked tree in the staging folder:
// a folder is packed in memory first, so folders and archives pass the same checks (checksums,
// signature policy, limits) and every installed tree carries its checksums.json. A registry source is
// resolved and downloaded first (sha256 checked against the index), and its manifest id and version
// must be the ones the registry resolved. The verified bytes of every source but a dev link are kept in
// the artifact store, and the recorded sha256 names them there (docs/operations.md "Artifacts"); an
// `Artifact` source installs bytes already kept there (what a reconcile plan verified) without fetching.

export type SourceSpec = Data.TaggedEnum<{
  Directory: { readonly path: string }
  Archive: { readonly path: string }
  /** An archive uploaded through the admin API: read from `path`, recorded under its upload `name`. */
  Upload: { readonly path: string; readonly name: string }
  /**
   * An uploaded archive the upload worker has already inspected, trusted and unpacked into `directory`
   * (docs/decisions.md "An uploaded archive is inspected and unpacked once"): staging moves that tree
   * instead of reading the archive at `path` again, and records the worker's digest and signature.
   */
  StagedUpload: {
    readonly path: string
    readonly name: string
    readonly directory: string
    readonly sha256: string
    readonly signature: SignatureRecord
    readonly detachedSignature: string | undefined
  }
  /**
   * `range`: an exact version or a range; undefined means the registry's latest_version. `registry`: the
   * configured registry to resolve in (else the first that lists the id, docs/registry.md "Several registries").
   */
  Registry: { readonly id: string; readonly range: string | undefined; readonly registry?: string | undefined }
  /**
   * Bytes already in the artifact store (a reconcile plan's verified download), recorded as `origin`;
   * `expected` is the id and version the plan read from them.
   */
  Artifact: {
    readonly sha256: string
    readonly origin: { readonly type: "registry" | "archive"; readonly ref: string; readonly registry?: string | undefined }
    readonly expected: { readonly id: string; readonly version: string } | undefined
  }
  /**
   * A development folder served in place (`host dev --link`): validated like any folder, but neither
   * packed nor copied; the installed path becomes a link to it (docs/authoring.md, "Dev loop").
   */
  DevLink: { readonly path: string }
}>
export const SourceSpec = Data.taggedEnum<SourceSpec>()

export const describeSource = (spec: SourceSpec): string =>
  SourceSpec.$match(spec, {
    Registry: formatReference,
    Upload: ({ name }) => name,
    StagedUpload: ({ name }) => name,
    Artifact: ({ expected, origin }) => (expected === undefined ? origin.ref : `${expected.id}@${expected.version}`),
    Directory: ({ path }) => path,
    Archive: ({ path }) => path,
    DevLink: ({ path }) => path
  })

/** A dev-link folder checked in place: the same validation as every install, no staging copy. */
const stageLink = Effect.fn("Source.stageLink")(function*(folder: string, frameworkVersion: string) {
  const path = yield* Path.Path
  const absolute = path.resolve(folder)
  const validation = yield* validateDirectory(absolute, frameworkVersion)
  if (validation.manifest === undefined || validation.layout === undefined || validation.errors.length > 0) {
    return yield* new ManifestInvalid({ source: absolute, problems: validation.errors })
  }
  return {
    directory: validation.root,
    manifest: validation.manifest,
    layout: validation.layout,
    source: { type: "dev-link", ref: validation.root, sha256: null },
    signature: { status: "unsigned", key: null },
    artifactAdded: false
  } satisfies StagedExtension
})

export interface StagedExtension {
  readonly directory: string
  readonly manifest: Manifest
  readonly layout: ExtensionLayout
  readonly source: ExtensionSource
  readonly signature: SignatureRecord
  /** Whether staging put the artifact in the store (it was not there before). */
  readonly artifactAdded: boolean
}

/** Verifies the source and unpacks it as `<staging>/<name>`; the manifest is decoded and checked there. */
export const stageSource = Effect.fn("Source.stage")(function*(spec: SourceSpec, name: string, frameworkVersion: string) {
  if (spec._tag === "DevLink") return yield* stageLink(spec.path, frameworkVersion)
  if (spec._tag === "StagedUpload") return yield* stageUnpacked(spec, name, frameworkVersion)
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const limits = limitsFromConfig(config)
  const { bytes, detachedSignature, sha256, label, origin, expected } = yield* SourceSpec.$match(spec, {
    Directory: ({ path: folder }) =>
      Effect.map(packTree(path.resolve(folder), { limits }), (packed) => ({
        bytes: packed.bytes,
        detachedSignature: undefined,
        sha256: packed.sha256,
        label: path.basename(path.resolve(folder)),
        origin: { type: "path", ref: path.resolve(folder) } as const,
        expected: undefined
      })),
    Archive: ({ path: file }) => readLocalArchive(path.resolve(file), path.basename(file), { type: "archive", ref: path.resolve(file) }),
    Upload: ({ name, path: file }) => readLocalArchive(path.resolve(file), name, { type: "upload", ref: name }),
    Registry: (reference) => downloadFromRegistry(reference),
    Artifact: (artifact) => readStoredArtifact(artifact),
    StagedUpload: () => Effect.dieMessage("uploads the worker unpacked are staged by stageUnpacked"),
    DevLink: () => Effect.dieMessage("dev-link folders are staged by stageLink")
  })
  const { inspection, staged } = yield* verifyAndUnpack(bytes, {
    source: label,
    limits,
    keyring: keyringFromConfig(config),
    detachedSignature,
    requireSignatures: config.require_signatures,
    into: paths.staging,
    name
  })
  if (expected !== undefined && (inspection.manifest.id !== expected.id || inspection.manifest.version !== expected.version)) {
    return yield* new RegistryArchiveMismatch({
      url: expected.url,
      expected: `${expected.id}@${expected.version}`,
      actual: `${inspection.manifest.id ?? "(no id)"}@${inspection.manifest.version ?? "(no version)"}`
    })
  }
  const validation = yield* validateDirectory(staged, frameworkVersion)
  if (validation.manifest === undefined || validation.layout === undefined) {
    return yield* new ManifestInvalid({ source: describeSource(spec), problems: validation.errors })
  }
  // Kept once verified: the recorded sha256 is the name of these bytes in the store.
  const store = yield* ArtifactStore
  const digest = sha256 ?? inspection.sha256
  const artifactAdded = !(yield* store.has(digest))
  yield* store.put(bytes, { detachedSignature })
  return {
    directory: staged,
    manifest: validation.manifest,
    layout: validation.layout,
    source: { ...origin, sha256: digest },
    signature: { status: inspection.status, key: inspection.signature.key },
    artifactAdded
  } satisfies StagedExtension
})

/**
 * An upload the worker inspected and unpacked: its tree is moved to `<staging>/<name>` (where the
 * operation's journal looks for it) and validated as every staged tree is. The archive's bytes are read
 * once more only to keep them in the artifact store, and they must still hash to the digest the worker
 * judged: bytes that changed since are refused, so what is recorded is what was inspected.
 */
const stageUnpacked = Effect.fn("Source.stageUnpacked")(function*(
  spec: Extract<SourceSpec, { _tag: "StagedUpload" }>,
  name: string,
  frameworkVersion: string
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const bytes = yield* readArchiveFile(spec.path, limitsFromConfig(config))
  if (sha256Hex(bytes) !== spec.sha256) {
    return yield* new ArchiveRefused({
      source: spec.name,
      reason: "checksum-mismatch",
      detail: `the uploaded file changed after it was inspected (its sha256 is no longer ${spec.sha256})`
    })
  }
  const staging = path.resolve(paths.staging)
  const staged = path.join(staging, name)
  if (yield* fs.exists(staged).pipe(Effect.orElseSucceed(() => false))) {
    return yield* new ArchiveIOError({ operation: "create", path: staged, detail: "it already exists" })
  }
  yield* fs.makeDirectory(staging, { recursive: true }).pipe(
    Effect.mapError((error) => new ArchiveIOError({ operation: "create", path: staging, detail: error.message }))
  )
  // Uploads and staging both live under storage/, so this is a rename; on another file system it is a copy.
  yield* fs.rename(spec.directory, staged).pipe(
    Effect.orElse(() => fs.copy(spec.directory, staged)),
    Effect.mapError((error) => new ArchiveIOError({ operation: "rename", path: spec.directory, detail: error.message }))
  )
  const validation = yield* validateDirectory(staged, frameworkVersion)
  if (validation.manifest === undefined || validation.layout === undefined) {
    return yield* new ManifestInvalid({ source: spec.name, problems: validation.errors })
  }
  const store = yield* ArtifactStore
  const artifactAdded = !(yield* store.has(spec.sha256))
  yield* store.put(bytes, { detachedSignature: spec.detachedSignature })
  return {
    directory: staged,
    manifest: validation.manifest,
    layout: validation.layout,
    source: { type: "upload", ref: spec.name, sha256: spec.sha256 },
    signature: spec.signature,
    artifactAdded
  } satisfies StagedExtension
})

/** A `.host` file on disk (and its detached `<file>.sig`), recorded as `origin`. */
const readLocalArchive = (
  file: string,
  label: string,
  origin: { readonly type: "archive" | "upload"; readonly ref: string }
) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const bytes = yield* readArchiveFile(file, limitsFromConfig(config))
    return {
      bytes,
      detachedSignature: yield* readDetachedSignature(file),
      sha256: undefined,
      label,
      origin,
      expected: undefined
    }
  })

/** Bytes the store keeps (checked against their digest), with the signature kept beside them. */
const readStoredArtifact = (artifact: Extract<SourceSpec, { _tag: "Artifact" }>) =>
  Effect.gen(function*() {
    const store = yield* ArtifactStore
    return {
      bytes: yield* store.read(artifact.sha256),
      detachedSignature: yield* store.signature(artifact.sha256),
      sha256: artifact.sha256,
      label: artifact.expected === undefined ? `${artifact.sha256}.host` : `${artifact.expected.id}@${artifact.expected.version}`,
      origin: artifact.origin,
      expected: artifact.expected === undefined ? undefined : { ...artifact.expected, url: artifact.origin.ref }
    }
  })

/** Resolves a registry reference and downloads its archive (size limit, sha256 against the index). */
const downloadFromRegistry = Effect.fn("Source.downloadFromRegistry")(function*(
  reference: { readonly id: string; readonly range: string | undefined; readonly registry?: string | undefined }
) {
  const registry = yield* Registry
  const progress = yield* Effect.serviceOption(Progress)
  const report = (message: string) => Option.match(progress, { onNone: () => Effect.void, onSome: (p) => p.step(message) })
  const resolved = yield* registry.resolve({ id: reference.id, range: reference.range }, { registry: reference.registry })
  yield* report(`downloading ${resolved.id} ${resolved.version} from ${resolved.archiveUrl}`)
  // Large downloads say how far they are, in quarters.
  let quarter = 0
  const downloaded = yield* registry.download(resolved, {
    onProgress: (received, total) => {
      if (total === undefined || total < 4 * 1024 * 1024 || received >= total) return Effect.void
      const reached = Math.floor((received / total) * 4)
      if (reached <= quarter) return Effect.void
      quarter = reached
      return report(`downloaded ${formatBytes(received)} of ${formatBytes(total)}`)
    }
  })
  yield* report(
    `downloaded ${formatBytes(downloaded.bytes.length)}, ${
      downloaded.sha256Checked ? "sha256 matches the registry" : "the registry lists no sha256 for this version"
    }`
  )
  return {
    bytes: downloaded.bytes,
    detachedSignature: downloaded.detachedSignature,
    sha256: downloaded.sha256,
    label: resolved.archiveName,
    origin: { type: "registry", ref: resolved.archiveUrl, registry: resolved.registry } as const,
    expected: { id: resolved.id, version: resolved.version, url: resolved.archiveUrl }
  }
})
