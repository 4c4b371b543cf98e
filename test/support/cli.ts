import { spawn } from "node:child_process"
import { afterEach } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { activeDatabase } from "./databases.js"

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
export const hostBin = join(repoRoot, "bin", "host.js")
export const fixture = (...parts: ReadonlyArray<string>) => join(repoRoot, "fixtures", ...parts)

export interface HostRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the built `bin/host.js` as a real child process. Inside describeDatabases it uses the test's
 * database (HOST_DATABASE_URL), unless `options.env` says otherwise.
 */
export const runHost = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Readonly<Record<string, string | undefined>> } = {}
): Promise<HostRun> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries({ ...process.env, NO_COLOR: "1", ...options.env })) {
      if (value !== undefined && !key.startsWith("HOST_")) env[key] = value
    }
    for (const [key, value] of Object.entries({ ...activeDatabase()?.env, ...options.env })) if (value !== undefined) env[key] = value
    const child = spawn(process.execPath, [hostBin, ...args], { cwd: options.cwd ?? repoRoot, env })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

/** A fresh temporary folder, removed by the returned cleanup. */
export const tempDir = (prefix = "host-test-"): { readonly path: string; readonly cleanup: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

/** A `temp(prefix)` whose folders are removed after each test of the file that calls this. */
export const tempDirsPerTest = (): ((prefix: string) => string) => {
  const cleanups: Array<() => void> = []
  afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()))
  return (prefix) => {
    const dir = tempDir(prefix)
    cleanups.push(dir.cleanup)
    return dir.path
  }
}
