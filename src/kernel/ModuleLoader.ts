import { FileSystem, Path } from "@effect/platform"
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { pathToFileURL } from "node:url"
import { writeFileAtomic } from "../system/AtomicFile.js"
import { sha256Hex } from "../system/Hash.js"

// Loads extension code (migrations now, entrypoints and route files in the runtime): `.ts` and `.js`
// are bundled with esbuild on load, and `@host/sdk` / `@host/sdk/server` resolve to the framework's own
// copy, so an installed extension needs no node_modules of its own for them. The compiled module is
// kept under storage/host/modules/<sha256>.mjs and imported from there.
//
// A server starts far more often than an extension's code changes, so compiling is skipped when nothing
// it read changed (docs/decisions.md "Compiled-module cache"): beside the compiled modules, one small
// record per source file (storage/host/modules/sources/<sha256 of the path>.json) names the compiled
// module and the sha256 of every file esbuild read for it. When each of those files still has that
// content, the compiled module is imported as it is; otherwise it is compiled again and the record rewritten.

export class ModuleLoadError extends Data.TaggedError("ModuleLoadError")<{
  readonly file: string
  readonly detail: string
}> {
  override get message() {
    return `cannot load ${this.file}: ${this.detail}`
  }
}

export type LoadedModule = Readonly<Record<string, unknown>>

/** `bin/host.js` provides an importer from a real ES module (see there); tests and other hosts use import(). */
const importModule = <A = LoadedModule>(specifier: string): Promise<A> => {
  const provided = (globalThis as Record<symbol, unknown>)[Symbol.for("host.import")]
  return typeof provided === "function" ? (provided as (specifier: string) => Promise<A>)(specifier) : import(specifier)
}

export class ModuleLoader extends Context.Tag("host/ModuleLoader")<
  ModuleLoader,
  { readonly load: (file: string) => Effect.Effect<LoadedModule, ModuleLoadError> }
>() {}

export interface ModuleLoaderOptions {
  /** The framework's built SDK (`sdk/dist`), holding index.js and server.js. */
  readonly sdkDirectory: string
  /** Where compiled modules are kept. */
  readonly cacheDirectory: string
}

const describe = (error: unknown): string => {
  const failure = error as { errors?: ReadonlyArray<{ text: string; location?: { file: string; line: number } | null }> }
  if (Array.isArray(failure.errors) && failure.errors.length > 0) {
    return failure.errors
      .map((message) => `${message.location ? `${message.location.file}:${message.location.line}: ` : ""}${message.text}`)
      .join("; ")
  }
  return error instanceof Error ? error.message : String(error)
}

/** The record kept per source file: what the compiled module was made from. */
const CompiledRecord = Schema.parseJson(Schema.Struct({
  /** How it was compiled (the SDK it resolves to, the loader's options): another recipe compiles again. */
  recipe: Schema.String,
  /** The compiled module's file name in the cache folder. */
  module: Schema.String,
  /** Every file the bundle read, by absolute path, with the sha256 of its content then. */
  inputs: Schema.Record({ key: Schema.String, value: Schema.String })
}))
const decodeRecord = Schema.decodeUnknownOption(CompiledRecord)
const encodeRecord = Schema.encodeSync(CompiledRecord)

/** Raised when the compile options below change, so records written by an older loader compile again. */
const RECIPE_VERSION = 1

/** What the loader's steps share: its options, the platform, and how compiles are told apart. */
interface Loader {
  readonly options: ModuleLoaderOptions
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  /** This loader's `recipe`, as each record states it. */
  readonly recipe: string
}

/** The SDK file `@host/sdk` or `@host/sdk/server` resolves to, as a file URL. */
const sdkFile = ({ options, path }: Loader, specifier: string) =>
  pathToFileURL(path.join(options.sdkDirectory, specifier.endsWith("/server") ? "server.js" : "index.js")).href

/** Where the record of what `file`'s compiled module was made from is kept. */
const recordFile = ({ options, path }: Loader, file: string) => path.join(options.cacheDirectory, "sources", `${sha256Hex(file)}.json`)

/** Bundles `file` with esbuild: the code, and the sha256 of every file it read. */
const compile = (loader: Loader, file: string) =>
  Effect.tryPromise({
    try: async () => {
      // What each file held when esbuild came to read it (read here just before esbuild does).
      const read = new Map<string, string>()
      const esbuild = await importModule<typeof import("esbuild")>("esbuild")
      const result = await esbuild.build({
        entryPoints: [file],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        target: "node20",
        logLevel: "silent",
        plugins: [{
          name: "host-sdk",
          setup(build) {
            build.onResolve({ filter: /^@host\/sdk(\/server)?$/ }, (args) => ({ path: sdkFile(loader, args.path), external: true }))
            build.onLoad({ filter: /.*/, namespace: "file" }, async (args) => {
              read.set(args.path, sha256Hex(await readFile(args.path)))
              return undefined
            })
          }
        }]
      })
      return { code: result.outputFiles[0]!.text, inputs: read }
    },
    catch: (error) => new ModuleLoadError({ file, detail: describe(error) })
  })

/** The compiled module recorded for `file`, if every file it was made from still has the recorded content. */
const cached = (loader: Loader, file: string) =>
  Effect.gen(function*() {
    const { fs, options, path, recipe } = loader
    const record = decodeRecord(yield* fs.readFileString(recordFile(loader, file)))
    if (Option.isNone(record) || record.value.recipe !== recipe) return Option.none<string>()
    for (const [input, digest] of Object.entries(record.value.inputs)) {
      if (sha256Hex(yield* fs.readFile(input)) !== digest) return Option.none<string>()
    }
    const compiled = path.join(options.cacheDirectory, record.value.module)
    return (yield* fs.exists(compiled)) ? Option.some(compiled) : Option.none<string>()
  }).pipe(Effect.orElseSucceed(() => Option.none<string>()))

/** Writes the compiled module (unless kept already) and the record of what it was made from. */
const keep = (loader: Loader, file: string, compiled: string, code: string, inputs: ReadonlyMap<string, string>) =>
  Effect.gen(function*() {
    const { fs, path, recipe } = loader
    if (!(yield* fs.exists(compiled))) yield* writeFileAtomic(compiled, code)
    // A file changed while it was compiled may be in the module in either version: no record then,
    // so the next load compiles again.
    for (const [input, digest] of inputs) if (sha256Hex(yield* fs.readFile(input)) !== digest) return
    yield* fs.makeDirectory(path.dirname(recordFile(loader, file)), { recursive: true })
    yield* writeFileAtomic(recordFile(loader, file), encodeRecord({ recipe, module: path.basename(compiled), inputs: Object.fromEntries(inputs) }))
  }).pipe(
    Effect.provideService(FileSystem.FileSystem, loader.fs),
    Effect.provideService(Path.Path, loader.path),
    Effect.mapError((error) => new ModuleLoadError({ file, detail: error.message }))
  )

/** Compiles `file`, keeps the module and the record of what it was made from; returns the module's path. */
const compileAndKeep = (loader: Loader, file: string) =>
  Effect.gen(function*() {
    const { code, inputs } = yield* compile(loader, file)
    const compiled = loader.path.join(loader.options.cacheDirectory, `${sha256Hex(code)}.mjs`)
    yield* keep(loader, file, compiled, code, inputs)
    return compiled
  })

const load = (loader: Loader, file: string) =>
  Effect.gen(function*() {
    const hit = yield* cached(loader, file)
    const compiled = Option.isSome(hit) ? hit.value : yield* compileAndKeep(loader, file)
    return yield* Effect.tryPromise({
      try: () => importModule(pathToFileURL(compiled).href),
      catch: (error) => new ModuleLoadError({ file, detail: describe(error) })
    })
  }).pipe(Effect.withSpan("ModuleLoader.load", { attributes: { file } }))

export const make = (options: ModuleLoaderOptions) =>
  Effect.gen(function*() {
    const loader: Loader = {
      options,
      fs: yield* FileSystem.FileSystem,
      path: yield* Path.Path,
      recipe: `${RECIPE_VERSION}|${options.sdkDirectory}`
    }
    return { load: (file: string) => load(loader, file) }
  })

export const layer = (options: ModuleLoaderOptions): Layer.Layer<ModuleLoader, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(ModuleLoader, make(options))
