import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

// The run's closing line: which suites were skipped for want of a program, and the one `apt-get install`
// that brings them all (test/support/programs.ts records each skip; DESIGN.md §16, §22).

interface Skip {
  readonly suite: string
  readonly packages: ReadonlyArray<string>
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "host-test-programs-"))
  const file = join(dir, "skipped.jsonl")
  writeFileSync(file, "")
  project.provide("hostTestSkippedSuites", file)
  return () => {
    const skips: Array<Skip> = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Skip)
    rmSync(dir, { recursive: true, force: true })
    if (skips.length === 0) return
    const suites = [...new Set(skips.map((skip) => skip.suite))]
    const packages = [...new Set(skips.flatMap((skip) => skip.packages))].sort()
    process.stdout.write(
      `suites skipped for want of a program (${suites.length}): ${suites.map((suite) => `"${suite}"`).join(", ")}; ` +
        `apt-get install ${packages.join(" ")} to run them (HOST_TEST_REQUIRE_PROGRAMS=1 fails instead of skipping)\n`
    )
  }
}
