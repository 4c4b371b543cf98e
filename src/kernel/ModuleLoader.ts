import { FileSystem, Path } from "@effect/platform"
import { Context, Data, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { pathToFileURL } from "node:url"
import { writeFileAtomic } from "../system/AtomicFile.js"

// Loads extension code (migrations now, entrypoints and route files in the runtime): `.ts` and `.js`
// are bundled with esbuild on load, and `@host/sdk` / `@host/sdk/server` resolve to the framework's own
// copy, so an installed extension needs no node_modules of its own for them. The compiled module is
// kept under storage/host/modules/<sha256>.mjs and imported from there.

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

export const make = (options: ModuleLoaderOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const sdkFile = (specifier: string) =>
      pathToFileURL(path.join(options.sdkDirectory, specifier.endsWith("/server") ? "server.js" : "index.js")).href

    const compile = (file: string) =>
      Effect.tryPromise({
        try: async () => {
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
                build.onResolve({ filter: /^@host\/sdk(\/server)?$/ }, (args) => ({ path: sdkFile(args.path), external: true }))
              }
            }]
          })
          return result.outputFiles[0]!.text
        },
        catch: (error) => new ModuleLoadError({ file, detail: describe(error) })
      })

    const load = (file: string) =>
      Effect.gen(function*() {
        const code = yield* compile(file)
        const compiled = path.join(options.cacheDirectory, `${createHash("sha256").update(code).digest("hex")}.mjs`)
        yield* Effect.gen(function*() {
          if (yield* fs.exists(compiled)) return
          yield* writeFileAtomic(compiled, code).pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(Path.Path, path))
        }).pipe(Effect.mapError((error) => new ModuleLoadError({ file, detail: error.message })))
        return yield* Effect.tryPromise({
          try: () => importModule(pathToFileURL(compiled).href),
          catch: (error) => new ModuleLoadError({ file, detail: describe(error) })
        })
      }).pipe(Effect.withSpan("ModuleLoader.load", { attributes: { file } }))

    return { load }
  })

export const layer = (options: ModuleLoaderOptions): Layer.Layer<ModuleLoader, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(ModuleLoader, make(options))
