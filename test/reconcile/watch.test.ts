import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { fixture, hostBin, tempDir } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"
import { until } from "../support/wait.js"

it("--watch applies the file at start and again after each change", async () => {
  const root = tempDir("host-root-")
  const file = join(root.path, "desired-state", "extensions.yaml")
  mkdirSync(join(root.path, "desired-state"))
  writeFileSync(file, `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n`)
  const child = spawn(process.execPath, [hostBin, "reconcile", "--watch", "--root", root.path], { env: { ...process.env, NO_COLOR: "1" } })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  try {
    await until(() => stderr.includes("watching"), "the first run")
    expect(inspectDatabase(root.path).extensions).toEqual([{ extension_id: "acme/hello-world", version: "1.0.0", enabled: 1 }])
    writeFileSync(file, `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ${fixture("extensions", "hello-world")} }\n    enabled: false\n`)
    await until(() => inspectDatabase(root.path).extensions[0]?.enabled === 0, "the change to be applied")
    writeFileSync(file, "host: [broken\n")
    await until(() => stderr.includes("error: reconcile:"), "the error to be reported")
    expect(child.exitCode).toBeNull()
  } finally {
    child.kill("SIGTERM")
    root.cleanup()
  }
})
