import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, repoRoot, runHost, tempDir } from "../support/cli.js"
import {
  answerProblems,
  archiveMutation,
  manifestCase,
  mutateArchive,
  rootProblems,
  runInProcess,
  sandboxProblems,
  writeManifestCase
} from "../support/reliability.js"

// R2 sized for CI (docs/operations.md#reliability-suites): generated manifests and mutated archives
// through the real CLI in this process. bench/fuzz.bench.mjs runs the same properties 10,000 and
// 1,000 times and reports the slowest answer against the 5 s bound.

const manifestRuns = Number(process.env.HOST_FUZZ_MANIFESTS ?? 200)
const archiveRuns = Number(process.env.HOST_FUZZ_ARCHIVES ?? 100)

let sandbox: { readonly path: string; readonly cleanup: () => void }
let root: string
let source: string
let slowest = 0

beforeAll(() => {
  sandbox = tempDir("host-fuzz-")
  root = join(sandbox.path, "root")
  source = join(sandbox.path, "src")
  mkdirSync(root)
  mkdirSync(source)
})
afterAll(() => {
  sandbox.cleanup()
  console.log(`R2 (CI size): slowest answer ${Math.round(slowest)} ms`)
})

const host = async (argv: ReadonlyArray<string>) => {
  const run = await runInProcess(repoRoot, [...argv, "--root", root], sandbox.path)
  slowest = Math.max(slowest, run.ms)
  return run
}

const report = (label: string, run: { code: number; stdout: string; stderr: string }, problems: ReadonlyArray<string>) =>
  problems.length === 0 ? [] : [`${label}: ${problems.join("; ")} (exit ${run.code}; stderr ${JSON.stringify(run.stderr.slice(0, 300))})`]

describe("R2: fuzzed manifests and mutated archives", () => {
  it(`answers ${manifestRuns} generated manifests cleanly, and never half-installs one`, async () => {
    let index = 0
    await fc.assert(
      fc.asyncProperty(manifestCase, async (testCase) => {
        const folder = join(source, "extension")
        writeManifestCase(folder, testCase)
        const problems: Array<string> = []
        const validated = await host(["validate", folder, "--json"])
        problems.push(...report("validate", validated, answerProblems(validated, true)))
        if (validated.code === 0 && !JSON.parse(validated.stdout).valid) problems.push("validate: exit 0 for an invalid manifest")
        // Every fourth case is installed too (and removed again when it installs).
        if (index++ % 4 === 0) {
          const added = await host(["add", folder, "--json"])
          problems.push(...report("add", added, answerProblems(added, true)))
          if (added.code === 0) {
            const removed = await host(["remove", JSON.parse(added.stdout).id, "--json", "--force"])
            problems.push(...report("remove", removed, answerProblems(removed, true)))
          }
          problems.push(...rootProblems(root))
        }
        problems.push(...sandboxProblems(sandbox.path, ["root", "src"]))
        if (problems.length > 0) throw new Error(`${problems.join("\n")}\nmanifest:\n${testCase.yaml.slice(0, 600)}`)
      }),
      { numRuns: manifestRuns, endOnFailure: true }
    )
  }, 600_000)

  it(`answers ${archiveRuns} mutated archives cleanly, and never writes outside the root or half-installs`, async () => {
    const exported = await runHost(["export", fixture("extensions", "hello-world"), "--output", `${sandbox.path}/base/`, "--json"])
    expect(exported.code).toBe(0)
    const base = new Uint8Array(readFileSync(JSON.parse(exported.stdout).archive))
    const expected = ["base", "root", "src"]
    await fc.assert(
      fc.asyncProperty(archiveMutation, async (mutation) => {
        const file = join(source, "mutated.host")
        writeFileSync(file, mutateArchive(base, mutation))
        const problems: Array<string> = []
        const verified = await host(["verify", file, "--json"])
        problems.push(...report("verify", verified, answerProblems(verified, true)))
        const added = await host(["add", file, "--json"])
        problems.push(...report("add", added, answerProblems(added, true)))
        if (added.code === 0) {
          const removed = await host(["remove", JSON.parse(added.stdout).id, "--json", "--force"])
          problems.push(...report("remove", removed, answerProblems(removed, true)))
        }
        problems.push(...rootProblems(root))
        problems.push(...sandboxProblems(sandbox.path, expected))
        if (problems.length > 0) {
          throw new Error(`${problems.join("\n")}\nmutation: ${JSON.stringify(mutation, (_, v) => (v instanceof Uint8Array ? `${v.length} bytes` : v))}`)
        }
      }),
      { numRuns: archiveRuns, endOnFailure: true }
    )
  }, 600_000)
})
