import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { generateToken } from "../../src/panel/Tokens.js"
import { cryptoIds, Ids, randomBase64Url, randomHex, uuid } from "../../src/system/Ids.js"
import { runtimeVersions } from "../../src/system/RuntimeVersions.js"

// system/Ids: the ids and random tokens of the server come from one Reference a test can replace
// (docs/decisions.md "Ids, atomic files, runtime versions"); without one, Web Crypto.

const fixed = Ids.of({ uuid: Effect.succeed("11111111-2222-4333-8444-555555555555"), bytes: (count) => Effect.succeed(new Uint8Array(count).fill(0xfe)) })

describe("Ids", () => {
  it.effect("a provided Ids decides uuids, random bytes and the tokens made from them", () =>
    Effect.gen(function*() {
      expect(yield* uuid).toBe("11111111-2222-4333-8444-555555555555")
      expect(yield* randomHex(3)).toBe("fefefe")
      expect(yield* randomBase64Url(3)).toBe("_v7-")
      expect(yield* generateToken).toBe(`host_${"fe".repeat(24)}`)
    }).pipe(Effect.provideService(Ids, fixed)))

  it.effect("the default draws fresh values from Web Crypto", () =>
    Effect.gen(function*() {
      const [a, b] = [yield* uuid, yield* uuid]
      expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(a).not.toBe(b)
      expect((yield* cryptoIds.bytes(16)).length).toBe(16)
      expect(yield* generateToken).toMatch(/^host_[0-9a-f]{48}$/)
    }))

  it("runtimeVersions: Host's, the panel's and PHP as reported, and this process's Node.js", () => {
    expect(runtimeVersions("1.4.0", { version: "1.11.3", php: "8.3.1" })).toEqual({ host: "1.4.0", panel: "1.11.3", php: "8.3.1", node: process.versions.node })
    expect(runtimeVersions("1.4.0", undefined)).toEqual({ host: "1.4.0", panel: undefined, php: undefined, node: process.versions.node })
  })
})
