import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { replicaDirectory } from "../runtime/ReplicaFiles.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// Which archive each installed tree of this panel root was made from (docs/operations.md "Running
// replicas"): `storage/host/replica/trees/<vendor>/<name>.json` holding `{sha256, version}`. The database
// says what should be installed; these marks say what this root's disk holds, so a server sharing the
// database with other replicas converges only the trees whose mark differs from the record. They are
// written by whoever puts a tree in place on this root — an operation (after it commits, still holding
// the lock) or the server's convergence — and removed with the tree.

export const TreeMark = Schema.Struct({ sha256: Schema.String, version: Schema.String })
export type TreeMark = typeof TreeMark.Type

const decodeMark = Schema.decodeUnknownOption(Schema.parseJson(TreeMark))

const markFile = (extensionId: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    return path.join(yield* replicaDirectory, "trees", ...`${extensionId}.json`.split("/"))
  })

/** The mark of an extension's tree on this root, if one was written. */
export const readMark = (extensionId: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* markFile(extensionId)
    const text = yield* fs.readFileString(file).pipe(Effect.option)
    return Option.flatMap(text, decodeMark)
  })

/** Records that the tree of `extensionId` is the archive `sha256` (written whole: temp file, then rename). */
export const writeMark = (extensionId: string, mark: TreeMark) =>
  Effect.gen(function*() {
    const file = yield* markFile(extensionId)
    yield* writeFileAtomic(file, JSON.stringify(mark))
  })

export const removeMark = (extensionId: string) =>
  Effect.flatMap(markFile(extensionId), (file) => Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(file, { force: true })))

/** The ids that have a mark on this root (`vendor/name`). */
export const markedIds = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const trees = path.join(yield* replicaDirectory, "trees")
  const vendors = yield* fs.readDirectory(trees).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
  const ids = yield* Effect.forEach(vendors, (vendor) =>
    fs.readDirectory(path.join(trees, vendor)).pipe(
      Effect.orElseSucceed((): ReadonlyArray<string> => []),
      Effect.map((names) => names.filter((name) => name.endsWith(".json")).map((name) => `${vendor}/${name.slice(0, -".json".length)}`))
    ))
  return ids.flat()
})
