import { FileSystem, Path } from "@effect/platform"
import { type Context, Either, Effect, Layer, Option, Schema } from "effect"
import { manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { hostname } from "node:os"
import { type ArchiveLimits, inspectArchive, limitsFromConfig, unpackArchive } from "../archive/Archive.js"
import { ArtifactStore, type ArtifactStoreService } from "../archive/ArtifactStore.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { sha256Hex } from "../system/Hash.js"
import { type ConfigDocument, HostConfig, type HostPaths } from "../config/HostConfig.js"
import type { InstalledExtension } from "../domain/Installed.js"
import { Registry, type RegistryService } from "../registry/Registry.js"
import { type ConvergeOutcome, replicaDirectory, ReplicaFiles } from "../runtime/ReplicaFiles.js"
import { OperationLocks } from "../store/OperationLock.js"
import { markedIds, readMark, removeMark, writeMark } from "./TreeMarks.js"
import { uuid } from "../system/Ids.js"

// Convergence of one panel root's files to the records (docs/operations.md "Running replicas"). Another
// replica committed an operation; this root's trees must become what the records name: each enabled
// extension's tree is the archive its record's sha256 names, and a tree this root holds for an extension
// no longer installed goes. The archive comes from where the record says, sha256-checked against the
// record (the bytes the operation verified, so the signature policy was applied then): the artifact
// store (`<artifacts_path>/<sha256>.host`, a shared mount in such setups), else the recorded registry
// source, fetched again. Nothing here touches the database — migrations ran once, in the
// operation that changed it. An extension this root cannot get is reported, not fatal: it is unavailable
// on this replica only.

type Outcome =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Changed" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

const ready: Outcome = { _tag: "Ready" }
const changed: Outcome = { _tag: "Changed" }
const unavailable = (reason: string): Outcome => ({ _tag: "Unavailable", reason })

const VersionOnly = Schema.Struct({ version: Schema.String })

/**
 * What every step of convergence works on: this root's folders and config, the archive limits, the
 * services an archive comes from, the lock (to see this host's operations) and the context the steps
 * need, provided once when the service runs them.
 */
interface ReplicaRoot {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly config: ConfigDocument
  readonly paths: HostPaths
  readonly limits: ArchiveLimits
  readonly locks: OperationLocks
  readonly registry: RegistryService
  readonly artifacts: ArtifactStoreService
  readonly thisHost: string
  readonly context: Context.Context<FileSystem.FileSystem | Path.Path | HostConfig>
}

const targetOf = ({ path, paths }: ReplicaRoot, id: string) => path.join(paths.extensions, ...id.split("/"))

const exists = ({ fs }: ReplicaRoot, file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))

/** The version the tree's extension.yaml names, if it has a readable one. */
const treeVersion = ({ fs, path }: ReplicaRoot, target: string) =>
  fs.readFileString(path.join(target, "extension.yaml")).pipe(
    // Bounded like every manifest read: a tree on disk is outside input too.
    Effect.map((text) => Either.getRight(readYaml(text, manifestYamlLimits))),
    Effect.map(Option.flatMap(Schema.decodeUnknownOption(VersionOnly))),
    Effect.map(Option.map((manifest) => manifest.version)),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/**
 * The recorded archive's bytes: from the artifact store (a shared mount between replicas), else from the
 * recorded registry source, fetched again and kept in the store. Either way the sha256 is the record's.
 */
const fetchArchive = ({ artifacts, registry }: ReplicaRoot, record: InstalledExtension, sha256: string) =>
  artifacts.read(sha256).pipe(
    Effect.catchAll((stored) =>
      Effect.gen(function*() {
        const notStored = stored._tag === "ArtifactUnavailable" && stored.reason === "missing"
          ? `its archive is not in this replica's artifact store (${artifacts.path(sha256)})`
          : `its archive in this replica's artifact store cannot be used (${stored.message})`
        if (record.source.type !== "registry") {
          return yield* Effect.fail(`${notStored} and its source (${record.source.type} ${record.source.ref}) cannot be fetched again`)
        }
        const downloaded = yield* registry.resolve({ id: record.extensionId, range: record.version }).pipe(
          Effect.flatMap((resolved) => registry.download(resolved)),
          Effect.mapError((error) => `${notStored} and its registry source could not be fetched: ${error.message}`)
        )
        const actual = sha256Hex(downloaded.bytes)
        if (actual !== sha256) {
          return yield* Effect.fail(
            `${notStored} and the registry now serves other bytes for ${record.extensionId}@${record.version} (sha256 ${actual.slice(0, 12)}…, recorded ${sha256.slice(0, 12)}…)`
          )
        }
        yield* artifacts.put(downloaded.bytes, { detachedSignature: downloaded.detachedSignature }).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not keep the archive of ${record.extensionId} in the artifact store: ${error.message}`))
        )
        return downloaded.bytes
      })
    )
  )

/** Unpacks `bytes` beside the other replica work and swaps the tree in (the previous one moves aside first). */
const putInPlace = (root: ReplicaRoot, record: InstalledExtension, bytes: Uint8Array, sha256: string) =>
  Effect.gen(function*() {
    const { fs, path } = root
    const id = record.extensionId
    const work = path.join(yield* replicaDirectory, "unpack")
    const name = `${id.replace("/", "-")}-${yield* uuid}`
    const inspection = yield* inspectArchive(bytes, { source: `${id}@${record.version}`, limits: root.limits, keyring: keyringFromConfig(root.config) })
    if (inspection.manifest.id !== id || inspection.manifest.version !== record.version) {
      return yield* Effect.fail(
        `the archive holds ${inspection.manifest.id ?? "(no id)"}@${inspection.manifest.version ?? "(no version)"}, not ${id}@${record.version}`
      )
    }
    const staged = yield* unpackArchive(inspection, { into: work, name })
    const target = targetOf(root, id)
    const aside = path.join(work, `${name}.previous`)
    const hadTree = yield* exists(root, target)
    if (hadTree) yield* fs.rename(target, aside)
    yield* fs.makeDirectory(path.dirname(target), { recursive: true })
    yield* fs.rename(staged, target)
    if (hadTree) yield* fs.remove(aside, { recursive: true, force: true })
    yield* writeMark(id, { sha256, version: record.version })
  }).pipe(Effect.mapError((error) => (typeof error === "string" ? error : `its archive could not be put in place: ${error.message}`)))

/** Brings one enabled extension's tree to what its record names, or says why this root cannot. */
const convergeOne = (root: ReplicaRoot, record: InstalledExtension): Effect.Effect<Outcome, never, FileSystem.FileSystem | Path.Path | HostConfig> =>
  Effect.gen(function*() {
    const id = record.extensionId
    const target = targetOf(root, id)
    const hasTree = yield* exists(root, root.path.join(target, "extension.yaml"))
    // A dev link points at an author's folder on the machine that linked it: nothing to fetch.
    if (record.source.type === "dev-link") {
      return hasTree ? ready : unavailable(`it is dev-linked to ${record.source.ref}, which this replica does not have`)
    }
    const sha256 = record.source.sha256
    const mark = yield* readMark(id)
    if (hasTree && Option.isSome(mark) && mark.value.sha256 === sha256 && mark.value.version === record.version) return ready
    if (sha256 === null) {
      return hasTree ? ready : unavailable("its files are missing here and its record names no archive sha256 to fetch them by")
    }
    // A tree put here before this root kept marks (by an older Host, or by hand): adopted when it is of
    // the recorded version. Changed files in it are drift, which `host status` reports, as before replicas.
    if (hasTree && Option.isNone(mark)) {
      const version = yield* treeVersion(root, target)
      if (Option.contains(version, record.version)) {
        yield* writeMark(id, { sha256, version: record.version })
        return ready
      }
    }
    return yield* fetchArchive(root, record, sha256).pipe(
      Effect.flatMap((bytes) => putInPlace(root, record, bytes, sha256)),
      Effect.as(changed),
      Effect.catchAll((reason) => Effect.succeed(unavailable(reason)))
    )
  }).pipe(Effect.catchAll((error) => Effect.succeed(unavailable(`its files could not be checked: ${error.message}`))))

/** Trees this root holds (marked) for extensions that are no longer installed. */
const removeOrphans = (root: ReplicaRoot, installed: ReadonlyArray<InstalledExtension>) =>
  Effect.gen(function*() {
    const known = new Set(installed.map((record) => record.extensionId))
    const orphans = (yield* markedIds).filter((id) => !known.has(id))
    yield* Effect.forEach(orphans, (id) =>
      Effect.zipRight(root.fs.remove(targetOf(root, id), { recursive: true, force: true }), removeMark(id)), { discard: true })
    return orphans
  })

/**
 * Whether a live process on this host holds the operation lock: it may be switching this root's files
 * (the CLI beside this server), and its marks follow when it commits. Convergence waits for it.
 */
const lockedHere = ({ locks, thisHost }: ReplicaRoot) =>
  locks.current.pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(false),
      onSome: (lock) => lock.hostname === thisHost ? Effect.map(locks.isDead(lock), (dead) => !dead) : Effect.succeed(false)
    })),
    Effect.orElseSucceed(() => false)
  )

/** Splits the outcomes into the trees put in place and the reasons the others are unavailable here. */
const tally = (outcomes: ReadonlyArray<readonly [string, Outcome]>) => {
  const missing = new Map<string, string>()
  const put: Array<string> = []
  for (const [id, outcome] of outcomes) {
    if (outcome._tag === "Unavailable") missing.set(id, outcome.reason)
    if (outcome._tag === "Changed") put.push(id)
  }
  return { missing, put }
}

const converge = (root: ReplicaRoot, installed: ReadonlyArray<InstalledExtension>): Effect.Effect<ConvergeOutcome> =>
  Effect.gen(function*() {
    if (yield* lockedHere(root)) return { changed: [], unavailable: new Map(), deferred: true }
    const enabled = installed.filter((record) => record.enabled)
    const outcomes = yield* Effect.forEach(enabled, (record) => Effect.map(convergeOne(root, record), (outcome) => [record.extensionId, outcome] as const), {
      concurrency: 4
    })
    const removed = yield* removeOrphans(root, installed).pipe(
      Effect.catchAll((error) => Effect.as(Effect.logWarning(`could not remove trees of removed extensions: ${error.message}`), []))
    )
    const { missing, put } = tally(outcomes)
    for (const id of put) yield* Effect.logInfo(`converged ${id}: its recorded archive is in place`)
    for (const id of removed) yield* Effect.logInfo(`converged ${id}: removed (no longer installed)`)
    return { changed: [...put, ...removed], unavailable: missing, deferred: false }
  }).pipe(Effect.provide(root.context))

const make = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const root: ReplicaRoot = {
    fs,
    path,
    config,
    paths,
    locks: yield* OperationLocks,
    registry: yield* Registry,
    artifacts: yield* ArtifactStore,
    context: yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig>(),
    limits: limitsFromConfig(config),
    thisHost: hostname()
  }
  return ReplicaFiles.of({ converge: (installed) => converge(root, installed) })
})

/** Convergence for a server: the artifact store, the registry (for registry sources) and the lock (to wait for this host's operations). */
export const layer = Layer.effect(ReplicaFiles, make)
