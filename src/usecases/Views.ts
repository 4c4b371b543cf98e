import type { ActivityRecord, ExtensionSource, SignatureRecord, SignatureStatus } from "../domain/Installed.js"
import type { FrontendErrorEntry } from "../domain/FrontendErrors.js"
import type { Capabilities, Plan } from "../domain/PlanFormat.js"
import type { Problem } from "../domain/Problems.js"
import type { SettingField } from "../domain/Settings.js"
import type { ExtensionHealth as CheckedHealth, HealthCheckResult } from "../runtime/Backend.js"
import type { RemovalImpact } from "../lifecycle/Impact.js"
import type { AdoptResult } from "../reconcile/Adopt.js"
import type { OperationResult } from "../lifecycle/Operation.js"
import type { HealthStatus } from "../domain/Health.js"

// Shapes the layers below already declare are re-exported under the names the admin app uses, not
// declared again: one declaration of each (docs/architecture.md "Layers").

/** `GET extensions/{vendor}/{name}/impact`: what a disable or remove would affect. */
export type Impact = RemovalImpact
export type HealthCheck = HealthCheckResult
/** One extension's checks; `checkedAt` is set when they were run on request. */
export type ExtensionHealth = CheckedHealth & { readonly checkedAt?: string }
export type { AdoptResult, HealthStatus }

// The read models of the use-case layer: the shape of every answer the admin API gives, declared once.
// The use cases build values of these types, the admin handlers send them as `{data}`, and the admin
// app (a browser bundle) reads them through type-only imports, so this module imports nothing but types
// from domain/ and holds no code (docs/architecture.md "Layers").

export type ExtensionStatus = "enabled" | "disabled" | "quarantined" | "corrupt"

/** `GET extensions`: one installed extension as the list shows it. */
export interface ExtensionListRow {
  readonly id: string
  readonly name: string
  readonly version: string
  readonly enabled: boolean
  readonly status: ExtensionStatus
  readonly quarantine: string | null
  readonly signature: SignatureStatus
  readonly source: ExtensionSource
  readonly updatedAt: string
  readonly frontendErrors: ReadonlyArray<FrontendErrorEntry>
}

/** `GET extensions/overview`: one row of the Extensions screen. */
export interface ExtensionRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly version: string
  readonly enabled: boolean
  readonly status: ExtensionStatus
  readonly quarantine: string | null
  readonly signature: SignatureStatus
  readonly signatureKey: string | null
  readonly source: ExtensionSource
  readonly updateAvailable: string | null
  readonly dependents: ReadonlyArray<string>
  readonly managed: boolean
  readonly frontendErrors: ReadonlyArray<FrontendErrorEntry>
  readonly updatedAt: string
}

/** `requires` of a manifest or registry entry against this panel: each range with the version it meets. */
export interface RequiresReport {
  readonly ok: boolean
  readonly unmet: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly ranges: ReadonlyArray<{ readonly key: string; readonly range: string; readonly actual: string | null; readonly ok: boolean; readonly detail: string | null }>
}

export interface MigrationRow {
  readonly name: string
  readonly status: "pending" | "ran" | "file missing"
  readonly batch: number | null
  readonly ranAt: string | null
}

export interface ScheduleRow {
  readonly id: string
  readonly label: string
  readonly command: string
  readonly cron: string
  readonly withoutOverlapping: boolean
  readonly nextRun: string | null
}

export interface RouteRow {
  readonly method: string
  readonly path: string
  readonly permission: string | null
  readonly file: string
}

/** `GET extensions/{vendor}/{name}`: everything the detail screen shows (docs/admin.md "Extension detail"). */
export interface ExtensionDetail {
  readonly frontendErrors: ReadonlyArray<FrontendErrorEntry>
  readonly id: string
  readonly name: string
  readonly version: string
  readonly description: string
  readonly license: string | null
  readonly authors: ReadonlyArray<{ readonly name: string; readonly email?: string | undefined; readonly url?: string | undefined }>
  readonly enabled: boolean
  readonly status: ExtensionStatus
  readonly quarantine: string | null
  readonly loaded: boolean
  readonly signature: SignatureRecord
  readonly source: ExtensionSource
  readonly installedAt: string
  readonly updatedAt: string
  readonly updateAvailable: string | null
  readonly requires: RequiresReport
  readonly dependencies: ReadonlyArray<{ readonly id: string; readonly range: string; readonly installed: string | null; readonly enabled: boolean; readonly ok: boolean }>
  readonly dependents: ReadonlyArray<{ readonly id: string; readonly enabled: boolean }>
  readonly capabilities: {
    readonly permissions: ReadonlyArray<string>
    readonly routes: Readonly<Record<string, ReadonlyArray<RouteRow>>>
    readonly routeFiles: Readonly<Record<string, string | undefined>>
    readonly slots: ReadonlyArray<string>
    readonly pages: ReadonlyArray<{ readonly area: string; readonly path: string }>
    readonly migrations: ReadonlyArray<MigrationRow>
    readonly schedules: ReadonlyArray<ScheduleRow>
    readonly commands: ReadonlyArray<{ readonly name: string; readonly description: string }>
    readonly listeners: ReadonlyArray<string>
    readonly healthChecks: ReadonlyArray<{ readonly id: string; readonly label: string; readonly severity?: string | undefined }>
    readonly settings: number
  }
  readonly managed: null | { readonly file: string; readonly absent: boolean; readonly enabled: boolean; readonly settings: ReadonlyArray<string> }
}




/** `GET health`: the health of every booted extension. */
export interface HealthOverview {
  readonly extensions: ReadonlyArray<ExtensionHealth>
  readonly critical_failures: ReadonlyArray<string>
}

/** `GET extensions/{id}/doctor`: the report `host doctor <id>` prints (docs/operations.md "host doctor"). */
export interface DoctorCheck {
  readonly id: string
  readonly verdict: "ok" | "warning" | "fail"
  readonly evidence: string
  readonly fix: string
}

export interface DoctorReport {
  readonly sections: ReadonlyArray<{ readonly subject: string; readonly version: string | null; readonly checks: ReadonlyArray<DoctorCheck> }>
  readonly summary: { readonly ok: number; readonly warning: number; readonly fail: number }
  readonly healthy: boolean
}

export type SettingValue = string | number | boolean | null

/** `GET extensions/{id}/settings`: the settings form; secrets are never echoed (their value is null). */
export interface SettingsForm {
  readonly title: string | null
  readonly description: string | null
  readonly fields: ReadonlyArray<SettingField>
  readonly values: Readonly<Record<string, SettingValue>>
  readonly secrets: Readonly<Record<string, boolean>>
  /** The keys the desired-state file sets (an edit here is drift). */
  readonly managed: ReadonlyArray<string>
}

export type { SettingField }

/** One check of an upload preview; the first failing one is the preview's refusal. */
export interface PreviewCheck {
  readonly check: string
  readonly ok: boolean
  readonly detail: string
}

export type UploadSetting = "any" | "signed" | "off"

/** `POST extensions/preview`: what installing the uploaded archive would do, and which check refuses it. */
export interface UploadPreview {
  readonly archive: string
  readonly sha256: string
  readonly bytes: number
  readonly id: string | null
  readonly version: string | null
  readonly name: string | null
  readonly description: string | null
  readonly signature: { readonly status: SignatureStatus; readonly key: string | null; readonly trustedAs: string | null }
  /** Which web-install policy decided, and what it said about this archive. */
  readonly upload_policy: {
    readonly setting: UploadSetting
    readonly from: "admin_uploads" | "require_signatures" | "default"
    readonly ok: boolean
    readonly detail: string
  }
  readonly installed: { readonly version: string; readonly enabled: boolean } | null
  readonly action: "install" | "update" | "reinstall" | "downgrade"
  readonly requires: RequiresReport
  readonly dependencies: Readonly<Record<string, string>>
  readonly settings: number
  readonly capabilities: Capabilities | null
  readonly checks: ReadonlyArray<PreviewCheck>
  readonly refusal: { readonly check: string; readonly detail: string } | null
  readonly installable: boolean
}

/** What an operation did: the lifecycle's result. */
export type { OperationResult }

/** `POST updates`: each update's result, or why it failed. */
export type UpdateOutcome = OperationResult | { readonly id: string; readonly action: "failed"; readonly error: string }

/** `GET updates`: an extension installed from the registry that has a newer version there. */
export interface AvailableUpdate {
  readonly id: string
  readonly current: string
  readonly available: string
}

/** `GET registry?q=`: one registry entry, with its versions and `requires` checked here. */
export interface RegistryEntry {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly license: string
  readonly authors: ReadonlyArray<{ readonly name: string; readonly email?: string | undefined; readonly url?: string | undefined }>
  readonly repository: string | null
  readonly latest: string
  readonly versions: ReadonlyArray<{ readonly version: string; readonly requires: boolean; readonly latest: boolean }>
  readonly requires: RequiresReport
  readonly dependencies: Readonly<Record<string, string>>
  readonly installed: { readonly version: string; readonly enabled: boolean; readonly source: string } | null
  readonly updateAvailable: string | null
}

/** The search's `meta`: where the index came from. */
export interface RegistrySearchMeta {
  readonly url: string
  readonly source: string
  readonly fetchedAt: string
  readonly warning: string | null
  readonly query: string
}

/** A change on the panel since the desired-state file was applied: a planned action, or an extension it does not list. */
export interface Drift {
  readonly id: string
  readonly type: Plan["actions"][number]["type"] | "unlisted"
  readonly detail: string
}

/** The plan as the desired-state screen shows it: without its basis, with its text rendering. */
export type PlanView = Omit<Plan, "basis"> & { readonly text: string }

/** `GET desired-state`: the file, the plan against it (or why there is none), and the drift. */
export interface DesiredStateView {
  readonly file: string
  readonly exists: boolean
  readonly text: string | null
  readonly sha256: string | null
  readonly plan: PlanView | null
  readonly planError: { readonly code: string; readonly detail: string; readonly problems: ReadonlyArray<Problem> } | null
  readonly drift: ReadonlyArray<Drift>
}


export type ActivityRow = ActivityRecord

/** `GET activity/page`: one page, the total that matches, and the filter that was applied. */
export interface ActivityPage {
  readonly data: ReadonlyArray<ActivityRow>
  readonly meta: {
    readonly total: number
    readonly limit: number
    readonly offset: number
    readonly extension: string | null
    readonly action: string | null
  }
}

/** `POST servers`: a server of the embedded panel. */
export interface ServerRow {
  readonly uuid: string
  readonly name: string
  readonly owner: string
}
