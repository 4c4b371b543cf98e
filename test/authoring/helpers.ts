import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect } from "vitest"
import { type HostRun, runHost } from "../support/cli.js"

// Shared steps of the authoring tests: the author's commands, run as real `bin/host.js` processes.

/** `host <args>` that must succeed; the failure message carries both streams. */
export const mustRun = async (args: ReadonlyArray<string>, options: { readonly cwd?: string } = {}): Promise<HostRun> => {
  const run = await runHost(args, options)
  if (run.code !== 0) throw new Error(`host ${args.join(" ")} exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
  return run
}

export interface Scaffolded {
  readonly path: string
  readonly files: ReadonlyArray<string>
  readonly parts: Readonly<Record<string, boolean>>
}

/** `host new <id> --path <parent>/<name> --json …flags`. */
export const scaffold = async (parent: string, id: string, ...flags: ReadonlyArray<string>): Promise<Scaffolded> => {
  const path = join(parent, id.split("/")[1]!)
  const run = await mustRun(["new", id, "--path", path, "--json", ...flags], { cwd: parent })
  const result = JSON.parse(run.stdout) as Scaffolded
  expect(result.path).toBe(path)
  return result
}

/** What gives React away inside a bundle: its internals and its element marker. */
export const reactMarkers = ["__SECRET_INTERNALS_DO_NOT_USE_OR_YOU_WILL_BE_FIRED", "react.element", "react.fragment", "ReactCurrentOwner", "useSyncExternalStore"]

export const expectNoReactInside = (bundleFile: string) => {
  const text = readFileSync(bundleFile, "utf8")
  for (const marker of reactMarkers) expect(text, `${bundleFile} holds ${marker}`).not.toContain(marker)
  return text
}
