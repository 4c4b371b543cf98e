import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import semver from "semver"
import { isMap, isNode, isScalar, parseDocument, type Document, visit, YAMLMap } from "yaml"
import { type InstalledExtension, manifestOf } from "../domain/Installed.js"
import { envReferences, substituteEnv } from "../domain/DesiredState.js"
import type { SettingField } from "../domain/Settings.js"
import { unifiedDiff } from "../domain/TextDiff.js"
import { sha256Hex } from "../system/Hash.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { SettingsRepo } from "../store/SettingsRepo.js"
import { readDesiredFile, readSensitiveKeys } from "./Inputs.js"
import { writeFileAtomic } from "../system/AtomicFile.js"

// Adopt: rewrite the desired-state file so that it describes the panel as it is — extensions enabled or
// disabled in the UI, settings changed there, extensions added by hand — editing the parsed YAML document
// in place, so comments, key order and layout stay. A value that came from `${VAR}` keeps its template and
// a password field is never written in clear. See docs/admin.md "Adopt, exactly" and docs/decisions.md
// "Adopt writes what it can describe and says what it cannot".

/** The file cannot be rewritten (it does not parse, or it changed since its diff was shown). */
export class AdoptRefused extends Schema.TaggedError<AdoptRefused>()("AdoptRefused", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `cannot adopt into ${this.file}: ${this.detail}`
  }
}

export interface AdoptOptions {
  /** false: compute the new text and the diff only. */
  readonly write: boolean
  /** Refuse to write when the file's current sha256 differs (it changed since the diff was shown). */
  readonly expectedSha256?: string | undefined
  /** The environment `${VAR}` templates read from, to say when the panel's value no longer matches it. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

export interface AdoptResult {
  readonly file: string
  readonly existed: boolean
  /** sha256 of the file as read ("" when it did not exist). */
  readonly sha256: string
  readonly before: string
  readonly after: string
  /** Unified diff of before → after; "" when the file already describes the panel. */
  readonly diff: string
  readonly changed: boolean
  /** One line per change made, e.g. `acme/backups: enabled: false`. */
  readonly changes: ReadonlyArray<string>
  /** What could not be written into the file, and why (the plan will still show it). */
  readonly notes: ReadonlyArray<string>
  readonly written: boolean
}

const starter = `# Desired state of this panel (docs/plan-format.md); written by host reconcile --adopt.
host: "1.0"
extensions: {}
`

type Entry = { version?: string; source?: unknown; enabled?: boolean; settings?: Record<string, unknown> }

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The entry's plain value (shorthand string, `absent`, object or null). */
const plainEntry = (node: unknown): unknown => {
  if (node === undefined || node === null) return node
  if (isScalar(node)) return node.value
  if (isMap(node)) return node.toJSON() as unknown
  return undefined
}

/** Every comment on a node and inside it, so a replaced entry keeps what its author wrote. */
const commentsIn = (node: unknown): string | undefined => {
  if (!isNode(node)) return undefined
  const found: Array<string> = []
  const take = (inner: { comment?: string | null; commentBefore?: string | null }) => {
    for (const text of [inner.commentBefore, inner.comment]) if (typeof text === "string" && text.trim() !== "") found.push(text.trim())
  }
  take(node)
  visit(node, (_key, inner) => {
    if (isNode(inner) && inner !== node) take(inner)
  })
  return found.length === 0 ? undefined : found.join(" ")
}

/** What adopting reads besides the file: the installed records, their settings, and the sensitive keys. */
interface PanelFacts {
  readonly records: ReadonlyArray<InstalledExtension>
  readonly everything: ReadonlyMap<string, Readonly<Record<string, unknown>>>
  readonly sensitive: Readonly<Record<string, ReadonlyArray<string>>>
  readonly env: AdoptOptions["env"]
}

/** Where the file is, to write and compare its sources relative to its folder. */
interface FilePlace {
  readonly folder: string
  readonly path: Path.Path
}

/** What an adoption says: the changes made, and what it could not write. */
interface Said {
  readonly changes: Array<string>
  readonly notes: Array<string>
}

const relativeTo = ({ folder, path }: FilePlace, target: string) => {
  const rel = path.relative(folder, target)
  return rel.startsWith("..") || path.isAbsolute(rel) ? rel : `./${rel}`
}

/** The source to write for an extension not described yet (a note when it cannot be named). */
const sourceFor = (place: FilePlace, record: InstalledExtension): { readonly entry: Entry } | { readonly note: string } => {
  switch (record.source.type) {
    case "registry":
      return { entry: { version: record.version } }
    case "path":
      return { entry: { source: { path: relativeTo(place, record.source.ref) } } }
    case "archive": {
      const archive = relativeTo(place, record.source.ref)
      return { entry: { source: record.source.sha256 === null ? { archive } : { archive, sha256: record.source.sha256 } } }
    }
    default:
      return {
        note: `${record.extensionId} was installed from ${record.source.type === "upload" ? "an upload" : "a dev link"} (${record.source.ref}), which the file cannot point at: ` +
          `add it with a registry version, a path or an archive, then adopt again`
      }
  }
}

/** Whether an entry's source still provides the installed extension (so it stays as written). */
const sourceHolds = ({ folder, path }: FilePlace, entry: Entry, record: InstalledExtension): boolean => {
  const source = entry.source
  if (source === undefined || source === "registry") {
    return record.source.type === "registry" && (entry.version === undefined || semver.satisfies(record.version, entry.version, { includePrerelease: true }))
  }
  if (typeof source === "object" && source !== null && "path" in source) {
    return record.source.type === "path" && path.resolve(folder, String(source.path)) === record.source.ref
  }
  if (typeof source === "object" && source !== null && "archive" in source) {
    return record.source.type === "archive" && path.resolve(folder, String(source.archive)) === record.source.ref
  }
  return false
}

/**
 * One setting the file takes from `${VAR}` or holds as a secret: never rewritten, only noted when the
 * panel's value differs. Returns whether the setting was such a one.
 */
const keptSetting = (
  facts: PanelFacts,
  record: InstalledExtension,
  field: SettingField,
  wanted: unknown,
  notes: Array<string>
): boolean => {
  const key = field.key
  const stored = facts.everything.get(record.extensionId) ?? {}
  const has = key in stored
  const value = stored[key]
  if (wanted !== undefined && envReferences(wanted).length > 0) {
    // The template stays; the value behind it is the environment's business.
    const substituted = facts.env === undefined ? undefined : substituteEnv(wanted, facts.env)
    if (has && substituted !== undefined && Either.isRight(substituted) && !sameJson(substituted.right, value)) {
      notes.push(`${record.extensionId} setting ${key} was changed in the panel, but the file takes it from ${String(wanted)}: change that variable instead`)
    }
    return true
  }
  if (field.input === "password" || (facts.sensitive[record.extensionId] ?? []).includes(key)) {
    if (has && wanted === undefined) {
      notes.push(`${record.extensionId} setting ${key} is a secret and is not written in clear: add it as "\${VARIABLE}" yourself`)
    } else if (has && !sameJson(wanted, value)) {
      notes.push(`${record.extensionId} setting ${key} is a secret that differs from the file; it is not written in clear`)
    }
    return true
  }
  return false
}

/** The settings the file should hold for an extension, starting from what it holds. */
const settingsFor = (facts: PanelFacts, record: InstalledExtension, desired: Record<string, unknown> | undefined, notes: Array<string>) => {
  const fields: ReadonlyArray<SettingField> = manifestOf(record)?.settings ?? []
  const stored = facts.everything.get(record.extensionId) ?? {}
  const next: Record<string, unknown> = { ...desired }
  const said: Array<string> = []
  for (const field of fields) {
    const key = field.key
    const wanted = desired?.[key]
    if (keptSetting(facts, record, field, wanted, notes)) continue
    const value = stored[key]
    if (!(key in stored)) {
      if (wanted !== undefined) {
        delete next[key]
        said.push(`${key} removed (the panel uses the default)`)
      }
      continue
    }
    if (wanted === undefined) {
      if (sameJson(value, field.default)) continue
      next[key] = value
      said.push(`${key}: ${JSON.stringify(value)}`)
    } else if (!sameJson(wanted, value)) {
      next[key] = value
      said.push(`${key}: ${JSON.stringify(wanted)} → ${JSON.stringify(value)}`)
    }
  }
  return { next, said }
}

/** An installed extension the file does not describe (or marks absent): a new entry for it. */
const addEntry = (doc: Document, map: YAMLMap, place: FilePlace, facts: PanelFacts, record: InstalledExtension, said: Said) => {
  const id = record.extensionId
  const source = sourceFor(place, record)
  if ("note" in source) {
    said.notes.push(source.note)
    return
  }
  const { next, said: settings } = settingsFor(facts, record, undefined, said.notes)
  const entry: Entry = { ...source.entry }
  if (!record.enabled) entry.enabled = false
  if (Object.keys(next).length > 0) entry.settings = next
  const shorthand = entry.source === undefined && entry.enabled === undefined && entry.settings === undefined
  map.set(id, doc.createNode(shorthand ? entry.version : entry))
  said.changes.push(`${id}: added (${record.source.type} ${record.version}${record.enabled ? "" : ", disabled"}${settings.length > 0 ? `, settings ${settings.join(", ")}` : ""})`)
}

/** The entry as a map to edit in place: a shorthand becomes `version:` (its scalar kept, so its quoting and comment stay). */
const entryMap = (map: YAMLMap, id: string, node: unknown, entry: Entry) => {
  let target: YAMLMap | undefined = isMap(node) ? node : undefined
  return {
    current: () => target,
    ensure: () => {
      if (target !== undefined) return target
      const created = new YAMLMap()
      if (isScalar(node)) created.set("version", node)
      else if (entry.version !== undefined) created.set("version", entry.version)
      map.set(id, created)
      target = created
      return created
    }
  }
}

/** The source of a described extension, when it no longer provides what is installed. */
const editSource = (doc: Document, map: YAMLMap, place: FilePlace, record: InstalledExtension, entry: Entry, edit: ReturnType<typeof entryMap>, said: Said) => {
  if (sourceHolds(place, entry, record)) return
  const id = record.extensionId
  const source = sourceFor(place, record)
  if ("note" in source) {
    said.notes.push(source.note)
  } else if (source.entry.version !== undefined && entry.source === undefined) {
    const target = edit.current()
    if (target === undefined) map.set(id, doc.createNode(source.entry.version))
    else target.set("version", source.entry.version)
    entry.version = source.entry.version
    said.changes.push(`${id}: version ${source.entry.version}`)
  } else {
    const edited = edit.ensure()
    if (source.entry.version !== undefined) edited.set("version", source.entry.version)
    else edited.delete("version")
    if (source.entry.source !== undefined) edited.set("source", doc.createNode(source.entry.source))
    else edited.delete("source")
    said.changes.push(`${id}: source ${record.source.type} ${record.source.ref}`)
  }
}

/** The settings of a described extension, edited key by key where the panel's differ. */
const editSettings = (doc: Document, facts: PanelFacts, record: InstalledExtension, entry: Entry, edit: ReturnType<typeof entryMap>, said: Said) => {
  const { next, said: settings } = settingsFor(facts, record, entry.settings, said.notes)
  if (settings.length === 0) return
  const edited = edit.ensure()
  const settingsNode = edited.get("settings", true)
  if (isMap(settingsNode)) {
    for (const key of Object.keys(entry.settings ?? {})) if (!(key in next)) settingsNode.delete(key)
    for (const [key, value] of Object.entries(next)) {
      if (!sameJson(entry.settings?.[key], value)) settingsNode.set(key, value)
    }
  } else if (Object.keys(next).length > 0) {
    edited.set("settings", doc.createNode(next))
  } else {
    edited.delete("settings")
  }
  said.changes.push(`${record.extensionId}: settings ${settings.join(", ")}`)
}

/** An installed extension the file describes: only what differs is edited, in place. */
const editEntry = (doc: Document, map: YAMLMap, place: FilePlace, facts: PanelFacts, record: InstalledExtension, said: Said) => {
  const id = record.extensionId
  const node = map.get(id, true)
  const current = plainEntry(node)
  if (current === undefined || current === null || current === "absent") return addEntry(doc, map, place, facts, record, said)
  const entry: Entry = typeof current === "string" ? { version: current } : current as Entry
  const edit = entryMap(map, id, node, entry)
  editSource(doc, map, place, record, entry, edit, said)
  if ((entry.enabled ?? true) !== record.enabled) {
    const edited = edit.ensure()
    if (record.enabled) edited.delete("enabled")
    else edited.set("enabled", false)
    said.changes.push(`${id}: enabled: ${record.enabled}`)
  }
  editSettings(doc, facts, record, entry, edit, said)
}

/** Listed as present but not installed: say so, keeping the line and its comments. */
const markAbsent = (doc: Document, map: YAMLMap, installedIds: ReadonlySet<string>, said: Said) => {
  for (const pair of map.items) {
    const id = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
    if (installedIds.has(id)) continue
    if (plainEntry(pair.value) === "absent") continue
    const comment = commentsIn(pair.value)
    const replacement = doc.createNode("absent")
    if (comment !== undefined) replacement.comment = ` ${comment.replace(/^#\s*/, "")}`
    pair.value = replacement
    said.changes.push(`${id}: absent (not installed)`)
  }
}

/** The file as it is (it must be valid: adopt edits it, it does not guess what a broken file meant). */
const readCurrent = (absolute: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const existed = yield* fs.exists(absolute).pipe(Effect.orElseSucceed(() => false))
    const before = existed ? yield* fs.readFileString(absolute) : ""
    if (existed) yield* readDesiredFile(absolute)
    const doc: Document = parseDocument(existed && before.trim() !== "" ? before : starter)
    if (doc.errors.length > 0) return yield* new AdoptRefused({ file: absolute, detail: doc.errors[0]!.message })
    return { existed, before, doc }
  })

/** The panel as adopting needs it. */
const readPanel = (env: AdoptOptions["env"]) =>
  Effect.gen(function*() {
    const records = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
    const everything = yield* Effect.flatMap(SettingsRepo, (repo) => repo.getEverything)
    const sensitive = yield* readSensitiveKeys
    return { records, everything, sensitive, env } satisfies PanelFacts
  })

/** Writes the new text whole (refused when the file changed since its diff was shown). */
const writeAdopted = (absolute: string, after: string, sha256: string, expectedSha256: string | undefined) =>
  Effect.gen(function*() {
    if (expectedSha256 !== undefined && expectedSha256 !== sha256) {
      return yield* new AdoptRefused({ file: absolute, detail: "the file changed since its diff was shown; look at the new diff and adopt again" })
    }
    yield* writeFileAtomic(absolute, after)
  })

/** The desired-state text rewritten to describe the panel, with what changed and what could not be said. */
export const adopt = Effect.fn("Adopt.adopt")(function*(file: string, options: AdoptOptions) {
  const path = yield* Path.Path
  const absolute = path.resolve(file)
  const place: FilePlace = { folder: path.dirname(absolute), path }
  const { before, doc, existed } = yield* readCurrent(absolute)
  const said: Said = { changes: [], notes: [] }
  let extensions = doc.get("extensions", true)
  if (!isMap(extensions)) {
    extensions = new YAMLMap()
    doc.set("extensions", extensions)
  }
  const map = extensions as YAMLMap
  const facts = yield* readPanel(options.env)
  for (const record of [...facts.records].sort((a, b) => a.extensionId.localeCompare(b.extensionId))) {
    editEntry(doc, map, place, facts, record, said)
  }
  markAbsent(doc, map, new Set(facts.records.map((record) => record.extensionId)), said)

  const after = doc.toString()
  const changed = after !== before
  const sha256 = existed ? sha256Hex(before) : ""
  const diff = unifiedDiff(before, after, { from: existed ? absolute : "/dev/null", to: absolute })
  const written = options.write && changed
  if (written) yield* writeAdopted(absolute, after, sha256, options.expectedSha256)
  const { changes, notes } = said
  return { file: absolute, existed, sha256, before, after, diff, changed, changes, notes, written } satisfies AdoptResult
})
