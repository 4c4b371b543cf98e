import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { createHash } from "node:crypto"
import { gzipSync } from "node:zlib"
import { Header, Pax } from "tar"
import { fixture, tempDir } from "../support/cli.js"

// Builders for the archive tests: real trees on disk, and raw tar streams written header by header
// (with tar's Header) so a test can put anything in them — absolute paths, links, devices, lies.

export const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex")

const cleanups: Array<() => void> = []
export const cleanupAll = () => cleanups.splice(0).forEach((cleanup) => cleanup())

export const freshDir = (prefix = "host-archive-"): string => {
  const dir = tempDir(prefix)
  cleanups.push(dir.cleanup)
  return dir.path
}

/** A copy of `fixtures/extensions/<name>` in a fresh temp folder. */
export const fixtureCopy = (name: string): string => {
  const target = join(freshDir(), name)
  cpSync(fixture("extensions", name), target, { recursive: true })
  return target
}

export const writeTree = (root: string, files: Readonly<Record<string, string | Uint8Array>>): string => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  return root
}

/** Every path under `root` (files and folders), relative, sorted: to check that nothing was written. */
export const everything = (root: string): ReadonlyArray<string> => {
  if (!existsSync(root)) return []
  return (readdirSync(root, { recursive: true }) as Array<string>).map(String).sort()
}

export interface RawEntry {
  readonly path: string
  readonly type?: "File" | "Directory" | "SymbolicLink" | "Link" | "CharacterDevice" | "BlockDevice" | "FIFO"
  readonly data?: string | Uint8Array
  readonly mode?: number
  readonly linkpath?: string
}

/** A tar stream of exactly these entries (pax records for long paths), ended by two zero blocks. */
export const rawTar = (entries: ReadonlyArray<RawEntry>): Buffer => {
  const parts: Array<Buffer> = []
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? "")
    const type = entry.type ?? "File"
    const header = new Header({
      path: entry.path,
      mode: entry.mode ?? (type === "Directory" ? 0o755 : 0o644),
      uid: 0,
      gid: 0,
      size: type === "File" ? data.length : 0,
      mtime: new Date(0),
      type,
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
      uname: "",
      gname: ""
    })
    const block = Buffer.alloc(512)
    if (header.encode(block)) parts.push(new Pax({ path: entry.path }).encode())
    parts.push(block)
    if (type === "File" && data.length > 0) {
      parts.push(data, Buffer.alloc((512 - (data.length % 512)) % 512))
    }
  }
  parts.push(Buffer.alloc(1024))
  return Buffer.concat(parts)
}

export const gz = (data: Uint8Array): Buffer => gzipSync(data)

export const manifestYaml = 'host: "1.0"\nid: acme/evil\nname: Evil\nversion: 1.0.0\ndescription: Test package.\nlicense: MIT\n'

export const checksumsOf = (files: Readonly<Record<string, string | Uint8Array>>): string => {
  const sorted: Record<string, string> = {}
  for (const key of Object.keys(files).sort()) sorted[key] = sha256(files[key]!)
  return `${JSON.stringify(sorted, null, 2)}\n`
}

/**
 * An honest package (checksums.json, extension.yaml, the given files) as tar entries, with
 * `extra` entries appended after it and `checksums` overriding the computed checksums.json.
 */
export const packageEntries = (
  files: Readonly<Record<string, string>> = { "README.md": "hello\n" },
  options: { readonly extra?: ReadonlyArray<RawEntry>; readonly checksums?: string; readonly listed?: Readonly<Record<string, string>> } = {}
): ReadonlyArray<RawEntry> => {
  const all = { "extension.yaml": manifestYaml, ...files }
  return [
    { path: "checksums.json", data: options.checksums ?? checksumsOf({ ...all, ...options.listed }) },
    ...Object.entries(all).map(([path, data]) => ({ path, data })),
    ...(options.extra ?? [])
  ]
}

/** Node's own Ed25519 public key object from 32 raw bytes (DER SPKI prefix + key). */
export const spkiPrefix = Buffer.from("302a300506032b6570032100", "hex")
