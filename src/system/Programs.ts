import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { accessSync, constants, statSync } from "node:fs"
import { join } from "node:path"

// The machine's programs as `host setup` runs them (docs/panels.md "Five minutes"): finding one on the
// PATH, and running one to its end with its output kept (the web server's test, its reload, systemctl).

/** The first `name` on `env.PATH` that is an executable file. */
export const onPath = (names: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  for (const folder of (env.PATH ?? "").split(":").filter((f) => f !== "")) {
    for (const name of names) {
      const candidate = join(folder, name)
      try {
        if (statSync(candidate).isFile()) {
          accessSync(candidate, constants.X_OK)
          return candidate
        }
      } catch {
        // not here, or not executable
      }
    }
  }
  return undefined
}

export interface ProgramRun {
  /** The command line as a person would type it. */
  readonly command: string
  readonly exitCode: number | null
  /** stdout and stderr together, trimmed. */
  readonly output: string
}

const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`)

/** A command line for people: each word quoted when the shell would need it. */
export const commandLine = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): string =>
  [...Object.entries(env).map(([k, v]) => `${k}=${shellWord(v)}`), ...argv.map(shellWord)].join(" ")

/** Runs `argv` to its end (at most `timeoutMs`), with `env` added to this process's environment. */
export const runProgram = (
  argv: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly extraEnv?: Readonly<Record<string, string>>; readonly timeoutMs?: number } = {}
): Effect.Effect<ProgramRun> =>
  Effect.sync(() => {
    const result = spawnSync(argv[0]!, argv.slice(1), {
      encoding: "utf8",
      timeout: options.timeoutMs ?? 60_000,
      env: { ...process.env, ...options.env, ...options.extraEnv }
    })
    const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error === undefined ? "" : result.error.message}`.trim()
    return { command: commandLine(argv, options.extraEnv), exitCode: result.status, output }
  })
