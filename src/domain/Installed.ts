import { Data, Schema } from "effect"
import type { Manifest, ManifestDocument } from "./Manifest.js"

// What the four host_* tables hold, as decoded records (docs/architecture.md "Store").

export const SourceType = Schema.Literal("registry", "archive", "path", "upload", "dev-link")

export const ExtensionSource = Schema.Struct({
  type: SourceType,
  ref: Schema.String,
  sha256: Schema.NullOr(Schema.String),
  /** The registry a registry source came from (docs/registry.md "Several registries"): `update` uses it again. */
  registry: Schema.optional(Schema.String)
})
export type ExtensionSource = typeof ExtensionSource.Type

export const SignatureStatus = Schema.Literal("signed", "untrusted", "invalid", "modified", "unsigned")
export type SignatureStatus = typeof SignatureStatus.Type

export const SignatureRecord = Schema.Struct({
  status: SignatureStatus,
  key: Schema.NullOr(Schema.String)
})
export type SignatureRecord = typeof SignatureRecord.Type

/**
 * The manifest of an installed extension, decoded once where its row is read. It was valid when it was
 * installed; a row that no longer decodes (edited by hand, written by an older framework with other
 * rules) is `Corrupt`, with the first problem as its reason, and every reader decides what that means
 * (docs/architecture.md "Store"): the runtime quarantines it, `host list` and the admin show it.
 */
export type InstalledManifest = Data.TaggedEnum<{
  Decoded: { readonly manifest: Manifest }
  Corrupt: { readonly reason: string }
}>
export const InstalledManifest = Data.taggedEnum<InstalledManifest>()

/** One host_extensions row, decoded. */
export interface InstalledExtension {
  readonly id: number
  readonly extensionId: string
  readonly name: string
  readonly version: string
  readonly enabled: boolean
  readonly manifest: InstalledManifest
  readonly source: ExtensionSource
  readonly signature: SignatureRecord
  readonly createdAt: string
  readonly updatedAt: string
}

/** What is written to host_extensions for one extension (the repository sets id and the timestamps). */
export interface ExtensionWrite {
  readonly extensionId: string
  readonly name: string
  readonly version: string
  readonly enabled: boolean
  readonly manifest: ManifestDocument
  readonly source: ExtensionSource
  readonly signature: SignatureRecord
}

/** The decoded manifest of a record, or undefined when its stored manifest is corrupt. */
export const manifestOf = (record: Pick<InstalledExtension, "manifest">): Manifest | undefined =>
  record.manifest._tag === "Decoded" ? record.manifest.manifest : undefined

/** Why a record's stored manifest cannot be used, or undefined when it decodes. */
export const corruptReason = (record: Pick<InstalledExtension, "manifest">): string | undefined =>
  record.manifest._tag === "Corrupt" ? `its stored manifest does not decode (${record.manifest.reason}); reinstall it` : undefined

/** The dependency ranges a record declares (none for a corrupt manifest: nothing can be read from it). */
export const dependenciesOf = (record: Pick<InstalledExtension, "manifest">): Readonly<Record<string, string>> =>
  manifestOf(record)?.document.dependencies ?? {}

/**
 * What the dependency rules (domain/Rules.ts) need of every installed extension, keyed by id: the one
 * way a list of records becomes the installed-state map the preconditions, the preview and the impact read.
 */
export const installedStates = (
  records: ReadonlyArray<Pick<InstalledExtension, "extensionId" | "version" | "enabled" | "manifest">>
): ReadonlyMap<string, { readonly version: string; readonly enabled: boolean; readonly dependencies: Readonly<Record<string, string>> }> =>
  new Map(records.map((record) => [record.extensionId, { version: record.version, enabled: record.enabled, dependencies: dependenciesOf(record) }]))

/** The installed extensions that declare a dependency on `id`, enabled or not, in the order given. */
export const dependentsOf = <R extends Pick<InstalledExtension, "extensionId" | "manifest">>(
  id: string,
  records: ReadonlyArray<R>
): ReadonlyArray<R> => records.filter((other) => other.extensionId !== id && id in dependenciesOf(other))

/** The folder of a record's migrations, relative to its tree (the conventional one for a corrupt manifest). */
export const migrationsFolderOf = (record: Pick<InstalledExtension, "manifest">): string =>
  manifestOf(record)?.document.backend?.migrations ?? "database/migrations"

export const ActivityAction = Schema.Literal("installed", "updated", "enabled", "disabled", "removed")
export type ActivityAction = typeof ActivityAction.Type

export const Actor = Schema.Struct({
  type: Schema.Literal("cli", "admin", "reconcile", "api"),
  user: Schema.optional(Schema.String)
})
export type Actor = typeof Actor.Type

export const ActivityRecord = Schema.Struct({
  id: Schema.Number,
  extensionId: Schema.String,
  action: ActivityAction,
  summary: Schema.String,
  context: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  createdAt: Schema.String
})
export type ActivityRecord = typeof ActivityRecord.Type

export const MigrationRecord = Schema.Struct({
  id: Schema.Number,
  extensionId: Schema.String,
  migration: Schema.String,
  batch: Schema.Number,
  ranAt: Schema.String
})
export type MigrationRecord = typeof MigrationRecord.Type

/** The reserved owner of framework rows in host_migrations and host_settings. */
export const coreExtensionId = "host/core"
