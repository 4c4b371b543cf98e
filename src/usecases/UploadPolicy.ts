import { adminUploadPolicy, type AdminUploads, type ConfigDocument } from "../config/HostConfig.js"
import type { SignatureStatus } from "../domain/Installed.js"

// The web-install policy (docs/operations.md "Web installs"): `admin_uploads` decides what the admin UI
// and API accept as uploads. Pure, so the upload worker (http/UploadWorker.ts) applies it where it reads
// the signature, and the preview words it the same way.

/**
 * What the worker that inspects an upload found: ok, or the refusal (the tag and message of the
 * archive/manifest error) and the stage that refused it: reading the archive, trusting it (checksums,
 * signature policy), or its manifest. A preview shows trust and manifest refusals as failing checks;
 * only an unreadable archive ends it. Stage "disk" is no refusal: this server could not read or write the
 * upload's files (a full disk), answered as a 500 that names it (DESIGN.md §23).
 */
export type UploadVerdict =
  | { readonly ok: true }
  | {
    readonly ok: false
    readonly stage: "archive" | "trust" | "policy" | "manifest" | "worker" | "disk"
    readonly tag: string
    readonly message: string
    readonly reason?: string
  }

/**
 * What the admin UI and API accept as uploads (docs/operations.md "Web installs"), and which setting
 * decided it: `admin_uploads` itself, or (unset) `require_signatures`, or the default `any`.
 */
export interface UploadPolicy {
  readonly setting: AdminUploads
  readonly from: "admin_uploads" | "require_signatures" | "default"
}

export const uploadPolicyOf = (config: ConfigDocument): UploadPolicy => ({
  setting: adminUploadPolicy(config),
  from: config.admin_uploads !== undefined ? "admin_uploads" : config.require_signatures ? "require_signatures" : "default"
})

/** How a policy reads in a message: `admin_uploads is "signed"` (and why, when it was derived). */
export const policyWords = (policy: UploadPolicy): string =>
  `admin_uploads is "${policy.setting}"${policy.from === "require_signatures" ? " (unset; require_signatures is on)" : policy.from === "default" ? " (unset)" : ""}`

const signatureWords = (status: SignatureStatus, key: string | null | undefined): string => {
  switch (status) {
    case "unsigned":
      // A detached signature names no key: one by a key outside the keyring verifies against none.
      return "not signed by a trusted key (it has no signature, or one that matches no key in the keyring)"
    case "untrusted":
      return `signed by a key this panel does not trust${key === undefined || key === null ? "" : ` (${key.slice(0, 16)}…)`}`
    case "invalid":
      return "signed, but the signature does not verify"
    case "modified":
      return "changed after it was packed"
    case "signed":
      return "signed by a trusted key"
  }
}

/** Why `signed` refuses an archive with this signature status, or undefined when the policy lets it through. */
export const policyDetail = (policy: UploadPolicy, source: string, status: SignatureStatus, key: string | null | undefined): string | undefined =>
  policy.setting !== "signed" || status === "signed"
    ? undefined
    : `${policyWords(policy)}: the admin UI and API accept only archives signed by a trusted key, and ${source} is ${signatureWords(status, key)}; install it on the server with host add, or sign it with a key in the keyring`

export const policyRefusal = (policy: UploadPolicy, source: string, status: SignatureStatus, key: string | null | undefined): UploadVerdict | undefined => {
  const detail = policyDetail(policy, source, status, key)
  return detail === undefined ? undefined : { ok: false, stage: "policy", tag: "UploadPolicy", message: detail }
}

