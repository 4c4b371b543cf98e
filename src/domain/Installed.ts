import { Schema } from "effect"

// What the four host_* tables hold, as decoded records (docs/architecture.md "Store").

export const SourceType = Schema.Literal("registry", "archive", "path", "upload", "dev-link")

export const ExtensionSource = Schema.Struct({
  type: SourceType,
  ref: Schema.String,
  sha256: Schema.NullOr(Schema.String)
})
export type ExtensionSource = typeof ExtensionSource.Type

export const SignatureStatus = Schema.Literal("signed", "untrusted", "invalid", "modified", "unsigned")
export type SignatureStatus = typeof SignatureStatus.Type

export const SignatureRecord = Schema.Struct({
  status: SignatureStatus,
  key: Schema.NullOr(Schema.String)
})
export type SignatureRecord = typeof SignatureRecord.Type

export const InstalledExtension = Schema.Struct({
  id: Schema.Number,
  extensionId: Schema.String,
  name: Schema.String,
  version: Schema.String,
  enabled: Schema.Boolean,
  manifest: Schema.Unknown,
  source: ExtensionSource,
  signature: SignatureRecord,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type InstalledExtension = typeof InstalledExtension.Type

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
