// Extension trees the reconcile and database benches seed: one small extension per id, written as a
// source folder (without checksums) or as an installed tree (with them, as `host add` leaves it).
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
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
