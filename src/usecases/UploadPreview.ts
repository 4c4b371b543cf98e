import { Effect, Either } from "effect"
import semver from "semver"
import { signaturePolicy } from "../archive/Signing.js"
import { HostConfig } from "../config/HostConfig.js"
import { installedStates } from "../domain/Installed.js"
import { type InstallRequest, installPreconditions } from "../domain/Preconditions.js"
import { dependencyProblems } from "../domain/Rules.js"
import { currentVersions, installedList } from "./Facts.js"
import { requiresReport } from "./Requires.js"
import type { InspectedUpload } from "./UploadFacts.js"
import { policyDetail, policyWords, type UploadPolicy, uploadPolicyOf } from "./UploadPolicy.js"
import type { PreviewCheck, UploadPreview } from "./Views.js"

// `POST extensions/preview`: what installing an uploaded archive would do, from what the upload's one
// inspection found (UploadFacts.ts). Its checks are the install's own: the archive's integrity and
// signature policy, the web-install policy, and the preconditions of domain/Preconditions.ts, so a
// preview refuses what the install would refuse, in the same words.

/** How the uploaded version relates to the installed one. */
const actionOf = (version: string, installed: string | undefined): UploadPreview["action"] =>
  installed === undefined
    ? "install"
    : semver.valid(version) === null || semver.valid(installed) === null
    ? "update"
    : semver.gt(version, installed)
    ? "update"
    : semver.eq(version, installed)
    ? "reinstall"
    : "downgrade"

/** The check an install precondition's refusal shows as (the requirement and dependency checks are shown on their own). */
const preconditionCheck = {
  "already-installed": "version",
  "not-installed": "version",
  "not-newer": "version",
  requirements: "requires",
  dependencies: "dependencies",
  dependents: "dependents"
} as const

type UploadManifest = NonNullable<InspectedUpload["manifest"]["decoded"]>

const integrityCheck = (facts: InspectedUpload): PreviewCheck =>
  facts.integrity === null
    ? { check: "integrity", ok: true, detail: `${facts.listedFiles} files match checksums.json` }
    : { check: `integrity (${facts.integrity.reason})`, ok: false, detail: facts.integrity.message }

/** The archive's signature under this panel's `require_signatures`. */
const signatureCheck = (facts: InspectedUpload, requireSignatures: boolean): PreviewCheck => {
  const policy = signaturePolicy(facts.status, requireSignatures)
  return {
    check: "signature",
    ok: Either.isRight(policy) && facts.status !== "invalid" && facts.status !== "modified",
    detail: Either.isLeft(policy)
      ? policy.left
      : facts.status === "signed"
      ? `signed by ${facts.signature.trustedAs ?? facts.signature.key ?? "a trusted key"}`
      : `${facts.status}${requireSignatures ? "" : " (this panel does not require signatures)"}`
  }
}

/** Which policy decided what this upload may do (docs/operations.md "Web installs"). */
const uploadPolicyVerdict = (uploads: UploadPolicy, archive: string, facts: InspectedUpload) => {
  const refusedByPolicy = policyDetail(uploads, archive, facts.status, facts.signature.key)
  return {
    setting: uploads.setting,
    from: uploads.from,
    ok: refusedByPolicy === undefined,
    detail: refusedByPolicy ?? (uploads.setting === "signed"
      ? `${policyWords(uploads)}: signed by a trusted key, accepted`
      : `${policyWords(uploads)}: any archive whose checks pass is accepted`)
  }
}

const manifestCheck = (facts: InspectedUpload): PreviewCheck => {
  const manifest = facts.manifest.decoded
  return manifest === null
    ? { check: "manifest", ok: false, detail: facts.manifest.problems.map((p) => `${p.path}: ${p.message}`).join("; ") || "extension.yaml cannot be read" }
    : { check: "manifest", ok: true, detail: `${manifest.id} ${manifest.version}` }
}

/**
 * The requirements, the dependencies, and the install's own preconditions (an upload over an installed
 * id is an update of it); a precondition whose check is already shown is not shown twice.
 */
const installChecks = (
  manifest: UploadManifest,
  archive: string,
  requires: ReturnType<typeof requiresReport>,
  request: Pick<InstallRequest, "existing" | "versions" | "installed">
): Array<PreviewCheck> => {
  const checks: Array<PreviewCheck> = []
  checks.push({ check: "requires", ok: requires.ok, detail: requires.ok ? (requires.warnings.join("; ") || "met") : requires.unmet.join("; ") })
  const problems = dependencyProblems(manifest, request.installed)
  checks.push({ check: "dependencies", ok: problems.length === 0, detail: problems.join("; ") || "met" })
  const precondition = installPreconditions({
    ...request,
    operation: request.existing === undefined ? "add" : "update",
    document: manifest,
    source: archive,
    force: false,
    disabled: false
  })
  if (Either.isLeft(precondition)) {
    const check = preconditionCheck[precondition.left.reason]
    if (!checks.some((shown) => shown.check === check)) checks.push({ check, ok: false, detail: precondition.left.detail })
  }
  return checks
}

export const uploadPreview = (archive: string, facts: InspectedUpload) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const uploadPolicy = uploadPolicyVerdict(uploadPolicyOf(config), archive, facts)
    const manifest = facts.manifest.decoded
    const versions = yield* currentVersions
    const requires = requiresReport(manifest?.requires, versions)
    const all = yield* installedList
    const existing = manifest === null ? undefined : all.find((other) => other.extensionId === manifest.id)
    const checks: Array<PreviewCheck> = [
      integrityCheck(facts),
      signatureCheck(facts, config.require_signatures),
      { check: "upload policy", ok: uploadPolicy.ok, detail: uploadPolicy.detail },
      manifestCheck(facts),
      ...(manifest === null ? [] : installChecks(manifest, archive, requires, { existing, versions, installed: installedStates(all) }))
    ]
    const failing = checks.find((check) => !check.ok)
    return {
      archive,
      sha256: facts.sha256,
      bytes: facts.bytes,
      id: facts.manifest.id,
      version: facts.manifest.version,
      name: manifest?.name ?? null,
      description: manifest?.description ?? null,
      signature: { status: facts.status, key: facts.signature.key, trustedAs: facts.signature.trustedAs ?? null },
      upload_policy: uploadPolicy,
      installed: existing === undefined ? null : { version: existing.version, enabled: existing.enabled },
      action: manifest === null ? "install" : actionOf(manifest.version, existing?.version),
      requires,
      dependencies: manifest?.dependencies ?? {},
      settings: manifest?.settings ?? 0,
      capabilities: facts.capabilities,
      checks,
      refusal: failing === undefined ? null : { check: failing.check, detail: failing.detail },
      installable: failing === undefined
    } satisfies UploadPreview
  })
