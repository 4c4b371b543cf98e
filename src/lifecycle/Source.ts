import { Path } from "@effect/platform"
import { Data, Effect } from "effect"
import { limitsFromConfig, packTree, readArchiveFile, readDetachedSignature, verifyAndUnpack } from "../archive/Archive.js"
import { validateDirectory } from "../archive/ExtensionDirectory.js"
import { keyringFromConfig } from "../archive/Signing.js"
import { HostConfig } from "../config/HostConfig.js"
import { ManifestInvalid } from "../domain/Errors.js"
import type { ExtensionSource, SignatureRecord } from "../domain/Installed.js"
import type { ExtensionLayout, Manifest } from "../domain/Manifest.js"

// Where an extension comes from. Every source ends as a verified, unpacked tree in the staging folder:
// a folder is packed in memory first, so folders and archives pass the same checks (checksums,
// signature policy, limits) and every installed tree carries its checksums.json.

export type SourceSpec = Data.TaggedEnum<{
  Directory: { readonly path: string }
  Archive: { readonly path: string }
}>
export const SourceSpec = Data.taggedEnum<SourceSpec>()

export const describeSource = (spec: SourceSpec): string => spec.path

export interface StagedExtension {
  readonly directory: string
  readonly manifest: Manifest
  readonly layout: ExtensionLayout
  readonly source: ExtensionSource
  readonly signature: SignatureRecord
}

/** Verifies the source and unpacks it as `<staging>/<name>`; the manifest is decoded and checked there. */
export const stageSource = Effect.fn("Source.stage")(function*(spec: SourceSpec, name: string, frameworkVersion: string) {
  const path = yield* Path.Path
  const { config, paths } = yield* HostConfig
  const limits = limitsFromConfig(config)
  const absolute = path.resolve(spec.path)
  const { bytes, detachedSignature, sha256 } = yield* SourceSpec.$match(spec, {
    Directory: () =>
      Effect.map(packTree(absolute, { limits }), (packed) => ({
        bytes: packed.bytes,
        detachedSignature: undefined,
        sha256: packed.sha256
      })),
    Archive: () =>
      Effect.gen(function*() {
        const bytes = yield* readArchiveFile(absolute, limits)
        return { bytes, detachedSignature: yield* readDetachedSignature(absolute), sha256: undefined }
      })
  })
  const { inspection, staged } = yield* verifyAndUnpack(bytes, {
    source: path.basename(absolute),
    limits,
    keyring: keyringFromConfig(config),
    detachedSignature,
    requireSignatures: config.require_signatures,
    into: paths.staging,
    name
  })
  const validation = yield* validateDirectory(staged, frameworkVersion)
  if (validation.manifest === undefined || validation.layout === undefined) {
    return yield* new ManifestInvalid({ source: describeSource(spec), problems: validation.errors })
  }
  return {
    directory: staged,
    manifest: validation.manifest,
    layout: validation.layout,
    source: {
      type: spec._tag === "Directory" ? "path" : "archive",
      ref: absolute,
      sha256: sha256 ?? inspection.sha256
    },
    signature: { status: inspection.status, key: inspection.signature.key }
  } satisfies StagedExtension
})
