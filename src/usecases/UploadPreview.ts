import { Effect, Either } from "effect"
import semver from "semver"
import { signaturePolicy } from "../archive/Signing.js"
import { HostConfig } from "../config/HostConfig.js"
import { installedStates } from "../domain/Installed.js"
import { installPreconditions } from "../domain/Preconditions.js"
import { dependencyProblems } from "../domain/Rules.js"
import { currentVersions, installedList } from "./Facts.js"
import { requiresReport } from "./Requires.js"
import type { InspectedUpload } from "./UploadFacts.js"
import { policyDetail, policyWords, uploadPolicyOf } from "./UploadPolicy.js"
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

export const uploadPreview = (archive: string, facts: InspectedUpload) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    const uploads = uploadPolicyOf(config)
    const checks: Array<PreviewCheck> = []
    checks.push(facts.integrity === null
      ? { check: "integrity", ok: true, detail: `${facts.listedFiles} files match checksums.json` }
      : { check: `integrity (${facts.integrity.reason})`, ok: false, detail: facts.integrity.message })
    const policy = signaturePolicy(facts.status, config.require_signatures)
    checks.push({
      check: "signature",
      ok: Either.isRight(policy) && facts.status !== "invalid" && facts.status !== "modified",
      detail: Either.isLeft(policy)
        ? policy.left
        : facts.status === "signed"
        ? `signed by ${facts.signature.trustedAs ?? facts.signature.key ?? "a trusted key"}`
        : `${facts.status}${config.require_signatures ? "" : " (this panel does not require signatures)"}`
    })
    // Which policy decided what this upload may do (docs/operations.md "Web installs").
    const refusedByPolicy = policyDetail(uploads, archive, facts.status, facts.signature.key)
    const uploadPolicy = {
      setting: uploads.setting,
      from: uploads.from,
      ok: refusedByPolicy === undefined,
      detail: refusedByPolicy ?? (uploads.setting === "signed"
        ? `${policyWords(uploads)}: signed by a trusted key, accepted`
        : `${policyWords(uploads)}: any archive whose checks pass is accepted`)
    }
    checks.push({ check: "upload policy", ok: uploadPolicy.ok, detail: uploadPolicy.detail })
    const manifest = facts.manifest.decoded
    checks.push(manifest === null
      ? { check: "manifest", ok: false, detail: facts.manifest.problems.map((p) => `${p.path}: ${p.message}`).join("; ") || "extension.yaml cannot be read" }
      : { check: "manifest", ok: true, detail: `${manifest.id} ${manifest.version}` })
    const versions = yield* currentVersions
    const requires = requiresReport(manifest?.requires, versions)
    const all = yield* installedList
    const installed = installedStates(all)
    const existing = manifest === null ? undefined : all.find((other) => other.extensionId === manifest.id)
    if (manifest !== null) {
      checks.push({ check: "requires", ok: requires.ok, detail: requires.ok ? (requires.warnings.join("; ") || "met") : requires.unmet.join("; ") })
      const problems = dependencyProblems(manifest, installed)
      checks.push({ check: "dependencies", ok: problems.length === 0, detail: problems.join("; ") || "met" })
      // The install's own preconditions: an upload over an installed id is an update of it.
      const precondition = installPreconditions({
        operation: existing === undefined ? "add" : "update",
        document: manifest,
        source: archive,
        existing,
        force: false,
        disabled: false,
        versions,
        installed
      })
      if (Either.isLeft(precondition)) {
        const check = preconditionCheck[precondition.left.reason]
        if (!checks.some((shown) => shown.check === check)) checks.push({ check, ok: false, detail: precondition.left.detail })
      }
    }
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
