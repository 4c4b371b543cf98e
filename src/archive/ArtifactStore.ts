import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, Data, Effect, Layer, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { HostConfig } from "../config/HostConfig.js"
import { type ArchiveIOError, ioError } from "./ArchiveErrors.js"
import { sha256Hex } from "./Tree.js"
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

/** The store rooted at `directory` (created on the first put). */
export const make = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path

    const artifactPath = (sha256: string) => path.join(directory, `${sha256}.host`)
    // Written before its name (the sha256) is known, so not an AtomicFile: its own prefix, which prune clears.
    const temporary = Effect.map(uuid, (id) => path.join(directory, `${temporaryPrefix}${id}`))

    const ensureDirectory = fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(ioError("create", directory)))

    const exists = (file: string) => fs.exists(file).pipe(Effect.mapError(ioError("read", file)))

    /** Renames a complete temporary file to its artifact name, or drops it if that artifact exists. */
    const settle = (tmp: string, sha256: string) =>
      Effect.gen(function*() {
        const target = artifactPath(sha256)
        if (yield* exists(target)) {
          yield* fs.remove(tmp, { force: true }).pipe(Effect.mapError(ioError("remove", tmp)))
        } else {
          yield* fs.rename(tmp, target).pipe(Effect.mapError(ioError("rename", target)))
        }
        return sha256
      })

    /** Runs `write` on a fresh temporary file; the file is removed when anything fails. */
    const withTemporary = <A, E>(write: (tmp: string) => Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        yield* ensureDirectory
        const tmp = yield* temporary
        return yield* write(tmp).pipe(Effect.tapErrorCause(() => Effect.ignore(fs.remove(tmp, { force: true }))))
      })

    /** Writes `bytes` to `file` and flushes them to the disk before the rename makes them visible. */
    const writeFlushed = (file: string, bytes: Uint8Array) =>
      Effect.scoped(
        Effect.gen(function*() {
          const handle = yield* fs.open(file, { flag: "wx" })
          yield* handle.writeAll(bytes)
          yield* handle.sync
        })
      ).pipe(Effect.mapError(ioError("write", file)))

    const signaturePath = (sha256: string) => `${artifactPath(sha256)}.sig`

    const readSignature = (sha256: string) =>
      Effect.gen(function*() {
        const file = signaturePath(sha256)
        if (!isSha256(sha256) || !(yield* exists(file))) return undefined
        return yield* fs.readFileString(file).pipe(Effect.mapError(ioError("read", file)))
      })

    /** Writes (or replaces) the signature beside an artifact (system/AtomicFile.ts). */
    const keepSignature = (sha256: string, signature: string) =>
      Effect.gen(function*() {
        if ((yield* readSignature(sha256)) === signature) return
        const target = signaturePath(sha256)
        yield* writeFileAtomic(target, signature).pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(Path.Path, path), Effect.mapError(ioError("write", target)))
      })

    const put = Effect.fn("ArtifactStore.put")(function*(bytes: Uint8Array, options: PutOptions = {}) {
      const sha256 = sha256Hex(bytes)
      if (!(yield* exists(artifactPath(sha256)))) {
        yield* withTemporary((tmp) => Effect.zipRight(writeFlushed(tmp, bytes), settle(tmp, sha256)))
      }
      if (options.detachedSignature !== undefined) yield* keepSignature(sha256, options.detachedSignature)
      return sha256
    })

    const putFile = (file: string, options: PutOptions = {}) =>
      withTemporary((tmp) =>
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
          const sha256 = yield* settle(tmp, hash.digest("hex"))
          if (options.detachedSignature !== undefined) yield* keepSignature(sha256, options.detachedSignature)
          return sha256
        })
      ).pipe(Effect.withSpan("ArtifactStore.putFile"))

    const checked = (sha256: string) =>
      isSha256(sha256)
        ? Effect.succeed(sha256)
        : Effect.fail(new ArtifactUnavailable({ sha256, reason: "invalid-digest", path: directory }))

    const read = Effect.fn("ArtifactStore.read")(function*(sha256: string) {
      const file = artifactPath(yield* checked(sha256))
      if (!(yield* exists(file))) return yield* new ArtifactUnavailable({ sha256, reason: "missing", path: file })
      const bytes = yield* fs.readFile(file).pipe(Effect.mapError(ioError("read", file)))
      if (sha256Hex(bytes) !== sha256) return yield* new ArtifactUnavailable({ sha256, reason: "corrupt", path: file })
      return bytes
    })

    const remove = (sha256: string) =>
      Effect.gen(function*() {
        if (!isSha256(sha256)) return false
        const file = artifactPath(sha256)
        if (!(yield* exists(file))) return false
        // The signature goes first: an artifact is never left looking signed by a stale signature file.
        yield* fs.remove(signaturePath(sha256), { force: true }).pipe(Effect.mapError(ioError("remove", signaturePath(sha256))))
        yield* fs.remove(file, { force: true }).pipe(Effect.mapError(ioError("remove", file)))
        return true
      })

    const names = Effect.gen(function*() {
      if (!(yield* exists(directory))) return [] as ReadonlyArray<string>
      return yield* fs.readDirectory(directory).pipe(Effect.mapError(ioError("read", directory)))
    })

    /** The size of a file, none when it is not a regular file or went away meanwhile (another replica pruning). */
    const sizeOf = (file: string): Effect.Effect<Option.Option<{ bytes: number; modified: Option.Option<Date> }>, ArchiveIOError> =>
      fs.stat(file).pipe(
        Effect.map((info) => (info.type === "File" ? Option.some({ bytes: Number(info.size), modified: info.mtime }) : Option.none())),
        Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "NotFound", () => Effect.succeedNone),
        Effect.mapError(ioError("read", file))
      )

    const list = Effect.gen(function*() {
      const found = yield* Effect.forEach((yield* names).filter((name) => artifactName.test(name)), (name) =>
        Effect.map(sizeOf(path.join(directory, name)), Option.map((info) => ({ sha256: name.slice(0, 64), bytes: info.bytes }))), {
        concurrency: 16
      })
      return Option.reduceCompact(found, [] as Array<StoredArtifact>, (all, artifact) => [...all, artifact])
    })

    const size = Effect.map(list, (artifacts) => ({
      path: directory,
      count: artifacts.length,
      bytes: artifacts.reduce((sum, artifact) => sum + artifact.bytes, 0)
    } satisfies ArtifactStoreSize))

    const sweepTemporary = (olderThanMs: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let removed = 0
        for (const name of (yield* names).filter((entry) => entry.startsWith(temporaryPrefix) || isTemporaryName(entry))) {
          const file = path.join(directory, name)
          const info = yield* sizeOf(file)
          const modified = Option.flatMap(info, (found) => found.modified)
          if (Option.isSome(modified) && now - modified.value.getTime() > olderThanMs) {
            yield* fs.remove(file, { force: true }).pipe(Effect.mapError(ioError("remove", file)))
            removed++
          }
        }
        return removed
      })

    return ArtifactStore.of({
      directory,
      put,
      putFile,
      has: (sha256) => (isSha256(sha256) ? exists(artifactPath(sha256)) : Effect.succeed(false)),
      path: artifactPath,
      read,
      signature: readSignature,
      remove,
      size,
      list,
      sweepTemporary
    })
  })

/** The store at `artifacts_path` of the configuration. */
export const layer: Layer.Layer<ArtifactStore, never, HostConfig | FileSystem.FileSystem | Path.Path> = Layer.effect(
  ArtifactStore,
  Effect.flatMap(HostConfig, ({ paths }) => make(paths.artifacts))
)
