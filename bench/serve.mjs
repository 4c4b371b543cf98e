import { spawn } from "node:child_process"

// `host serve` for the benches: started on a free port, resolved once /host/ready answers 200, with the time
// from spawn to ready (the startup figures) and its stderr for failures. Shared by every bench that needs a
// running server, so they all start and stop it the same way.

/**
 * @param {{ bin: string, root: string, env: Record<string, string | undefined>, args?: ReadonlyArray<string>, readyWithinMs?: number }} options
 * @returns {Promise<{ child: import("node:child_process").ChildProcess, url: string, readyMs: number, stderr: () => string }>}
 */
export const startServe = ({ bin, root, env, args = [], readyWithinMs = 60_000 }) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [bin, "--root", root, "serve", "--port", "0", ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let url
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => reject(new Error(`host serve exited (${code}): ${stderr}`)))
    child.stdout.on("data", async (chunk) => {
      stdout += chunk
      const match = /Listening on (http:\/\/\S+)/.exec(stdout)
      if (match === null || url !== undefined) return
      url = match[1]
      for (const deadline = Date.now() + readyWithinMs; Date.now() < deadline;) {
        const response = await fetch(`${url}/host/ready`).catch(() => undefined)
        if (response?.status === 200) {
          child.removeAllListeners("exit")
          return resolve({ child, url, readyMs: Number(process.hrtime.bigint() - started) / 1e6, stderr: () => stderr })
        }
        await new Promise((wake) => setTimeout(wake, 5))
      }
      reject(new Error(`not ready in ${readyWithinMs / 1000} s: ${stderr}`))
    })
  })

/**
 * Stops a server the bench started: SIGTERM, then SIGKILL if it is still running 5 s later (a bench must
 * not hang on a server that will not stop). Resolves once it exited; at once if it had already.
 * @param {import("node:child_process").ChildProcess} child
 * @returns {Promise<void>}
 */
export const stopServer = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 5_000).unref()
  })
