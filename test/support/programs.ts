import { accessSync, appendFileSync, constants, statSync } from "node:fs"
import { delimiter, join } from "node:path"
import { describe, inject, it } from "vitest"

// Suites that need a system program (php, nginx, caddy, apache2ctl, chromium) declare it here. On a fresh
// machine without the program the suite is skipped, and the run's closing line (test/support/programs-setup.ts)
// names it with the `apt-get install` that brings it; with HOST_TEST_REQUIRE_PROGRAMS=1 (.ci/run) the suite
// fails instead, naming the program and its package (DESIGN.md §16, §22).

/** The Debian package that puts each program on the PATH. */
export const programPackages = {
  php: "php8.2-cli",
  nginx: "nginx-light",
  caddy: "caddy",
  apache2ctl: "apache2",
  apachectl: "apache2",
  apache2: "apache2",
  chromium: "chromium",
  "systemd-analyze": "systemd",
  setpriv: "util-linux"
} as const
export type Program = keyof typeof programPackages

export const programsRequired = process.env.HOST_TEST_REQUIRE_PROGRAMS === "1"

/** The program's full path when an executable file of that name is on `path` (default: this process's PATH). */
export const findProgram = (name: string, path: string | undefined = process.env.PATH): string | undefined => {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, name)
    try {
      if (!statSync(candidate).isFile()) continue
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here: the next PATH entry
    }
  }
  return undefined
}

export const missingPrograms = (programs: ReadonlyArray<Program>): Array<Program> => programs.filter((program) => findProgram(program) === undefined)

/** `apt-get install …` for the packages that bring these programs (each package once). */
export const aptInstall = (programs: ReadonlyArray<Program>): string =>
  `apt-get install ${[...new Set(programs.map((program) => programPackages[program]))].join(" ")}`

const missingMessage = (missing: ReadonlyArray<Program>): string =>
  `${missing.map((program) => `${program} (${programPackages[program]})`).join(", ")} not on the PATH: ${aptInstall(missing)} ` +
  `(HOST_TEST_REQUIRE_PROGRAMS=1 makes a missing program a failure instead of a skip)`

declare module "vitest" {
  export interface ProvidedContext {
    /** The file where skipped suites are recorded, one JSON line each, for the run's closing line. */
    readonly hostTestSkippedSuites: string
  }
}

/** Records a skipped suite for the closing line; outside a run with programs-setup.ts there is nowhere to record. */
const recordSkip = (suite: string, missing: ReadonlyArray<Program>): void => {
  let file: string | undefined
  try {
    file = inject("hostTestSkippedSuites")
  } catch {
    file = undefined
  }
  if (file === undefined || file === "") return
  appendFileSync(file, `${JSON.stringify({ suite, missing, packages: missing.map((program) => programPackages[program]) })}\n`)
}

export interface ProgramsCheck {
  /** The declared programs this machine lacks. */
  readonly missing: ReadonlyArray<Program>
  /** True when the suite should be skipped (programs missing and not required). */
  readonly skip: boolean
  /** Throws the "not on the PATH: apt-get install …" error when a program is missing. */
  readonly assert: () => void
}

/**
 * The check for a suite that needs `programs`, recorded under `suite` when it is skipped. For
 * `describeNeeding(check, …)`, or `describe.skipIf(check.skip)` with `check.assert()` where the program is
 * first used; `describeWithPrograms` does it in one call.
 */
export const requirePrograms = (
  programs: ReadonlyArray<Program>,
  suite: string,
  options: {
    /** Whether a program is missing (default: not on the PATH). */
    readonly isMissing?: (program: Program) => boolean
    /** Fail instead of skipping (default: HOST_TEST_REQUIRE_PROGRAMS=1). */
    readonly required?: boolean
  } = {}
): ProgramsCheck => {
  const missing = programs.filter(options.isMissing ?? ((program) => findProgram(program) === undefined))
  const skip = missing.length > 0 && !(options.required ?? programsRequired)
  if (skip) recordSkip(suite, missing)
  return {
    missing,
    skip,
    assert: () => {
      if (missing.length > 0) throw new Error(`${suite}: ${missingMessage(missing)}`)
    }
  }
}

/** `describe(name, fn)` for a suite that needs `programs`: skipped without them, failing without them under HOST_TEST_REQUIRE_PROGRAMS=1. */
export const describeWithPrograms = (programs: ReadonlyArray<Program>, name: string, fn: () => void): void => {
  describeNeeding(requirePrograms(programs, name), name, fn)
}

/**
 * `describe` under a check: skipped, or (a program missing under HOST_TEST_REQUIRE_PROGRAMS=1) failing the
 * file as it is collected, before any hook of the file (a file-level `beforeAll` starting a server) runs
 * and fails for the same reason with a less helpful message.
 */
export const describeNeeding = (check: ProgramsCheck, name: string, fn: () => void): void => {
  if (!check.skip) check.assert()
  describe.skipIf(check.skip)(name, fn)
}

/** `it(name, fn)` for one test that needs `programs` inside a suite that otherwise does not. */
export const itWithPrograms = (programs: ReadonlyArray<Program>, name: string, fn: () => unknown, timeout?: number): void => {
  const check = requirePrograms(programs, name)
  it.skipIf(check.skip)(
    name,
    async () => {
      check.assert()
      await fn()
    },
    timeout
  )
}
