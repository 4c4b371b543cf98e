import { NodeContext } from "@effect/platform-node"
import { Effect, Either } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { defaultLimits } from "../../src/archive/Archive.js"
import { emptyKeyring } from "../../src/archive/Signing.js"
import { buildRegistry, RegistryBuildRefused } from "../../src/usecases/RegistryBuild.js"
import { cleanupAll, everything, freshDir, gz, packageEntries, rawTar } from "../archive/helpers.js"

// `registry:build` reads its archives one after another in the folder's sorted order (docs/decisions.md
// "registry:build reads archives one after another"), so of several archives that fail, the first in that
// order is the one named, however early or late in its read each one fails.

afterEach(cleanupAll)

const build = (dir: string) =>
  Effect.runPromise(
    buildRegistry({
      dir,
      sign: false,
      secretKeySource: "HOST_SECRET_KEY",
      expiresDays: 30,
      now: new Date("2026-01-01T00:00:00Z"),
      limits: defaultLimits,
      keyring: emptyKeyring
    }).pipe(Effect.either, Effect.provide(NodeContext.layer))
  )

describe("registry:build over several failing archives", () => {
  it("names the first in sorted order, even when a later one fails earlier in its read", async () => {
    const dir = freshDir("host-rb-order-")
    // a.host fails late (its README differs from checksums.json, found after inflating and hashing) ...
    writeFileSync(join(dir, "a.host"), gz(rawTar(packageEntries({ "README.md": "hello\n" }, { listed: { "README.md": "other\n" } }))))
    // ... z.host at once (it is a folder, refused before any byte is read).
    mkdirSync(join(dir, "z.host"))
    const before = everything(dir)
    const result = await build(dir)
    expect(Either.isLeft(result)).toBe(true)
    const refusal = Either.getLeft(result).pipe((left) => left._tag === "Some" ? left.value : undefined)
    expect(refusal).toBeInstanceOf(RegistryBuildRefused)
    expect((refusal as RegistryBuildRefused).path).toBe(join(dir, "a.host"))
    expect((refusal as RegistryBuildRefused).detail).toMatch(/fails verification \(modified: README\.md/)
    expect(everything(dir)).toEqual(before)
  })
})
