import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { frameworkVersion } from "../config/HostConfig.js"
import { formatBytes } from "../domain/Bytes.js"
import { ManifestInvalid } from "../domain/Errors.js"
import type { Problem } from "../domain/Problems.js"
import { archiveFileName, packTree } from "./Archive.js"
import { ArchiveIOError, ioError, SecretKeyMissing } from "./ArchiveErrors.js"
import { validateDirectory } from "./ExtensionDirectory.js"
import { decodeSecretKey, type KeyPair } from "./Signing.js"
import { writeFilesAtomic } from "../system/AtomicFile.js"

// The authoring side, shared by `host export` and the SDK's `host-pack` / `host-keygen`, so both
// produce the same bytes and say the same things: one implementation, two entry points.

export interface ExportOptions {
  /** The extension folder or its extension.yaml. */
  readonly path: string
  /** A file path, or a folder (existing, or ending in `/`) to put the archive in. Default: `cwd`. */
  readonly output?: string | undefined
  /** The folder relative paths are resolved against. */
  readonly cwd: string
  readonly sign: boolean
  /** The secret key text (64 or 128 hex) when signing. */
  readonly secretKey?: string | undefined
  /** Where the secret key came from, for messages: `HOST_SECRET_KEY`, `--secret-key`. */
  readonly secretKeySource: string
  /** Validate and pack in memory; write nothing. */
  readonly dryRun?: boolean | undefined
}

export interface ExportResult {
  readonly id: string
  readonly version: string
  readonly files: number
  readonly bytes: number
  readonly sha256: string
  /** Absolute paths of what was (or, with dry-run, would be) written. */
  readonly archive: string
  readonly sha256File: string
  readonly signatureFile: string | null
  /** The public key that signed, lowercase hex. */
  readonly key: string | null
  readonly written: boolean
  readonly warnings: ReadonlyArray<Problem>
}

const isDirectory = (target: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.stat(target).pipe(
      Effect.map((info) => info.type === "Directory"),
      Effect.orElseSucceed(() => false)
    ))

/** Where the archive goes: `--output` as a file, or a folder (existing, or ending in `/`). */
export const resolveOutputPath = Effect.fn("Authoring.resolveOutputPath")(function*(
  output: string | undefined,
  fileName: string,
  cwd: string
) {
  const path = yield* Path.Path
  if (output === undefined || output === "") return path.join(path.resolve(cwd), fileName)
  const absolute = path.resolve(cwd, output)
  if (output.endsWith("/") || output.endsWith(path.sep) || (yield* isDirectory(absolute))) return path.join(absolute, fileName)
  return absolute
})

/**
 * Writes the files next to each other through temporary names, then renames them into place, so
 * an interrupted export never leaves a half-written archive under the final name.
 */
const writeAll = (files: ReadonlyArray<readonly [string, Uint8Array]>, remove: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* writeFilesAtomic(files).pipe(Effect.mapError(ioError("write", files[0]![0])))
    for (const stale of remove) {
      if (yield* fs.exists(stale).pipe(Effect.orElseSucceed(() => false))) {
        yield* fs.remove(stale).pipe(Effect.mapError(ioError("remove", stale)))
      }
    }
  })

/**
 * `host export` / `host-pack`: checks the secret key (when signing) and the manifest before
 * anything else, packs the tree, and writes `<vendor>-<name>-<version>.host`, its `.sha256`
 * (`<hex>  <basename>\n`) and, when signed, its detached `.sig`. A stale `.sig` of an unsigned
 * re-export is removed so it cannot contradict the new archive.
 */
export const exportExtension = Effect.fn("Authoring.export")(function*(options: ExportOptions) {
  const path = yield* Path.Path
  const secretKey = options.sign
    ? yield* (options.secretKey === undefined || options.secretKey.trim() === ""
      ? Effect.fail(new SecretKeyMissing({ hint: `${options.secretKeySource} is not set (create a key pair with host keygen)` }))
      : decodeSecretKey(options.secretKey, options.secretKeySource))
    : undefined
  const target = path.resolve(options.cwd, options.path)
  const report = yield* validateDirectory(target, frameworkVersion)
  if (report.manifest === undefined || report.errors.length > 0) {
    return yield* new ManifestInvalid({ source: path.join(report.root, "extension.yaml"), problems: report.errors })
  }
  const manifest = report.manifest.document
  const packed = yield* packTree(report.root, { secretKey })
  const archive = yield* resolveOutputPath(options.output, archiveFileName(manifest.id, manifest.version), options.cwd)
  const sha256File = `${archive}.sha256`
  const signatureFile = `${archive}.sig`
  if (archive === report.root) {
    return yield* new ArchiveIOError({ operation: "write", path: archive, detail: "it is the extension folder itself" })
  }
  if (options.dryRun !== true) {
    const files: Array<readonly [string, Uint8Array]> = [
      [archive, packed.bytes],
      [sha256File, Buffer.from(`${packed.sha256}  ${path.basename(archive)}\n`)]
    ]
    if (packed.detachedSignature !== undefined) files.push([signatureFile, Buffer.from(`${packed.detachedSignature}\n`)])
    yield* writeAll(files, packed.detachedSignature === undefined ? [signatureFile] : [])
  }
  return {
    id: manifest.id,
    version: manifest.version,
    files: packed.files,
    bytes: packed.bytes.length,
    sha256: packed.sha256,
    archive,
    sha256File,
    signatureFile: packed.detachedSignature === undefined ? null : signatureFile,
    key: secretKey?.publicKey ?? null,
    written: options.dryRun !== true,
    warnings: report.warnings
  } satisfies ExportResult
})

/** The human summary of an export. */
export const renderExport = (result: ExportResult): string =>
  [
    `${result.written ? "Exported" : "Would export (dry run)"} ${result.id} ${result.version}: ${result.files} files, ${formatBytes(result.bytes)}`,
    `  archive:   ${result.archive}`,
    `  sha256:    ${result.sha256}${result.written ? `  (${result.sha256File})` : ""}`,
    result.key === null
      ? "  signature: none (unsigned; use --sign with HOST_SECRET_KEY to sign)"
      : `  signature: ed25519 key ${result.key}${result.written && result.signatureFile !== null ? `  (${result.signatureFile})` : ""}`
  ].join("\n")

/** What `host keygen` and `host-keygen` print: both keys and the lines to use them. */
export const renderKeyPair = (pair: KeyPair, signCommand: string): string =>
  [
    `Public key: ${pair.public_key}`,
    `Secret key: ${pair.secret_key}`,
    "",
    "Trust the public key on a panel, in config/host.yaml:",
    `  public_key: "${pair.public_key}"`,
    "or as one of several trusted keys:",
    "  trusted_keys:",
    "    - name: my-key",
    `      public_key: "${pair.public_key}"`,
    "or in the panel's environment:",
    `  HOST_PUBLIC_KEY=${pair.public_key}`,
    "",
    "Sign with the secret key from the environment (never commit it, never put it in config/host.yaml):",
    `  HOST_SECRET_KEY=${pair.secret_key} ${signCommand}`
  ].join("\n")
