import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Either } from "effect"
import type * as esbuild from "esbuild"
import { decodeManifest } from "../domain/Manifest.js"
import { manifestYamlLimits, readYaml } from "../domain/YamlText.js"
import { browserBundleOptions, hostGlobals } from "./FrontendBuild.js"
import { writeFilesAtomic } from "../system/AtomicFile.js"

// How an extension's frontend is bundled: `host build`, `host dev --watch` and the fixtures' committed
// bundles all go through `frontendBuildOptions` (over FrontendBuild's shared browser settings), so a
// bundle built anywhere looks the same. React, ReactDOM, the JSX runtime and `@host/sdk` are never inside
// a bundle: the panel page provides them once (docs/authoring.md), and every extension shares that copy.

/** Where `host build` looks for the frontend entry, in this order. */
export const entryCandidates = ["tsx", "ts", "jsx", "js"].map((extension) => `resources/frontend/src/index.${extension}`)

export const defaultBundle = "resources/frontend/dist/extension.js"

export interface BuildMessage {
  readonly file: string | null
  readonly line: number | null
  /** 1-based, as editors count. */
  readonly column: number | null
  readonly text: string
}

/** `file:line:column: text`, the form editors and terminals make clickable. */
export const formatBuildMessage = (message: BuildMessage): string =>
  message.file === null ? message.text : `${message.file}:${message.line}:${message.column}: ${message.text}`

export class FrontendBuildFailed extends Data.TaggedError("FrontendBuildFailed")<{
  readonly root: string
  readonly errors: ReadonlyArray<BuildMessage>
}> {
  override get message() {
    const shown = this.errors.slice(0, 10).map(formatBuildMessage)
    const more = this.errors.length > shown.length ? `\n(and ${this.errors.length - shown.length} more errors)` : ""
    return `the frontend of ${this.root} does not build:\n${shown.join("\n")}${more}`
  }
}

export class FrontendSourceMissing extends Data.TaggedError("FrontendSourceMissing")<{
  readonly root: string
  readonly detail: string
}> {
  override get message() {
    return `${this.root}: ${this.detail}`
  }
}

export interface FrontendTarget {
  /** The extension folder (absolute). */
  readonly root: string
  /** The entry, relative to root. */
  readonly entry: string
  /** The bundle path, relative to root (`frontend.bundle`, else the default). */
  readonly bundle: string
  /** `frontend.styles` when declared, relative to root. */
  readonly styles: string | undefined
}

export interface BuildResult {
  /** The bundle, relative to the extension folder. */
  readonly bundle: string
  readonly bytes: number
  /** The stylesheet written beside it, when the source imports CSS. */
  readonly styles?: string
  readonly ms: number
}

const importEsbuild = (): Promise<typeof esbuild> => {
  // bin/host.js provides an importer from a real ES module (the CLI bundle is CommonJS; see ModuleLoader).
  const provided = (globalThis as Record<symbol, unknown>)[Symbol.for("host.import")]
  return typeof provided === "function"
    ? (provided as (specifier: string) => Promise<typeof esbuild>)("esbuild")
    : import("esbuild")
}

/**
 * Imports that look like the panel's but are not provided by it (`react-dom/server`, `@host/sdk/server`)
 * would otherwise be looked for in the extension's (absent) node_modules: they get a clear error instead.
 */
export const panelImportGuard: esbuild.Plugin = {
  name: "host-panel-import-guard",
  setup(build) {
    build.onResolve({ filter: /^(?:react|react-dom|@host\/sdk)\/.+$/ }, (args) => {
      if (hostGlobals[args.path] !== undefined) return undefined
      return {
        errors: [{
          text: args.path.startsWith("@host/sdk/")
            ? `${args.path} is backend or test code and cannot be imported by a frontend bundle; import from "@host/sdk"`
            : `${args.path} is not provided by the panel; a bundle may import ${Object.keys(hostGlobals).join(", ")}`
        }]
      }
    })
  }
}

/** The esbuild settings of every extension bundle: one IIFE, minified, a linked source map. */
export const frontendBuildOptions = (target: FrontendTarget, options: { readonly write?: boolean } = {}): esbuild.BuildOptions => {
  const shared = browserBundleOptions({ minify: true })
  return {
    ...shared,
    absWorkingDir: target.root,
    entryPoints: [target.entry],
    outfile: target.bundle,
    sourcemap: "linked",
    jsxDev: false,
    loader: { ".png": "dataurl", ".svg": "dataurl", ".jpg": "dataurl", ".gif": "dataurl", ".woff2": "dataurl" },
    plugins: [panelImportGuard, ...(shared.plugins ?? [])],
    write: options.write ?? false,
    logLevel: "silent"
  }
}

/** esbuild's messages, with paths relative to the extension folder and 1-based columns. */
export const buildMessages = (error: unknown): ReadonlyArray<BuildMessage> => {
  const failure = error as { errors?: ReadonlyArray<esbuild.Message> }
  if (!Array.isArray(failure?.errors) || failure.errors.length === 0) {
    return [{ file: null, line: null, column: null, text: error instanceof Error ? error.message : String(error) }]
  }
  return failure.errors.map((message) => ({
    file: message.location?.file ?? null,
    line: message.location?.line ?? null,
    column: message.location === null || message.location === undefined ? null : message.location.column + 1,
    text: message.text
  }))
}

/** Reads the manifest's `frontend.bundle` / `frontend.styles` and finds the entry. */
export const resolveFrontendTarget = Effect.fn("FrontendBuild.resolveTarget")(function*(folder: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(folder)
  const manifestFile = path.join(root, "extension.yaml")
  const text = yield* fs.readFileString(manifestFile).pipe(
    Effect.mapError(() => new FrontendSourceMissing({ root, detail: "extension.yaml not found (is this an extension folder?)" }))
  )
  const parsed = readYaml(text, manifestYamlLimits)
  const document = Either.isLeft(parsed) ? undefined : decodeManifest(parsed.right).document
  if (document === undefined) {
    return yield* new FrontendSourceMissing({ root, detail: "extension.yaml does not decode; run host validate to see why" })
  }
  let entry: string | undefined
  for (const candidate of entryCandidates) {
    if (yield* fs.exists(path.join(root, candidate)).pipe(Effect.orElseSucceed(() => false))) {
      entry = candidate
      break
    }
  }
  if (entry === undefined) {
    return yield* new FrontendSourceMissing({ root, detail: `no frontend source: expected one of ${entryCandidates.join(", ")}` })
  }
  return {
    root,
    entry,
    bundle: document.frontend?.bundle ?? defaultBundle,
    styles: document.frontend?.styles
  } satisfies FrontendTarget
})

/**
 * Turns esbuild's in-memory output into the files to write: the bundle and its map as esbuild named
 * them, and the CSS (with its map) moved to `frontend.styles` when the manifest puts it elsewhere.
 */
const outputFiles = (target: FrontendTarget, files: ReadonlyArray<esbuild.OutputFile>, path: Path.Path) => {
  const bundleAbsolute = path.join(target.root, target.bundle)
  const cssDefault = bundleAbsolute.replace(/\.[cm]?js$/, "") + ".css"
  const cssTarget = target.styles === undefined ? cssDefault : path.join(target.root, target.styles)
  const writes: Array<readonly [string, Uint8Array]> = []
  let css: string | undefined
  for (const file of files) {
    if (file.path === cssDefault) {
      css = cssTarget
      const text = file.text.replace(
        `/*# sourceMappingURL=${path.basename(cssDefault)}.map */`,
        `/*# sourceMappingURL=${path.basename(cssTarget)}.map */`
      )
      writes.push([cssTarget, Buffer.from(text)])
    } else if (file.path === `${cssDefault}.map`) {
      writes.push([`${cssTarget}.map`, file.contents])
    } else {
      writes.push([file.path, file.contents])
    }
  }
  return { writes, css }
}

/**
 * Builds the frontend of the extension in `folder`. Files are written only after a successful build,
 * each through a temporary name and a rename, so a failing build leaves the previous bundle as it was.
 */
export const buildFrontend = Effect.fn("FrontendBuild.build")(function*(folder: string) {
  const target = yield* resolveFrontendTarget(folder)
  return yield* buildTarget(target)
})

export const buildTarget = (target: FrontendTarget, context?: esbuild.BuildContext) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* Effect.tryPromise({
      try: async () => context !== undefined ? context.rebuild() : (await importEsbuild()).build(frontendBuildOptions(target)),
      catch: (error) => new FrontendBuildFailed({ root: target.root, errors: buildMessages(error) })
    })
    return yield* writeOutput(target, result.outputFiles ?? [], started)
  })

const writeOutput = (target: FrontendTarget, files: ReadonlyArray<esbuild.OutputFile>, started: number) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { css, writes } = outputFiles(target, files, path)
    const fail = (error: { readonly message: string }) =>
      new FrontendBuildFailed({ root: target.root, errors: [{ file: null, line: null, column: null, text: error.message }] })
    // The map first and the bundle last: a page that fetches the bundle mid-write gets a whole file.
    const ordered = [...writes].sort(([a], [b]) => Number(a.endsWith(".map")) > Number(b.endsWith(".map")) ? -1 : 1)
    yield* writeFilesAtomic(ordered).pipe(Effect.mapError(fail))
    const bundleBytes = writes.find(([file]) => file === path.join(target.root, target.bundle))?.[1].length ?? 0
    return {
      bundle: target.bundle,
      bytes: bundleBytes,
      ...(css === undefined ? {} : { styles: path.relative(target.root, css) }),
      ms: Math.round(performance.now() - started)
    } satisfies BuildResult
  })

/**
 * An incremental build context for watching: rebuilds reuse esbuild's parse cache (tens of
 * milliseconds). Disposed when the scope closes.
 */
export const frontendBuildContext = (target: FrontendTarget) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => (await importEsbuild()).context(frontendBuildOptions(target)),
      catch: (error) => new FrontendBuildFailed({ root: target.root, errors: buildMessages(error) })
    }),
    (context) => Effect.promise(() => context.dispose())
  )
