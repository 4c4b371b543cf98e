import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { desiredStateYamlLimits, readYaml } from "../../src/domain/YamlText.js"
import { readYamlCached } from "../../src/reconcile/ParsedYamlCache.js"
import { tempDir } from "../support/cli.js"

// reconcile/ParsedYamlCache: the parse of a desired-state text is remembered by its sha256 and used only
// for that very text.

const text = 'host: "1.0"\nextensions:\n  acme/one: "^1.0"\n  acme/two:\n    settings: { limit: 3, name: x }\n'

describe("parsed desired-state cache", () => {
  it("gives what parsing gives, and remembers it for the same text only", async () => {
    const dir = tempDir()
    const file = join(dir.path, "cache", "desired-state.json")
    const first = await Effect.runPromise(readYamlCached(text, desiredStateYamlLimits, file))
    expect(first).toEqual(readYaml(text, desiredStateYamlLimits))
    // What the next run reads is the file: a value planted under this text's key is what it gets...
    const stored = JSON.parse(readFileSync(file, "utf8")) as { key: string }
    writeFileSync(file, JSON.stringify({ format: 1, key: stored.key, value: { planted: true } }))
    expect(await Effect.runPromise(readYamlCached(text, desiredStateYamlLimits, file))).toMatchObject({ right: { planted: true } })
    // ...and another text (one character changed) is parsed again.
    const changed = text.replace("limit: 3", "limit: 4")
    expect(await Effect.runPromise(readYamlCached(changed, desiredStateYamlLimits, file))).toEqual(readYaml(changed, desiredStateYamlLimits))
    dir.cleanup()
  })

  it("does not remember a parse JSON would change, nor a failed parse", async () => {
    const dir = tempDir()
    const file = join(dir.path, "desired-state.json")
    const infinite = 'host: "1.0"\nextensions:\n  acme/one:\n    settings: { limit: .inf }\n'
    expect(await Effect.runPromise(readYamlCached(infinite, desiredStateYamlLimits, file))).toEqual(readYaml(infinite, desiredStateYamlLimits))
    expect(existsSync(file)).toBe(false)
    const broken = "host: [\n"
    expect((await Effect.runPromise(readYamlCached(broken, desiredStateYamlLimits, file)))._tag).toBe("Left")
    expect(existsSync(file)).toBe(false)
    dir.cleanup()
  })
})
