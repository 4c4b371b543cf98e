import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, Data, Effect, Layer, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { HostConfig } from "../config/HostConfig.js"
import { type ArchiveIOError, ioError } from "./ArchiveErrors.js"
import { sha256Hex } from "../system/Hash.js"
import { isTemporaryName, writeFileAtomic } from "../system/AtomicFile.js"
import { uuid } from "../system/Ids.js"

// The artifact store (docs/operations.md "Artifacts"): every archive an install or update verified is
// kept as `<artifacts_path>/<sha256>.host`. Content addressing makes a put idempotent and lets several
// records (or several replicas on a shared mount) point at the same file by its digest, and it is what
// lets a reconcile install exactly the bytes its plan verified: the plan puts them here, the apply reads
// them back by sha256.
//
// A put writes a temporary file in the same folder, flushes it and renames it into place: a rename
// within one folder is atomic, so a crash leaves either no `<sha>.host` or a whole one, never a part.

/** A file name the store owns: 64 lowercase hex characters and `.host`. */
const artifactName = /^([0-9a-f]{64})\.host$/
/** Temporary files of puts in flight (or interrupted by a crash); never counted as artifacts. */
const temporaryPrefix = ".put-"

export const isSha256 = (text: string): boolean => /^[0-9a-f]{64}$/.test(text)

/** An artifact asked for by its sha256 is not in the store, or its bytes no longer hash to its name. */
export class ArtifactUnavailable extends Data.TaggedError("ArtifactUnavailable")<{
  readonly sha256: string
  readonly reason: "missing" | "corrupt" | "invalid-digest"
  readonly path: string
}> {
  override get message() {
    switch (this.reason) {
      case "missing":
        return `the artifact ${this.sha256} is not in the artifact store (${this.path})`
      case "corrupt":
        return `the artifact ${this.path} is corrupt: its bytes do not hash to ${this.sha256}`
      case "invalid-digest":
        return `"${this.sha256}" is not a sha256 digest (64 lowercase hex characters)`
    }
  }
}

export interface StoredArtifact {
  readonly sha256: string
  readonly bytes: number
}

export interface ArtifactStoreSize {
  /** The store's folder (absolute). */
  readonly path: string
  readonly count: number
  readonly bytes: number
}

export interface PutOptions {
  readonly detachedSignature?: string | undefined
}

export interface ArtifactStoreService {
  /** The store's folder (absolute). */
  readonly directory: string
  /**
   * Keeps `bytes`; its sha256. Nothing is written when that artifact is already there. A detached
   * signature (a registry's `.sig`) is kept beside it as `<sha256>.host.sig`, where an install from
   * the store finds it like the `.sig` of any archive file.
   */
  readonly put: (bytes: Uint8Array, options?: PutOptions) => Effect.Effect<string, ArchiveIOError>
  /** Keeps the file at `file` (hashed while it is copied); its sha256. */
  readonly putFile: (file: string, options?: PutOptions) => Effect.Effect<string, ArchiveIOError>
  readonly has: (sha256: string) => Effect.Effect<boolean, ArchiveIOError>
  /** Where the artifact with that digest lives (whether or not it is there). */
  readonly path: (sha256: string) => string
  /** The artifact's bytes, checked against its digest (a shared mount can be damaged under us). */
  readonly read: (sha256: string) => Effect.Effect<Uint8Array, ArtifactUnavailable | ArchiveIOError>
  /** The detached signature kept with the artifact, if any. */
  readonly signature: (sha256: string) => Effect.Effect<string | undefined, ArchiveIOError>
  /** Drops the artifact (and its signature); whether it was there. */
  readonly remove: (sha256: string) => Effect.Effect<boolean, ArchiveIOError>
  /** How many artifacts the store holds and their bytes. */
  readonly size: Effect.Effect<ArtifactStoreSize, ArchiveIOError>
  /** Every artifact the store holds, with its size. */
  readonly list: Effect.Effect<ReadonlyArray<StoredArtifact>, ArchiveIOError>
  /**
   * Removes temporary files of puts a crash interrupted, when older than `olderThanMs` (a put in flight
   * in another process is younger); how many were removed.
   */
  readonly sweepTemporary: (olderThanMs: number) => Effect.Effect<number, ArchiveIOError>
}

export class ArtifactStore extends Context.Tag("host/ArtifactStore")<ArtifactStore, ArtifactStoreService>() {}

/** The store's folder and the file system it lives on: what every step below is given. */
interface StoreFolder {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly directory: string
}

const artifactPath = ({ directory, path }: StoreFolder, sha256: string) => path.join(directory, `${sha256}.host`)

const signaturePath = (store: StoreFolder, sha256: string) => `${artifactPath(store, sha256)}.sig`

const exists = ({ fs }: StoreFolder, file: string) => fs.exists(file).pipe(Effect.mapError(ioError("read", file)))

// ---- writing an artifact ----------------------------------------------------------------------------

/** Renames a complete temporary file to its artifact name, or drops it if that artifact exists. */
const settle = (store: StoreFolder, tmp: string, sha256: string) =>
  Effect.gen(function*() {
    const target = artifactPath(store, sha256)
    if (yield* exists(store, target)) {
      yield* store.fs.remove(tmp, { force: true }).pipe(Effect.mapError(ioError("remove", tmp)))
    } else {
      yield* store.fs.rename(tmp, target).pipe(Effect.mapError(ioError("rename", target)))
    }
    return sha256
  })

/** Runs `write` on a fresh temporary file; the file is removed when anything fails. */
const withTemporary = <A, E>({ directory, fs, path }: StoreFolder, write: (tmp: string) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(ioError("create", directory)))
    // Written before its name (the sha256) is known, so not an AtomicFile: its own prefix, which prune clears.
    const tmp = path.join(directory, `${temporaryPrefix}${yield* uuid}`)
    return yield* write(tmp).pipe(Effect.tapErrorCause(() => Effect.ignore(fs.remove(tmp, { force: true }))))
  })

/** Writes `bytes` to `file` and flushes them to the disk before the rename makes them visible. */
const writeFlushed = ({ fs }: StoreFolder, file: string, bytes: Uint8Array) =>
  Effect.scoped(
    Effect.gen(function*() {
      const handle = yield* fs.open(file, { flag: "wx" })
      yield* handle.writeAll(bytes)
      yield* handle.sync
    })
  ).pipe(Effect.mapError(ioError("write", file)))

/** Copies `file` to `tmp`, hashing it on the way and flushing it to the disk; its sha256. */
const copyHashed = ({ fs }: StoreFolder, file: string, tmp: string) =>
  Effect.gen(function*() {
    const hash = createHash("sha256")
    yield* Effect.scoped(
      Effect.gen(function*() {
        const handle = yield* fs.open(tmp, { flag: "wx" })
        yield* fs.stream(file).pipe(
          Stream.runForEach((chunk) => Effect.zipRight(Effect.sync(() => hash.update(chunk)), handle.writeAll(chunk)))
        )
        yield* handle.sync
      })
    ).pipe(Effect.mapError(ioError("write", tmp)))
    return hash.digest("hex")
  })

const readSignature = (store: StoreFolder, sha256: string) =>
  Effect.gen(function*() {
    const file = signaturePath(store, sha256)
    if (!isSha256(sha256) || !(yield* exists(store, file))) return undefined
    return yield* store.fs.readFileString(file).pipe(Effect.mapError(ioError("read", file)))
  })

/** Writes (or replaces) the signature beside an artifact (system/AtomicFile.ts). */
const keepSignature = (store: StoreFolder, sha256: string, signature: string) =>
  Effect.gen(function*() {
    if ((yield* readSignature(store, sha256)) === signature) return
    const target = signaturePath(store, sha256)
    yield* writeFileAtomic(target, signature).pipe(
      Effect.provideService(FileSystem.FileSystem, store.fs),
      Effect.provideService(Path.Path, store.path),
      Effect.mapError(ioError("write", target))
    )
  })

const put = Effect.fn("ArtifactStore.put")(function*(store: StoreFolder, bytes: Uint8Array, options: PutOptions = {}) {
  const sha256 = sha256Hex(bytes)
  if (!(yield* exists(store, artifactPath(store, sha256)))) {
    yield* withTemporary(store, (tmp) => Effect.zipRight(writeFlushed(store, tmp, bytes), settle(store, tmp, sha256)))
  }
  if (options.detachedSignature !== undefined) yield* keepSignature(store, sha256, options.detachedSignature)
  return sha256
})

const putFile = (store: StoreFolder, file: string, options: PutOptions = {}) =>
  withTemporary(store, (tmp) =>
    Effect.gen(function*() {
      const sha256 = yield* settle(store, tmp, yield* copyHashed(store, file, tmp))
      if (options.detachedSignature !== undefined) yield* keepSignature(store, sha256, options.detachedSignature)
      return sha256
    })
  ).pipe(Effect.withSpan("ArtifactStore.putFile"))

// ---- reading and removing one --------------------------------------------------------------------------

const read = Effect.fn("ArtifactStore.read")(function*(store: StoreFolder, sha256: string) {
  if (!isSha256(sha256)) return yield* new ArtifactUnavailable({ sha256, reason: "invalid-digest", path: store.directory })
  const file = artifactPath(store, sha256)
  if (!(yield* exists(store, file))) return yield* new ArtifactUnavailable({ sha256, reason: "missing", path: file })
  const bytes = yield* store.fs.readFile(file).pipe(Effect.mapError(ioError("read", file)))
  if (sha256Hex(bytes) !== sha256) return yield* new ArtifactUnavailable({ sha256, reason: "corrupt", path: file })
  return bytes
})

const remove = (store: StoreFolder, sha256: string) =>
  Effect.gen(function*() {
    if (!isSha256(sha256)) return false
    const file = artifactPath(store, sha256)
    if (!(yield* exists(store, file))) return false
    // The signature goes first: an artifact is never left looking signed by a stale signature file.
    const signature = signaturePath(store, sha256)
    yield* store.fs.remove(signature, { force: true }).pipe(Effect.mapError(ioError("remove", signature)))
    yield* store.fs.remove(file, { force: true }).pipe(Effect.mapError(ioError("remove", file)))
    return true
  })

// ---- listing and sweeping the folder -----------------------------------------------------------------------

const names = (store: StoreFolder) =>
  Effect.gen(function*() {
    if (!(yield* exists(store, store.directory))) return [] as ReadonlyArray<string>
    return yield* store.fs.readDirectory(store.directory).pipe(Effect.mapError(ioError("read", store.directory)))
  })

/** The size of a file, none when it is not a regular file or went away meanwhile (another replica pruning). */
const sizeOf = ({ fs }: StoreFolder, file: string): Effect.Effect<Option.Option<{ bytes: number; modified: Option.Option<Date> }>, ArchiveIOError> =>
  fs.stat(file).pipe(
    Effect.map((info) => (info.type === "File" ? Option.some({ bytes: Number(info.size), modified: info.mtime }) : Option.none())),
    Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "NotFound", () => Effect.succeedNone),
    Effect.mapError(ioError("read", file))
  )

const list = (store: StoreFolder) =>
  Effect.gen(function*() {
    const found = yield* Effect.forEach((yield* names(store)).filter((name) => artifactName.test(name)), (name) =>
      Effect.map(sizeOf(store, store.path.join(store.directory, name)), Option.map((info) => ({ sha256: name.slice(0, 64), bytes: info.bytes }))), {
      concurrency: 16
    })
    return Option.reduceCompact(found, [] as Array<StoredArtifact>, (all, artifact) => [...all, artifact])
  })

const sweepTemporary = (store: StoreFolder, olderThanMs: number) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    let removed = 0
    for (const name of (yield* names(store)).filter((entry) => entry.startsWith(temporaryPrefix) || isTemporaryName(entry))) {
      const file = store.path.join(store.directory, name)
      const modified = Option.flatMap(yield* sizeOf(store, file), (found) => found.modified)
      if (Option.isSome(modified) && now - modified.value.getTime() > olderThanMs) {
        yield* store.fs.remove(file, { force: true }).pipe(Effect.mapError(ioError("remove", file)))
        removed++
      }
    }
    return removed
  })

/** The store rooted at `directory` (created on the first put). */
export const make = (directory: string) =>
  Effect.gen(function*() {
    const store: StoreFolder = { fs: yield* FileSystem.FileSystem, path: yield* Path.Path, directory }
    const listed = list(store)
    return ArtifactStore.of({
      directory,
      put: (bytes, options) => put(store, bytes, options),
      putFile: (file, options) => putFile(store, file, options),
      has: (sha256) => (isSha256(sha256) ? exists(store, artifactPath(store, sha256)) : Effect.succeed(false)),
      path: (sha256) => artifactPath(store, sha256),
      read: (sha256) => read(store, sha256),
      signature: (sha256) => readSignature(store, sha256),
      remove: (sha256) => remove(store, sha256),
      size: Effect.map(listed, (artifacts) => ({
        path: directory,
        count: artifacts.length,
        bytes: artifacts.reduce((sum, artifact) => sum + artifact.bytes, 0)
      } satisfies ArtifactStoreSize)),
      list: listed,
      sweepTemporary: (olderThanMs) => sweepTemporary(store, olderThanMs)
    })
  })

/** The store at `artifacts_path` of the configuration. */
export const layer: Layer.Layer<ArtifactStore, never, HostConfig | FileSystem.FileSystem | Path.Path> = Layer.effect(
  ArtifactStore,
  Effect.flatMap(HostConfig, ({ paths }) => make(paths.artifacts))
)
