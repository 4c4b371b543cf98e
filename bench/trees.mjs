// Extension trees the reconcile and database benches seed (and the page-load benches' panel root): one small extension per id, written as a
// source folder (without checksums) or as an installed tree (with them, as `host add` leaves it).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const sha = (data) => createHash("sha256").update(data).digest("hex")

/** The files of a bench extension: a manifest with one permission and a frontend bundle with one slot. */
export const benchExtensionFiles = (id, version = "1.0.0") => ({
  "extension.yaml": `host: "1.0"\nid: ${id}\nname: ${id}\nversion: ${version}\ndescription: bench\nlicense: MIT\nbackend:\n  permissions: [bench.view]\n`,
  "resources/frontend/dist/extension.js": `window.__HOST__.sdk.createExtension({ id: "${id}", slots: [{ slot: "dashboard.widgets", component: null }] })\n`
})

/** Writes `content` (path → text) under `root`; with `withChecksums`, also the `checksums.json` of those files. */
export const writeTree = (root, content, withChecksums) => {
  const checksums = {}
  for (const [path, text] of Object.entries(content)) {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), text)
    checksums[path] = sha(text)
  }
  const sorted = Object.fromEntries(Object.keys(checksums).sort().map((key) => [key, checksums[key]]))
  if (withChecksums) writeFileSync(join(root, "checksums.json"), `${JSON.stringify(sorted, null, 2)}\n`)
}

/**
 * A fresh panel root for the page-load benches: the embedded panel with one admin whose API token is `token`
 * and one server, a folder for extension sources, the environment without HOST_ variables, and `host(...)`
 * running the CLI on that root.
 */
export const benchPanelRoot = (prefix, bin, token) => {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`))
  const sources = mkdtempSync(join(tmpdir(), `${prefix}-src-`))
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("HOST_"))), NO_COLOR: "1" }
  const host = (...args) => execFileSync(process.execPath, [bin, "--root", root, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  mkdirSync(join(root, "config"), { recursive: true })
  writeFileSync(
    join(root, "config", "panel.yaml"),
    `panel: { name: Bench, version: 1.11.0, php: 8.2.0 }\nusers:\n  - { id: 1, username: admin, admin: true, token_sha256: ${createHash("sha256").update(token).digest("hex")} }\n` +
      `servers:\n  - { uuid: bench-1, name: Bench server, owner: admin }\n`
  )
  return { root, sources, env, host }
}
