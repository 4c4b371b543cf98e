import { Effect, Either, Option, Schema } from "effect"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { sha256Hex } from "../system/Hash.js"
import type { Problem } from "../domain/Problems.js"
import { readYaml, type YamlLimits } from "../domain/YamlText.js"

// The parsed desired-state file, remembered under storage/host/cache by the sha256 of its text: parsing
// YAML is most of what reading a file of hundreds of extensions costs, and the file rarely changes
// between two runs (docs/decisions.md, "The parsed desired state is cached by content"). Only the parse
// is remembered: the value is decoded with its Schema on every run, as if just parsed. A value that
// JSON would not give back as it is (a non-finite number, say) is not remembered; anything unreadable in
// the cache file is a miss, and a cache that cannot be written only costs the speed-up.

const CacheFile = Schema.Struct({ format: Schema.Literal(1), key: Schema.String, value: Schema.Unknown })
const decodeCacheFile = Schema.decodeUnknownOption(CacheFile)

/** Whether JSON gives `value` back exactly: plain objects, arrays, strings, booleans, null, finite numbers. */
const jsonFaithful = (value: unknown): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0)
  if (Array.isArray(value)) return value.every(jsonFaithful)
  if (typeof value !== "object") return false
  const prototype = Object.getPrototypeOf(value)
  return (prototype === Object.prototype || prototype === null) &&
    !Object.hasOwn(value, "__proto__") &&
    Object.values(value).every(jsonFaithful)
}

/** readYaml(text, limits), from `file` when it holds the parse of this very text. */
export const readYamlCached = (
  text: string,
  limits: YamlLimits,
  file: string
): Effect.Effect<Either.Either<unknown, ReadonlyArray<Problem>>> =>
  Effect.sync(() => {
    const key = `${sha256Hex(text)}:${limits.maxBytes}:${limits.maxEntries}`
    const cached = Option.flatMap(Option.liftThrowable(() => JSON.parse(readFileSync(file, "utf8")) as unknown)(), decodeCacheFile)
    if (Option.isSome(cached) && cached.value.key === key) return Either.right(cached.value.value)
    const parsed = readYaml(text, limits)
    if (Either.isRight(parsed) && jsonFaithful(parsed.right)) {
      try {
        mkdirSync(dirname(file), { recursive: true })
        const temporary = `${file}.${process.pid}`
        writeFileSync(temporary, JSON.stringify({ format: 1, key, value: parsed.right }))
        renameSync(temporary, file)
      } catch {
        // An unwritable storage folder: the next run parses again.
      }
    }
    return parsed
  })
