import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, TestClock, TestContext } from "effect"
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { cacheReport, readCache, writeCache } from "../../src/registry/CacheFile.js"
import { tempDir } from "../support/cli.js"

// `cacheReport` answers for a file this process wrote from what it wrote, as long as the file still holds
// exactly those bytes (docs/decisions.md "registry:sync reads what it wrote once"): the answer must be the
// one a fresh read of the file gives, and a file changed since is read again.

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

const run = <A, E>(effect: Effect.Effect<A, E, NodeContext.NodeContext>) => Effect.runPromise(Effect.provide(effect, NodeContext.layer))

// Both reports are read at one fixed instant: a report's age counts whole seconds, and two reads on the real
// clock differed by one when a second turned between them.
const runAt = <A, E>(instant: string, effect: Effect.Effect<A, E, NodeContext.NodeContext>) =>
  run(TestClock.setTime(Date.parse(instant)).pipe(Effect.zipRight(effect), Effect.provide(TestContext.TestContext)))

const entry = (id: string) => ({
  id,
  name: `Name of ${id}`,
  description: "é and \u2603: text that is not ASCII",
  latest_version: "1.0.0",
  versions: ["1.0.0"],
  license: "MIT",
  authors: [],
  tags: [],
  requires: {},
  dependencies: {},
  archive_url: "{archive}"
})

const document = (count: number, fetchedAt: Date) => ({
  fetched_at: fetchedAt,
  registry_url: "file:///registry",
  registry: { version: "1.0", extensions: Array.from({ length: count }, (_, n) => entry(`acme/ext-${n}`)) },
  serial: 3,
  highest_serial: 3
})

const setup = () => {
  const dir = tempDir("host-cache-report-")
  cleanups.push(dir.cleanup)
  return join(dir.path, "registry-cache.json")
}

describe("cacheReport after writeCache", () => {
  it("answers from what was written exactly as from reading the file", async () => {
    const file = setup()
    const written = await run(writeCache(file, document(3, new Date("2026-01-02T03:04:05.678Z"))))
    const instant = "2026-03-01T00:00:00.500Z"
    const remembered = await runAt(instant, cacheReport(file, 3600, written))
    const read = await runAt(instant, cacheReport(file, 3600))
    expect(remembered).toEqual(read)
    expect(read).toMatchObject({ last_sync: "2026-01-02T03:04:05.678Z", age_seconds: 5000154, extensions: 3, status: "expired" })
    expect(read.cache_size_bytes).toBe(written.bytes.length)
  })

  it("reads the file again when it changed since: another cache, or one that does not decode", async () => {
    const file = setup()
    const written = await run(writeCache(file, document(3, new Date())))
    await run(writeCache(file, document(5, new Date("2026-01-01T00:00:00.000Z"))))
    const instant = "2026-03-01T00:00:00.500Z"
    const changed = await runAt(instant, cacheReport(file, 0, written))
    expect(changed).toEqual(await runAt(instant, cacheReport(file, 0)))
    expect(changed).toMatchObject({ last_sync: "2026-01-01T00:00:00.000Z", extensions: 5, status: "no-expiry" })

    writeFileSync(file, "{ not json")
    const broken = await run(cacheReport(file, 0, written))
    expect(broken).toEqual(await run(cacheReport(file, 0)))
    expect(broken).toMatchObject({ status: "missing", last_sync: null, extensions: 0, cache_size_bytes: 0 })

    writeFileSync(file, `{"fetched_at": "2026-01-01T00:00:00.000Z", "registry": {"extensions": [${"[".repeat(70)}${"]".repeat(70)}]}}`)
    const deep = await run(cacheReport(file, 0, written))
    expect(deep).toEqual(await run(cacheReport(file, 0)))
    expect(deep.status).toBe("missing")
  })
})

// The cache is encoded piece by piece (envelope, index, envelope) into one buffer (docs/decisions.md
// "registry:sync: fewer, larger steps"): its bytes are the UTF-8 of the text it always was, the envelope
// indented and the index on one line, text that is not ASCII included.
describe("writeCache", () => {
  it("writes the envelope indented and the index on one line, in UTF-8", async () => {
    const file = setup()
    const cache = { ...document(2, new Date("2026-01-02T03:04:05.678Z")), registry_url: "file:///r\u00e9gistry \"x\"", signed_by: "ab" }
    const written = await run(writeCache(file, cache))
    const envelope = JSON.stringify({
      fetched_at: "2026-01-02T03:04:05.678Z",
      registry_url: cache.registry_url,
      registry: "(the index)",
      // A keyed registry's cache records the sha256 of the index's line (readCache's `indexLater`).
      registry_sha256: createHash("sha256").update(JSON.stringify(cache.registry)).digest("hex"),
      signed_by: "ab",
      serial: 3,
      highest_serial: 3
    }, null, 2)
    const expected = `${envelope.replace('"(the index)"', JSON.stringify(cache.registry))}\n`
    expect(readFileSync(file, "utf8")).toBe(expected)
    expect(Buffer.from(written.bytes).equals(Buffer.from(expected, "utf8"))).toBe(true)
  })
})

// A forced sync of a keyed registry reads the old cache's envelope without parsing its index when the file is
// exactly what writeCache wrote and the index's line still has the recorded sha256 (docs/decisions.md "A
// forced sync reads a keyed cache's envelope only"). Whatever the file holds, the answer is a whole read's.
describe("readCache with the index read later", () => {
  const answer = async (file: string, indexLater: boolean) => {
    const read = await run(readCache(file, { indexLater }))
    if (read._tag !== "Read") return read
    const document = read.document()
    return { _tag: read._tag, header: read.header, bytes: read.bytes, document: Either.isRight(document) ? document.right : document.left }
  }
  const sameAsWhole = async (file: string) => {
    const later = await answer(file, true)
    expect(later).toEqual(await answer(file, false))
    return later
  }

  it("answers as a whole read for the cache written, an older one without the sha256, and any change to either", async () => {
    const file = setup()
    const keyed = { ...document(3, new Date("2026-01-02T03:04:05.678Z")), registry_url: "file:///r\u00e9gistry", signed_by: "ab" }
    await run(writeCache(file, keyed))
    const written = readFileSync(file, "utf8")
    expect(await sameAsWhole(file)).toMatchObject({ _tag: "Read", header: { signed_by: "ab", highest_serial: 3 } })
    // ... and without parsing the index until it is asked for.
    const parse = vi.spyOn(JSON, "parse")
    try {
      const read = await run(readCache(file, { indexLater: true }))
      expect(parse.mock.calls.filter(([text]) => String(text).includes("acme/ext-1"))).toEqual([])
      expect(read._tag === "Read" && Either.isRight(read.document())).toBe(true)
      expect(parse.mock.calls.filter(([text]) => String(text).includes("acme/ext-1")).length).toBe(1)
    } finally {
      parse.mockRestore()
    }

    // A cache written before the sha256 was (the same text without it) is read whole, with the same answer.
    const older = written.replace(/\n {2}"registry_sha256": "[0-9a-f]{64}",/, "")
    expect(older).not.toBe(written)
    writeFileSync(file, older)
    expect(await sameAsWhole(file)).toMatchObject({ _tag: "Read", header: { highest_serial: 3 } })

    const variants = [
      written.replace('"acme/ext-1"', '"acme/ext-9"'), // the index changed, still valid: the sha256 differs
      written.replace('"acme/ext-1",', '"acme/ext-1"'), // the index no longer JSON
      written.replace('"highest_serial": 3', '"highest_serial": 7'), // the envelope changed
      written.replace('"serial": 3', '"serial": "3"'), // the envelope refused by its schema
      written.replace('"signed_by": "ab"', '"signed_by": "ab",\n  "extra": [[[1]]]'), // a key of no cache
      written.replace('{\n  "fetched_at"', '{ "fetched_at"'), // the same JSON, other spaces
      written.replace(/\n}\n$/, "\n"), // cut short
      written.replace('"registry": {', '"registry": [').replace(/]},\n {2}"registry_sha256"/, ']],\n  "registry_sha256"') // not an object
    ]
    for (const variant of variants) {
      expect(variant).not.toBe(written)
      writeFileSync(file, variant)
      await sameAsWhole(file)
    }
    writeFileSync(file, "")
    expect(await sameAsWhole(file)).toMatchObject({ _tag: "Unreadable" })
  })

  it("reads a cache without a key (no sha256) whole", async () => {
    const file = setup()
    await run(writeCache(file, document(2, new Date("2026-01-02T03:04:05.678Z"))))
    expect(readFileSync(file, "utf8")).not.toContain("registry_sha256")
    expect(await sameAsWhole(file)).toMatchObject({ _tag: "Read", header: { highest_serial: 3 } })
  })
})
