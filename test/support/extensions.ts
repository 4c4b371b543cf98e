import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import Database from "better-sqlite3"

export interface ExtensionSpec {
  readonly id: string
  readonly version: string
  readonly requires?: Readonly<Record<string, string>>
  readonly dependencies?: Readonly<Record<string, string>>
  /** File name in database/migrations → content. */
  readonly migrations?: Readonly<Record<string, string>>
  /** Any other files, path → content. */
  readonly files?: Readonly<Record<string, string>>
}

/** Writes an extension folder for a test and returns its path. */
export const writeExtension = (parent: string, spec: ExtensionSpec): string => {
  const root = join(parent, `${spec.id.replace("/", "-")}-${spec.version}`)
  const lines = [
    `host: "1.0"`,
    `id: ${spec.id}`,
    `name: ${spec.id}`,
    `version: ${spec.version}`,
    `description: A test extension.`,
    `license: MIT`
  ]
  if (spec.requires !== undefined) {
    lines.push("requires:", ...Object.entries(spec.requires).map(([key, range]) => `  ${key}: "${range}"`))
  }
  if (spec.dependencies !== undefined) {
    lines.push("dependencies:", ...Object.entries(spec.dependencies).map(([id, range]) => `  ${id}: "${range}"`))
  }
  const files: Record<string, string> = { "extension.yaml": `${lines.join("\n")}\n`, ...spec.files }
  for (const [name, content] of Object.entries(spec.migrations ?? {})) files[`database/migrations/${name}`] = content
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  return root
}

export const sqlMigration = (up: string, down: string) => `-- up\n${up}\n\n-- down\n${down}\n`

/** Reads the panel's database directly (what an admin would see with sqlite3). */
export const inspectDatabase = (root: string) => {
  const db = new Database(join(root, "storage", "host", "host.db"), { readonly: true })
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>)
      .map((row) => row.name)
    const extensions = db.prepare("SELECT extension_id, version, enabled FROM host_extensions ORDER BY extension_id").all() as Array<
      { extension_id: string; version: string; enabled: number }
    >
    const migrations = db.prepare("SELECT extension_id, migration, batch FROM host_migrations WHERE extension_id != 'host/core' ORDER BY id").all() as Array<
      { extension_id: string; migration: string; batch: number }
    >
    const activity = db.prepare("SELECT extension_id, action, summary, context FROM host_activity_logs ORDER BY id").all() as Array<
      { extension_id: string; action: string; summary: string; context: string }
    >
    const settings = db.prepare("SELECT extension_id, key, value FROM host_settings ORDER BY id").all() as Array<
      { extension_id: string; key: string; value: string }
    >
    return { tables, extensions, migrations, activity, settings }
  } finally {
    db.close()
  }
}
