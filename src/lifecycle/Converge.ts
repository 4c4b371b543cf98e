import { FileSystem, Path } from "@effect/platform"
import { Either, Effect, Layer, Option, Schema } from "effect"
import { manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { hostname } from "node:os"
import { inspectArchive, limitsFromConfig, unpackArchive } from "../archive/Archive.js"
import { ArtifactStore } from "../archive/ArtifactStore.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { sha256Hex } from "../archive/Tree.js"
import { HostConfig } from "../config/HostConfig.js"
import type { InstalledExtension } from "../domain/Installed.js"
import { Registry } from "../registry/Registry.js"
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

const make = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const locks = yield* OperationLocks
  const registry = yield* Registry
  const artifacts = yield* ArtifactStore
  const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | HostConfig>()
  const limits = limitsFromConfig(config)
  const thisHost = hostname()

  const targetOf = (id: string) => path.join(paths.extensions, ...id.split("/"))
  const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))

  /** The version the tree's extension.yaml names, if it has a readable one. */
  const treeVersion = (target: string) =>
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
  const fetchArchive = (record: InstalledExtension, sha256: string) =>
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
  const putInPlace = (record: InstalledExtension, bytes: Uint8Array, sha256: string) =>
    Effect.gen(function*() {
      const id = record.extensionId
      const work = path.join(yield* replicaDirectory, "unpack")
      const name = `${id.replace("/", "-")}-${yield* uuid}`
      const inspection = yield* inspectArchive(bytes, { source: `${id}@${record.version}`, limits, keyring: keyringFromConfig(config) })
      if (inspection.manifest.id !== id || inspection.manifest.version !== record.version) {
        return yield* Effect.fail(
          `the archive holds ${inspection.manifest.id ?? "(no id)"}@${inspection.manifest.version ?? "(no version)"}, not ${id}@${record.version}`
        )
      }
      const staged = yield* unpackArchive(inspection, { into: work, name })
      const target = targetOf(id)
      const aside = path.join(work, `${name}.previous`)
      const hadTree = yield* exists(target)
      if (hadTree) yield* fs.rename(target, aside)
      yield* fs.makeDirectory(path.dirname(target), { recursive: true })
      yield* fs.rename(staged, target)
      if (hadTree) yield* fs.remove(aside, { recursive: true, force: true })
      yield* writeMark(id, { sha256, version: record.version })
    }).pipe(Effect.mapError((error) => (typeof error === "string" ? error : `its archive could not be put in place: ${error.message}`)))

  const convergeOne = (record: InstalledExtension): Effect.Effect<Outcome, never, FileSystem.FileSystem | Path.Path | HostConfig> =>
    Effect.gen(function*() {
      const id = record.extensionId
      const target = targetOf(id)
      const hasTree = yield* exists(path.join(target, "extension.yaml"))
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
        const version = yield* treeVersion(target)
        if (Option.contains(version, record.version)) {
          yield* writeMark(id, { sha256, version: record.version })
          return ready
        }
      }
      return yield* fetchArchive(record, sha256).pipe(
        Effect.flatMap((bytes) => putInPlace(record, bytes, sha256)),
        Effect.as(changed),
        Effect.catchAll((reason) => Effect.succeed(unavailable(reason)))
      )
    }).pipe(Effect.catchAll((error) => Effect.succeed(unavailable(`its files could not be checked: ${error.message}`))))

  /** Trees this root holds (marked) for extensions that are no longer installed. */
  const removeOrphans = (installed: ReadonlyArray<InstalledExtension>) =>
    Effect.gen(function*() {
      const known = new Set(installed.map((record) => record.extensionId))
      const orphans = (yield* markedIds).filter((id) => !known.has(id))
      yield* Effect.forEach(orphans, (id) =>
        Effect.zipRight(fs.remove(targetOf(id), { recursive: true, force: true }), removeMark(id)), { discard: true })
      return orphans
    })

  /**
   * Whether a live process on this host holds the operation lock: it may be switching this root's files
   * (the CLI beside this server), and its marks follow when it commits. Convergence waits for it.
   */
  const lockedHere = locks.current.pipe(
    Effect.map(Option.exists((lock) => lock.hostname === thisHost && !locks.isDead(lock))),
    Effect.orElseSucceed(() => false)
  )

  const converge = (installed: ReadonlyArray<InstalledExtension>): Effect.Effect<ConvergeOutcome> =>
    Effect.gen(function*() {
      if (yield* lockedHere) return { changed: [], unavailable: new Map(), deferred: true }
      const enabled = installed.filter((record) => record.enabled)
      const outcomes = yield* Effect.forEach(enabled, (record) => Effect.map(convergeOne(record), (outcome) => [record.extensionId, outcome] as const), {
        concurrency: 4
      })
      const removed = yield* removeOrphans(installed).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logWarning(`could not remove trees of removed extensions: ${error.message}`), []))
      )
      const missing = new Map<string, string>()
      const put: Array<string> = []
      for (const [id, outcome] of outcomes) {
        if (outcome._tag === "Unavailable") missing.set(id, outcome.reason)
        if (outcome._tag === "Changed") put.push(id)
      }
      for (const id of put) yield* Effect.logInfo(`converged ${id}: its recorded archive is in place`)
      for (const id of removed) yield* Effect.logInfo(`converged ${id}: removed (no longer installed)`)
      return { changed: [...put, ...removed], unavailable: missing, deferred: false }
    }).pipe(Effect.provide(context))

  return ReplicaFiles.of({ converge })
})

/** Convergence for a server: the artifact store, the registry (for registry sources) and the lock (to wait for this host's operations). */
export const layer = Layer.effect(ReplicaFiles, make)
