import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, TestClock, TestContext } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { cacheReport, writeCache } from "../../src/registry/CacheFile.js"
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
      signed_by: "ab",
      serial: 3,
      highest_serial: 3
    }, null, 2)
    const expected = `${envelope.replace('"(the index)"', JSON.stringify(cache.registry))}\n`
    expect(readFileSync(file, "utf8")).toBe(expected)
    expect(Buffer.from(written.bytes).equals(Buffer.from(expected, "utf8"))).toBe(true)
  })
})
