import { Schema } from "effect"
import type { DoctorCheck, DoctorReport } from "../domain/Doctor.js"
import { FrontendErrorEntry } from "../domain/FrontendErrors.js"
import type { HealthStatus } from "../domain/Health.js"
import { ActivityRecord, ExtensionSource, SignatureRecord, SignatureStatus } from "../domain/Installed.js"
import { ActionType, type Capabilities, Plan } from "../domain/PlanFormat.js"
import type { Problem } from "../domain/Problems.js"
import { type SettingField, SettingInput, SettingType } from "../domain/Settings.js"
import { OperationName } from "../lifecycle/Errors.js"
import type { RemovalImpact } from "../lifecycle/Impact.js"
import type { OperationResult } from "../lifecycle/Operation.js"
import type { AdoptResult } from "../reconcile/Adopt.js"
import type { ExtensionHealth as CheckedHealth, HealthCheckResult } from "../runtime/Backend.js"

// The read models of the use-case layer: the shape of every answer the admin API gives, declared once,
// as Schema. The use cases build values of these types, the admin API's contracts (http/contracts/Admin.ts)
// declare their bodies with these schemas, and the admin app (a browser bundle) reads the types through
// type-only imports, so nothing of this module reaches the bundle (docs/architecture.md "Layers").

// The shapes the layers below declare as TypeScript interfaces, declared here as Schema so the contract
// describes them (the OpenAPI document, a typed client). The compiler holds each schema to its interface
// both ways (`sameShape` below), so neither can change without the other: one shape, two spellings kept
// equal by the compiler (docs/architecture.md "Layers").

/** Compile-time proof that a schema's type and the interface it describes are the same shape. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sameShape = <_S extends Schema.Schema.Any, _T>(_proof: Same<Schema.Schema.Type<_S>, _T>) => undefined

const Strings = Schema.Array(Schema.String)

/** `GET extensions/{vendor}/{name}/impact`: what a disable or remove would affect. */
export const Impact = Schema.Struct({
  id: Schema.String,
  version: Schema.String,
  enabled: Schema.Boolean,
  dependents: Strings,
  allDependents: Strings,
  migrations: Strings,
  tables: Schema.Array(Schema.Struct({ name: Schema.String, rows: Schema.NullOr(Schema.Number) })),
  settings: Schema.Number
}).annotations({ identifier: "RemovalImpact" })
sameShape<typeof Impact, RemovalImpact>(true)
export type Impact = RemovalImpact

const HealthStatusView = Schema.Literal("ok", "warning", "error", "unknown")
sameShape<typeof HealthStatusView, HealthStatus>(true)
const HealthCheckView = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  severity: Schema.NullOr(Schema.String),
  status: HealthStatusView,
  message: Schema.NullOr(Schema.String),
  details: Schema.Unknown,
  declared: Schema.Boolean
}).annotations({ identifier: "HealthCheck" })
sameShape<typeof HealthCheckView, HealthCheckResult>(true)
export type HealthCheck = HealthCheckResult
/** One extension's checks; `checkedAt` is set when they were run on request. */
export const ExtensionHealth = Schema.Struct({
  extensionId: Schema.String,
  checks: Schema.Array(HealthCheckView),
  checkedAt: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "ExtensionHealth" })
sameShape<typeof ExtensionHealth, CheckedHealth & { readonly checkedAt?: string }>(true)
export type ExtensionHealth = typeof ExtensionHealth.Type

export const AdoptResultView = Schema.Struct({
  file: Schema.String,
  existed: Schema.Boolean,
  sha256: Schema.String,
  before: Schema.String,
  after: Schema.String,
  diff: Schema.String,
  changed: Schema.Boolean,
  changes: Strings,
  notes: Strings,
  written: Schema.Boolean
}).annotations({ identifier: "AdoptResult" })
sameShape<typeof AdoptResultView, AdoptResult>(true)
export type { AdoptResult, HealthStatus }

const DoctorCheckView = Schema.Struct({
  id: Schema.String,
  verdict: Schema.Literal("ok", "warning", "fail"),
  evidence: Schema.String,
  fix: Schema.String
}).annotations({ identifier: "DoctorCheck" })
sameShape<typeof DoctorCheckView, DoctorCheck>(true)
/** `GET extensions/{id}/doctor`: the report `host doctor <id>` prints (docs/operations.md "host doctor"). */
export const DoctorReportView = Schema.Struct({
  sections: Schema.Array(Schema.Struct({ subject: Schema.String, version: Schema.NullOr(Schema.String), checks: Schema.Array(DoctorCheckView) })),
  summary: Schema.Struct({ ok: Schema.Number, warning: Schema.Number, fail: Schema.Number }),
  healthy: Schema.Boolean
}).annotations({ identifier: "DoctorReport" })
sameShape<typeof DoctorReportView, DoctorReport>(true)
export type { DoctorCheck, DoctorReport }

const SettingValueView = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)
const SettingFieldView = Schema.Struct({
  key: Schema.String,
  type: SettingType,
  label: Schema.String,
  required: Schema.Boolean,
  default: Schema.NullOr(SettingValueView),
  help: Schema.NullOr(Schema.String),
  placeholder: Schema.NullOr(Schema.String),
  input: SettingInput,
  options: Schema.Array(Schema.Struct({ value: SettingValueView, label: Schema.String })),
  public: Schema.Boolean
}).annotations({ identifier: "SettingField" })
sameShape<typeof SettingFieldView, SettingField>(true)
const CapabilitiesView = Schema.Struct({
  permissions: Strings,
  routes: Strings,
  slots: Strings,
  migrations: Strings,
  schedules: Strings,
  settings: Strings
}).annotations({ identifier: "Capabilities" })
sameShape<typeof CapabilitiesView, Capabilities>(true)
const ProblemView = Schema.Struct({ path: Schema.String, message: Schema.String }).annotations({ identifier: "Problem" })
sameShape<typeof ProblemView, Problem>(true)
/** What an operation did: the lifecycle's result. */
export const OperationResultView = Schema.Struct({
  operation: OperationName,
  id: Schema.String,
  action: Schema.Literal("installed", "updated", "enabled", "disabled", "removed", "configured", "unchanged"),
  version: Schema.String,
  fromVersion: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  migrations: Strings,
  warnings: Strings
}).annotations({ identifier: "OperationResult" })
sameShape<typeof OperationResultView, OperationResult>(true)
export type { OperationResult }

export const ExtensionStatus = Schema.Literal("enabled", "disabled", "quarantined", "corrupt")
export type ExtensionStatus = typeof ExtensionStatus.Type

/** `GET extensions`: one installed extension as the list shows it. */
export const ExtensionListRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  enabled: Schema.Boolean,
  status: ExtensionStatus,
  quarantine: Schema.NullOr(Schema.String),
  signature: SignatureStatus,
  source: ExtensionSource,
  updatedAt: Schema.String,
  frontendErrors: Schema.Array(FrontendErrorEntry)
})
export type ExtensionListRow = typeof ExtensionListRow.Type

/** `GET extensions/overview`: one row of the Extensions screen. */
export const ExtensionRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  version: Schema.String,
  enabled: Schema.Boolean,
  status: ExtensionStatus,
  quarantine: Schema.NullOr(Schema.String),
  signature: SignatureStatus,
  signatureKey: Schema.NullOr(Schema.String),
  source: ExtensionSource,
  updateAvailable: Schema.NullOr(Schema.String),
  dependents: Schema.Array(Schema.String),
  managed: Schema.Boolean,
  frontendErrors: Schema.Array(FrontendErrorEntry),
  updatedAt: Schema.String
})
export type ExtensionRow = typeof ExtensionRow.Type

/** `requires` of a manifest or registry entry against this panel: each range with the version it meets. */
export const RequiresReport = Schema.Struct({
  ok: Schema.Boolean,
  unmet: Schema.Array(Schema.String),
  warnings: Schema.Array(Schema.String),
  ranges: Schema.Array(Schema.Struct({
    key: Schema.String,
    range: Schema.String,
    actual: Schema.NullOr(Schema.String),
    ok: Schema.Boolean,
    detail: Schema.NullOr(Schema.String)
  }))
})
export type RequiresReport = typeof RequiresReport.Type

export const MigrationRow = Schema.Struct({
  name: Schema.String,
  status: Schema.Literal("pending", "ran", "file missing"),
  batch: Schema.NullOr(Schema.Number),
  ranAt: Schema.NullOr(Schema.String)
})
export type MigrationRow = typeof MigrationRow.Type

export const ScheduleRow = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  command: Schema.String,
  cron: Schema.String,
  withoutOverlapping: Schema.Boolean,
  nextRun: Schema.NullOr(Schema.String)
})
export type ScheduleRow = typeof ScheduleRow.Type

export const RouteRow = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  permission: Schema.NullOr(Schema.String),
  file: Schema.String
})
export type RouteRow = typeof RouteRow.Type

const Author = Schema.Struct({ name: Schema.String, email: Schema.optional(Schema.String), url: Schema.optional(Schema.String) })

/** `GET extensions/{vendor}/{name}`: everything the detail screen shows (docs/admin.md "Extension detail"). */
export const ExtensionDetail = Schema.Struct({
  frontendErrors: Schema.Array(FrontendErrorEntry),
  id: Schema.String,
  name: Schema.String,
  version: Schema.String,
  description: Schema.String,
  license: Schema.NullOr(Schema.String),
  authors: Schema.Array(Author),
  enabled: Schema.Boolean,
  status: ExtensionStatus,
  quarantine: Schema.NullOr(Schema.String),
  loaded: Schema.Boolean,
  signature: SignatureRecord,
  source: ExtensionSource,
  installedAt: Schema.String,
  updatedAt: Schema.String,
  updateAvailable: Schema.NullOr(Schema.String),
  requires: RequiresReport,
  dependencies: Schema.Array(Schema.Struct({
    id: Schema.String,
    range: Schema.String,
    installed: Schema.NullOr(Schema.String),
    enabled: Schema.Boolean,
    ok: Schema.Boolean
  })),
  dependents: Schema.Array(Schema.Struct({ id: Schema.String, enabled: Schema.Boolean })),
  capabilities: Schema.Struct({
    permissions: Schema.Array(Schema.String),
    routes: Schema.Record({ key: Schema.String, value: Schema.Array(RouteRow) }),
    routeFiles: Schema.Record({ key: Schema.String, value: Schema.UndefinedOr(Schema.String) }),
    slots: Schema.Array(Schema.String),
    pages: Schema.Array(Schema.Struct({ area: Schema.String, path: Schema.String })),
    migrations: Schema.Array(MigrationRow),
    schedules: Schema.Array(ScheduleRow),
    commands: Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.String })),
    listeners: Schema.Array(Schema.String),
    healthChecks: Schema.Array(Schema.Struct({ id: Schema.String, label: Schema.String, severity: Schema.optional(Schema.String) })),
    settings: Schema.Number
  }),
  managed: Schema.NullOr(Schema.Struct({
    file: Schema.String,
    absent: Schema.Boolean,
    enabled: Schema.Boolean,
    settings: Schema.Array(Schema.String)
  }))
})
export type ExtensionDetail = typeof ExtensionDetail.Type

/** `GET health`: the health of every booted extension. */
export const HealthOverview = Schema.Struct({
  extensions: Schema.Array(ExtensionHealth),
  critical_failures: Schema.Array(Schema.String)
})
export type HealthOverview = typeof HealthOverview.Type

export const SettingValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
export type SettingValue = typeof SettingValue.Type

/** `GET extensions/{id}/settings`: the settings form; secrets are never echoed (their value is null). */
export const SettingsForm = Schema.Struct({
  title: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  fields: Schema.Array(SettingFieldView),
  values: Schema.Record({ key: Schema.String, value: SettingValue }),
  secrets: Schema.Record({ key: Schema.String, value: Schema.Boolean }),
  /** The keys the desired-state file sets (an edit here is drift). */
  managed: Schema.Array(Schema.String)
})
export type SettingsForm = typeof SettingsForm.Type

export type { SettingField }

/** One check of an upload preview; the first failing one is the preview's refusal. */
export const PreviewCheck = Schema.Struct({ check: Schema.String, ok: Schema.Boolean, detail: Schema.String })
export type PreviewCheck = typeof PreviewCheck.Type

export const UploadSetting = Schema.Literal("any", "signed", "off")
export type UploadSetting = typeof UploadSetting.Type

/** `POST extensions/preview`: what installing the uploaded archive would do, and which check refuses it. */
export const UploadPreview = Schema.Struct({
  archive: Schema.String,
  sha256: Schema.String,
  bytes: Schema.Number,
  id: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  signature: Schema.Struct({ status: SignatureStatus, key: Schema.NullOr(Schema.String), trustedAs: Schema.NullOr(Schema.String) }),
  /** Which web-install policy decided, and what it said about this archive. */
  upload_policy: Schema.Struct({
    setting: UploadSetting,
    from: Schema.Literal("admin_uploads", "require_signatures", "default"),
    ok: Schema.Boolean,
    detail: Schema.String
  }),
  installed: Schema.NullOr(Schema.Struct({ version: Schema.String, enabled: Schema.Boolean })),
  action: Schema.Literal("install", "update", "reinstall", "downgrade"),
  requires: RequiresReport,
  dependencies: Schema.Record({ key: Schema.String, value: Schema.String }),
  settings: Schema.Number,
  capabilities: Schema.NullOr(CapabilitiesView),
  checks: Schema.Array(PreviewCheck),
  refusal: Schema.NullOr(Schema.Struct({ check: Schema.String, detail: Schema.String })),
  installable: Schema.Boolean
})
export type UploadPreview = typeof UploadPreview.Type

/** `POST updates`: each update's result, or why it failed. */
export const UpdateOutcome = Schema.Union(
  OperationResultView,
  Schema.Struct({ id: Schema.String, action: Schema.Literal("failed"), error: Schema.String })
)
export type UpdateOutcome = typeof UpdateOutcome.Type

/** `GET updates`: an extension installed from the registry that has a newer version there. */
export const AvailableUpdate = Schema.Struct({ id: Schema.String, current: Schema.String, available: Schema.String })
export type AvailableUpdate = typeof AvailableUpdate.Type

/** `GET registry?q=`: one registry entry, with its versions and `requires` checked here. */
export const RegistryEntry = Schema.Struct({
  id: Schema.String,
  /** The registry that lists it (docs/registry.md "Several registries"). */
  registry: Schema.String,
  /** Whether `host add <id>` resolves it here: false when an earlier registry lists the same id. */
  resolvesHere: Schema.Boolean,
  name: Schema.String,
  description: Schema.String,
  tags: Schema.Array(Schema.String),
  license: Schema.String,
  authors: Schema.Array(Author),
  repository: Schema.NullOr(Schema.String),
  latest: Schema.String,
  versions: Schema.Array(Schema.Struct({ version: Schema.String, requires: Schema.Boolean, latest: Schema.Boolean })),
  requires: RequiresReport,
  dependencies: Schema.Record({ key: Schema.String, value: Schema.String }),
  installed: Schema.NullOr(Schema.Struct({
    version: Schema.String,
    enabled: Schema.Boolean,
    source: Schema.String,
    /** The registry it was installed from, when it came from one that is known. */
    registry: Schema.NullOr(Schema.String)
  })),
  updateAvailable: Schema.NullOr(Schema.String)
})
export type RegistryEntry = typeof RegistryEntry.Type

/** The search's `meta`: where the index came from. */
export const RegistrySearchMeta = Schema.Struct({
  url: Schema.String,
  source: Schema.String,
  fetchedAt: Schema.String,
  warning: Schema.NullOr(Schema.String),
  query: Schema.String,
  /** Every configured registry, in resolution order. */
  registries: Schema.Array(Schema.Struct({
    name: Schema.String,
    url: Schema.String,
    source: Schema.String,
    fetchedAt: Schema.String,
    extensions: Schema.Number,
    signed: Schema.Boolean
  }))
})
export type RegistrySearchMeta = typeof RegistrySearchMeta.Type

/** A change on the panel since the desired-state file was applied: a planned action, or an extension it does not list. */
export const Drift = Schema.Struct({
  id: Schema.String,
  type: Schema.Union(ActionType, Schema.Literal("unlisted")),
  detail: Schema.String
})
export type Drift = typeof Drift.Type

/** The plan as the desired-state screen shows it: without its basis, with its text rendering. */
export const PlanView = Schema.Struct({ ...Plan.omit("basis").fields, text: Schema.String })
export type PlanView = typeof PlanView.Type

/** `GET desired-state`: the file, the plan against it (or why there is none), and the drift. */
export const DesiredStateView = Schema.Struct({
  file: Schema.String,
  exists: Schema.Boolean,
  text: Schema.NullOr(Schema.String),
  sha256: Schema.NullOr(Schema.String),
  plan: Schema.NullOr(PlanView),
  planError: Schema.NullOr(Schema.Struct({ code: Schema.String, detail: Schema.String, problems: Schema.Array(ProblemView) })),
  drift: Schema.Array(Drift)
})
export type DesiredStateView = typeof DesiredStateView.Type

export const ActivityRow = ActivityRecord
export type ActivityRow = ActivityRecord

/** `GET activity/page`: one page, the total that matches, and the filter that was applied. */
export const ActivityPage = Schema.Struct({
  data: Schema.Array(ActivityRow),
  meta: Schema.Struct({
    total: Schema.Number,
    limit: Schema.Number,
    offset: Schema.Number,
    extension: Schema.NullOr(Schema.String),
    action: Schema.NullOr(Schema.String)
  })
})
export type ActivityPage = typeof ActivityPage.Type

/** `POST servers`: a server of the embedded panel. */
export const ServerRow = Schema.Struct({ uuid: Schema.String, name: Schema.String, owner: Schema.String })
export type ServerRow = typeof ServerRow.Type
