import { FileSystem, Path } from "@effect/platform"
import { Data, DateTime, Duration, Effect, Option, Schema } from "effect"
import { posix } from "node:path"
import { pathToFileURL } from "node:url"
import {
  type EventListener as ExtensionEventListener,
  extensionContextKey,
  hasEventListeners,
  hasFrontendSlots,
  hasMiddleware,
  hasRoutes,
  type HostEvent,
  type Middleware
} from "@host/sdk/server"
import { listFiles } from "../archive/Tree.js"
import { eventNameOf, eventNames, type LifecycleEvent } from "../domain/Events.js"
import { corruptReason, dependenciesOf, type InstalledExtension } from "../domain/Installed.js"
import {
  type ExtensionLayout,
  type Manifest,
  resolveEntrypoint,
  resolveLayout,
  type RouteGroup,
  routeGroups
} from "../domain/Manifest.js"
import { checkRequires, dependencyOrder, dependencyProblems, type RuntimeVersions } from "../domain/Rules.js"
import type { LoadedModule, ModuleLoader } from "../kernel/ModuleLoader.js"
import { callExtensionCode, describeThrown } from "./ExtensionCode.js"
import { type CompiledRoute, compileSegments, normalizeRoutePath, type RouteMethod, routeMethods } from "./Routes.js"
import { scanBundleSlots, type SlotEntry } from "./Slots.js"

// One runtime generation (docs/backend.md, docs/http.md "Runtime generations"): the enabled extensions loaded, registered and booted in
// dependency order, with their routes, middleware, listeners and slots. An extension that cannot take
// part is quarantined with a reason and skipped; the rest of the generation is unaffected.

export interface LoadedExtension {
  readonly id: string
  readonly record: InstalledExtension
  readonly manifest: Manifest
  readonly layout: ExtensionLayout
  readonly directory: string
  /** The entrypoint instance, if the extension has one. */
  readonly instance: unknown
  readonly routes: Readonly<Partial<Record<RouteGroup, ReadonlyArray<CompiledRoute>>>>
  /** HasMiddleware groups (`web`, `api`, …). */
  readonly middleware: Readonly<Record<string, ReadonlyArray<Middleware>>>
  readonly listeners: Readonly<Record<string, ReadonlyArray<ExtensionEventListener>>>
  readonly slots: ReadonlyArray<SlotEntry>
  /** Root-class CSS isolation: from the manifest, or `cssIsolation: true` in the bundle. */
  readonly cssIsolation: boolean
  readonly bundleSource: string | undefined
}

export interface Generation {
  readonly number: number
  readonly bootedAt: string
  /** Booted extensions in dependency order. */
  readonly extensions: ReadonlyMap<string, LoadedExtension>
  /** Enabled extensions that were skipped, with the reason. */
  readonly quarantined: ReadonlyMap<string, string>
  /**
   * Enabled extensions this replica cannot serve (their files could not be brought here, or a dependency's
   * could not), with the reason: not quarantined — other replicas serve them (docs/operations.md "Running replicas").
   */
  readonly unavailable: ReadonlyMap<string, string>
  readonly warnings: ReadonlyArray<string>
}

export interface BuildOptions {
  readonly number: number
  readonly installed: ReadonlyArray<InstalledExtension>
  readonly extensionsPath: string
  readonly versions: RuntimeVersions
  readonly loader: ModuleLoader["Type"]
  /** Loaded modules by `<file>|<installed updated_at>`, kept across generations so a swap recompiles only what changed. */
  readonly moduleCache: Map<string, LoadedModule>
  /** How long one register()/boot() may take. */
  readonly bootTimeout?: Duration.DurationInput
  /** Enabled extensions whose files this replica could not get, with the reason (skipped, with their dependents). */
  readonly unavailable?: ReadonlyMap<string, string>
}

class Quarantine extends Data.TaggedError("Quarantine")<{
  readonly reason: string
}> {}

const PackageJson = Schema.parseJson(Schema.Struct({
  host: Schema.optional(Schema.Struct({ entrypoint: Schema.optional(Schema.String) }))
}))

const CSS_ISOLATION_TRUE = /\bcssIsolation\s*:\s*(?:true|!0)\b/

interface Prepared {
  readonly record: InstalledExtension
  readonly manifest: Manifest
  readonly layout: ExtensionLayout
  readonly directory: string
  readonly files: ReadonlySet<string>
}

interface Staged extends Prepared {
  readonly instance: unknown
  readonly routes: Partial<Record<RouteGroup, ReadonlyArray<CompiledRoute>>>
  readonly middleware: Readonly<Record<string, ReadonlyArray<Middleware>>>
  readonly listeners: Readonly<Record<string, ReadonlyArray<ExtensionEventListener>>>
  readonly backendSlots: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

/** Extension code called while booting (runtime/ExtensionCode.ts): a failure quarantines the extension. */
const callExtension = (id: string, what: string, call: () => unknown, timeout: Duration.DurationInput) =>
  callExtensionCode(id, what, call, timeout).pipe(
    Effect.mapError((failed) => new Quarantine({ reason: `${what} failed: ${failed.detail}` }))
  )

const invoke = (instance: unknown, method: string): unknown => {
  const fn = (instance as Record<string, unknown>)[method]
  return typeof fn === "function" ? (fn as () => unknown).call(instance) : undefined
}

/** What every phase of one build shares: the options, the quarantine and warnings found so far, the module cache. */
interface Build {
  readonly options: BuildOptions
  readonly timeout: Duration.DurationInput
  readonly quarantined: Map<string, string>
  /** Enabled extensions this replica cannot serve, with their dependents (skipped, not quarantined). */
  readonly unavailable: ReadonlyMap<string, string>
  readonly warnings: Array<string>
  readonly load: (file: string, record: InstalledExtension) => Effect.Effect<LoadedModule, { readonly detail: string }>
}

/**
 * Builds one generation, phase by phase: files, dependency order, modules, code, register/boot,
 * frontend. Each phase quarantines what cannot go on and hands the rest to the next.
 */
export const buildGeneration = Effect.fn("Runtime.buildGeneration")(function*(options: BuildOptions) {
  const unavailable = new Map(options.unavailable ?? [])
  // What depends (through any chain) on an unavailable extension is unavailable here too.
  for (let grew = true; grew;) {
    grew = false
    for (const record of options.installed) {
      if (!record.enabled || unavailable.has(record.extensionId)) continue
      const missing = Object.keys(dependenciesOf(record)).find((dependency) => unavailable.has(dependency))
      if (missing !== undefined) {
        unavailable.set(record.extensionId, `its dependency ${missing} is unavailable on this replica`)
        grew = true
      }
    }
  }
  const build: Build = {
    options,
    timeout: options.bootTimeout ?? Duration.seconds(10),
    quarantined: new Map<string, string>(),
    unavailable,
    warnings: [],
    load: (file, record) => {
      const key = `${file}|${record.updatedAt}`
      const cached = options.moduleCache.get(key)
      if (cached !== undefined) return Effect.succeed(cached)
      return options.loader.load(file).pipe(
        Effect.tap((module) => Effect.sync(() => options.moduleCache.set(key, module)))
      )
    }
  }
  const candidates = yield* prepareFiles(build)
  const { dependencyFailure, order } = orderByDependencies(build, candidates)
  yield* preloadModules(build, candidates, order)
  const staged = yield* stageCode(build, candidates, order, dependencyFailure)
  yield* registerAndBoot(build, staged, order, dependencyFailure)
  const extensions = yield* attachFrontend(staged, order)
  return {
    number: options.number,
    bootedAt: DateTime.formatIso(yield* DateTime.now),
    extensions,
    quarantined: build.quarantined,
    unavailable,
    warnings: build.warnings
  } satisfies Generation
})

/**
 * 1. Files: the manifest as installed (validated then; the database is the source of truth) and the
 * files it needs still in place under the id it was installed as.
 */
const prepareFiles = (build: Build) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { options, quarantined } = build
    const enabled = options.installed.filter((extension) => extension.enabled && !build.unavailable.has(extension.extensionId))
    const prepared = yield* Effect.forEach(enabled, (record) =>
      Effect.gen(function*() {
        const directory = path.join(options.extensionsPath, ...record.extensionId.split("/"))
        const listed = yield* listFiles(directory).pipe(
          Effect.mapError(() => new Quarantine({ reason: `files missing: ${directory} cannot be read` }))
        )
        const files = new Set(listed)
        if (!files.has("extension.yaml")) return yield* new Quarantine({ reason: "files missing: extension.yaml" })
        if (record.manifest._tag === "Corrupt") return yield* new Quarantine({ reason: corruptReason(record)! })
        const manifest = record.manifest.manifest
        if (manifest.id !== record.extensionId) {
          return yield* new Quarantine({ reason: `id mismatch: the manifest says ${manifest.id}` })
        }
        const directories = new Set(listed.flatMap((file) => {
          const parts = file.split("/")
          return parts.slice(1).map((_, index) => parts.slice(0, index + 1).join("/"))
        }))
        const layout = resolveLayout(
          manifest.document,
          (file) => files.has(posix.normalize(file)),
          (folder) => directories.has(posix.normalize(folder).replace(/\/$/, ""))
        )
        for (const [group, file] of Object.entries(layout.routes)) {
          if (!files.has(posix.normalize(file))) return yield* new Quarantine({ reason: `files missing: ${group} route file ${file}` })
        }
        const requires = checkRequires(manifest.document, options.versions)
        if (requires.unmet.length > 0) return yield* new Quarantine({ reason: requires.unmet.join("; ") })
        return Option.some<Prepared>({ record, manifest, layout, directory, files })
      }).pipe(
        Effect.catchTag("Quarantine", (error) =>
          Effect.sync(() => {
            quarantined.set(record.extensionId, error.reason)
            return Option.none<Prepared>()
          })
        )
      ), { concurrency: 16 })
    return new Map(prepared.flatMap((entry) => Option.isSome(entry) ? [[entry.value.record.extensionId, entry.value] as const] : []))
  })

/** 2. Dependencies: in range and bootable, no cycles; the order is the boot order. */
const orderByDependencies = (build: Build, candidates: ReadonlyMap<string, Prepared>) => {
  const dependenciesOf = (id: string) => Object.keys(candidates.get(id)?.manifest.document.dependencies ?? {})
  const { cycle, order } = dependencyOrder([...candidates.keys()].sort(), dependenciesOf)
  for (const id of cycle) build.quarantined.set(id, `dependency cycle: ${cycle.join(" → ")}`)
  const installedById = new Map(build.options.installed.map((record) => [record.extensionId, record]))
  /** Why `id` cannot boot now because of its dependencies (checked again as dependencies drop out). */
  const dependencyFailure = (id: string): string | undefined => {
    const problems = dependencyProblems(candidates.get(id)!.manifest.document, installedById, build.quarantined)
    return problems.length === 0 ? undefined : problems.join("; ")
  }
  return { order, dependencyFailure }
}

/**
 * Compiles and imports every module up front, concurrently (esbuild runs them in parallel); the phases
 * below then take them from the cache, and a module that fails is loaded again there to report it.
 */
const preloadModules = (build: Build, candidates: ReadonlyMap<string, Prepared>, order: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    yield* Effect.forEach(order, (id) => {
      const entry = candidates.get(id)!
      const entrypoint = resolveEntrypoint(entry.manifest.document, (file) => entry.files.has(file), undefined)
      const files = [
        ...(entrypoint._tag === "Class" ? [entrypoint.module] : []),
        ...Object.values(entry.layout.routes).filter((file): file is string => file !== undefined)
      ]
      return Effect.forEach(files, (file) => Effect.ignore(build.load(path.join(entry.directory, file), entry.record)), { discard: true })
    }, { concurrency: 16, discard: true })
  })

/** 3. Code: entrypoint instance, route files, middleware, listeners (in dependency order). */
const stageCode = (
  build: Build,
  candidates: ReadonlyMap<string, Prepared>,
  order: ReadonlyArray<string>,
  dependencyFailure: (id: string) => string | undefined
) =>
  Effect.gen(function*() {
    const staged = new Map<string, Staged>()
    for (const id of order) {
      const failure = dependencyFailure(id)
      if (failure !== undefined) {
        build.quarantined.set(id, failure)
        continue
      }
      const outcome = yield* Effect.either(stageOne(build, id, candidates.get(id)!))
      if (outcome._tag === "Left") build.quarantined.set(id, outcome.left.reason)
      else staged.set(id, outcome.right)
    }
    return staged
  })

/** One extension's code: its entrypoint instance, route files, middleware, listeners and backend slots. */
const stageOne = (build: Build, id: string, entry: Prepared) =>
  Effect.gen(function*() {
    const instance = yield* makeInstance(build, id, entry)
    const routes = yield* compileRoutes(build, entry, yield* routeFilesOf(build, id, entry, instance))
    const middleware = hasMiddleware(instance)
      ? yield* callExtension(id, "getMiddleware()", () => instance.getMiddleware(), build.timeout).pipe(
        Effect.map((value) => functionLists<Middleware>(value))
      )
      : {}
    const listeners = yield* listenersOf(build, id, instance)
    const backendSlots = yield* backendSlotsOf(build, id, instance)
    return { ...entry, instance, routes, middleware, listeners, backendSlots } satisfies Staged
  })

/** The entrypoint `package.json` names under `host.entrypoint`, if it has one that reads. */
const packageEntrypoint = ({ directory, files }: Prepared) =>
  Effect.gen(function*() {
    if (!files.has("package.json")) return undefined
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return yield* fs.readFileString(path.join(directory, "package.json")).pipe(
      Effect.flatMap(Schema.decodeUnknown(PackageJson)),
      Effect.map((pkg) => pkg.host?.entrypoint),
      Effect.orElseSucceed(() => undefined)
    )
  })

/**
 * The entrypoint instance (undefined when the extension has none): loaded, constructed with its
 * context, checked to implement ExtensionInterface and to report the manifest's id.
 */
const makeInstance = (build: Build, id: string, entry: Prepared) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const { directory, files, manifest, record } = entry
    const entrypoint = resolveEntrypoint(manifest.document, (file) => files.has(file), yield* packageEntrypoint(entry))
    if (entrypoint._tag === "Missing") {
      return yield* new Quarantine({ reason: `entrypoint class ${entrypoint.className} not found (${entrypoint.candidates.join(", ")})` })
    }
    if (entrypoint._tag === "None") return undefined
    const file = path.join(directory, entrypoint.module)
    const module = yield* build.load(file, record).pipe(
      Effect.mapError((error) => new Quarantine({ reason: `entrypoint ${entrypoint.module} failed to load: ${error.detail}` }))
    )
    const exportName = entrypoint._tag === "Class" ? entrypoint.exportName : undefined
    const exported = (exportName !== undefined ? module[exportName] : undefined) ?? module.default
    if (exported === undefined) {
      return yield* new Quarantine({ reason: `entrypoint ${entrypoint.module} exports no ${exportName ?? "default"} class` })
    }
    const instance: unknown = yield* Effect.try({
      try: () => {
        const context = { basePath: directory, modulePath: pathToFileURL(file).href }
        const made = typeof exported === "function" ? new (exported as new(context: unknown) => unknown)(context) : exported
        // HostExtension takes the context here too, should a subclass constructor not pass it on.
        const handOver = (made as Record<symbol, unknown> | null)?.[extensionContextKey]
        if (typeof handOver === "function") handOver.call(made, context)
        return made
      },
      catch: (error) => new Quarantine({ reason: `constructing the entrypoint failed: ${describeThrown(error)}` })
    })
    const missing = ["getId", "register", "boot"].filter((method) =>
      typeof (instance as Record<string, unknown>)[method] !== "function"
    )
    if (missing.length > 0) {
      return yield* new Quarantine({ reason: `entrypoint does not implement ExtensionInterface (missing ${missing.join(", ")})` })
    }
    const reported = yield* callExtension(id, "getId()", () => invoke(instance, "getId"), build.timeout)
    if (reported !== manifest.id) {
      return yield* new Quarantine({ reason: `id mismatch: getId() returns "${String(reported)}", the manifest id is "${manifest.id}"` })
    }
    return instance
  })

/** Route files: the layout's (declared or conventional) plus those HasRoutes adds. */
const routeFilesOf = (build: Build, id: string, entry: Prepared, instance: unknown) =>
  Effect.gen(function*() {
    const routeFiles: Array<readonly [RouteGroup, string]> = routeGroups.flatMap((group) => {
      const file = entry.layout.routes[group]
      return file === undefined ? [] : [[group, file] as const]
    })
    if (!hasRoutes(instance)) return routeFiles
    const extra = yield* callExtension(id, "getRouteFiles()", () => instance.getRouteFiles(), build.timeout)
    for (const [group, file] of Object.entries((extra ?? {}) as Record<string, unknown>)) {
      if (!(routeGroups as ReadonlyArray<string>).includes(group) || typeof file !== "string") {
        return yield* new Quarantine({ reason: `getRouteFiles() returns an unknown route group "${group}"` })
      }
      if (!routeFiles.some(([g, f]) => g === group && f === file)) routeFiles.push([group as RouteGroup, file])
    }
    return routeFiles
  })

/** Loads each route file, in order, and gathers its routes by group. */
const compileRoutes = (build: Build, entry: Prepared, routeFiles: ReadonlyArray<readonly [RouteGroup, string]>) =>
  Effect.gen(function*() {
    const routes: Partial<Record<RouteGroup, Array<CompiledRoute>>> = {}
    for (const [group, file] of routeFiles) {
      const compiled = yield* loadRouteFile(group, file, entry, build.load)
      routes[group] = [...(routes[group] ?? []), ...compiled]
    }
    return routes
  })

/** HasEventListeners' listeners by event name; a key that names no event is a warning, not a failure. */
const listenersOf = (build: Build, id: string, instance: unknown) =>
  Effect.gen(function*() {
    const declared = hasEventListeners(instance)
      ? yield* callExtension(id, "getEventListeners()", () => instance.getEventListeners(), build.timeout).pipe(
        Effect.map((value) => functionLists<ExtensionEventListener>(value))
      )
      : {}
    const listeners: Record<string, ReadonlyArray<ExtensionEventListener>> = {}
    for (const [key, handlers] of Object.entries(declared)) {
      const name = eventNameOf(key)
      if (name === undefined) build.warnings.push(`${id}: getEventListeners() names ${JSON.stringify(key)}, which is no event (known: ${eventNames.join(", ")})`)
      else listeners[name] = [...(listeners[name] ?? []), ...handlers]
    }
    return listeners
  })

/** Slots the deprecated HasFrontendSlots declares on the backend (with a warning saying so). */
const backendSlotsOf = (build: Build, id: string, instance: unknown) =>
  Effect.gen(function*() {
    if (!hasFrontendSlots(instance)) return {}
    build.warnings.push(`${id}: HasFrontendSlots is deprecated; register slots with createExtension({ slots }) in the bundle`)
    const value = yield* callExtension(id, "getFrontendSlots()", () => instance.getFrontendSlots(), build.timeout)
    return typeof value === "object" && value !== null ? value as Record<string, Record<string, unknown>> : {}
  })

/** 4. register() all, then boot() all, in dependency order. */
const registerAndBoot = (
  build: Build,
  staged: Map<string, Staged>,
  order: ReadonlyArray<string>,
  dependencyFailure: (id: string) => string | undefined
) =>
  Effect.gen(function*() {
    for (const phase of ["register", "boot"] as const) {
      for (const id of order) {
        const entry = staged.get(id)
        if (entry === undefined) continue
        const failure = dependencyFailure(id)
        if (failure !== undefined) {
          build.quarantined.set(id, failure)
          staged.delete(id)
          continue
        }
        if (entry.instance === undefined) continue
        const result = yield* callExtension(id, `${phase}()`, () => invoke(entry.instance, phase), build.timeout).pipe(Effect.either)
        if (result._tag === "Left") {
          build.quarantined.set(id, result.left.reason)
          staged.delete(id)
        }
      }
    }
  })

/** 5. Frontend: bundle and styles, slots (manifest frontend.slots, HasFrontendSlots, bundle scan). */
const attachFrontend = (staged: ReadonlyMap<string, Staged>, order: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const extensions = new Map<string, LoadedExtension>()
    for (const id of order) {
      const entry = staged.get(id)
      if (entry === undefined) continue
      const bundleSource = entry.layout.bundle !== undefined
        ? yield* fs.readFileString(path.join(entry.directory, entry.layout.bundle)).pipe(Effect.orElseSucceed(() => undefined))
        : undefined
      const slots = [
        ...manifestSlots(id, entry.manifest.document.frontend?.slots),
        ...Object.entries(entry.backendSlots).map(([slot, metadata]): SlotEntry => ({
          slot,
          extensionId: id,
          order: typeof metadata.order === "number" ? metadata.order : 0,
          source: "backend",
          metadata
        })),
        ...(bundleSource === undefined ? [] : scanBundleSlots(id, bundleSource))
      ]
      extensions.set(id, {
        id,
        record: entry.record,
        manifest: entry.manifest,
        layout: entry.layout,
        directory: entry.directory,
        instance: entry.instance,
        routes: entry.routes,
        middleware: entry.middleware,
        listeners: entry.listeners,
        slots,
        cssIsolation: entry.manifest.document.frontend?.css_isolation !== undefined ||
          (bundleSource !== undefined && CSS_ISOLATION_TRUE.test(bundleSource)),
        bundleSource
      })
    }
    return extensions
  })

const functionLists = <F>(value: unknown): Record<string, ReadonlyArray<F>> => {
  if (typeof value !== "object" || value === null) return {}
  const result: Record<string, ReadonlyArray<F>> = {}
  for (const [key, list] of Object.entries(value)) {
    const items = Array.isArray(list) ? list : [list]
    result[key] = items.filter((item): item is F => typeof item === "function")
  }
  return result
}

/** Deprecated `frontend.slots`: a list of ids or `{slot, order, …}`, or a map of id → metadata. */
const manifestSlots = (id: string, slots: unknown): ReadonlyArray<SlotEntry> => {
  if (slots === undefined || slots === null) return []
  const entry = (slot: string, metadata: Record<string, unknown>): SlotEntry => ({
    metadata,
    slot,
    extensionId: id,
    order: typeof metadata.order === "number" ? metadata.order : 0,
    source: "manifest"
  })
  if (Array.isArray(slots)) {
    return slots.flatMap((item: unknown) => {
      if (typeof item === "string") return [entry(item, {})]
      if (typeof item === "object" && item !== null && "slot" in item && typeof item.slot === "string") {
        return [entry(item.slot, item as Record<string, unknown>)]
      }
      return []
    })
  }
  if (typeof slots === "object") {
    return Object.entries(slots as Record<string, unknown>).map(([slot, metadata]) =>
      entry(slot, typeof metadata === "object" && metadata !== null ? metadata as Record<string, unknown> : {})
    )
  }
  return []
}

const RouteShape = Schema.Struct({
  method: Schema.Literal(...routeMethods),
  path: Schema.String,
  handler: Schema.declare((value: unknown): value is (context: never) => unknown => typeof value === "function"),
  options: Schema.optional(Schema.Struct({ permission: Schema.optional(Schema.String) }))
})
const RouteFileShape = Schema.Struct({ routes: Schema.Array(RouteShape) })
const decodeRouteFile = Schema.decodeUnknownEither(RouteFileShape)

const loadRouteFile = (
  group: RouteGroup,
  file: string,
  entry: Prepared,
  load: (file: string, record: InstalledExtension) => Effect.Effect<LoadedModule, { readonly detail: string }>
) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const absolute = path.resolve(entry.directory, file)
    if (!absolute.startsWith(entry.directory + path.sep)) {
      return yield* new Quarantine({ reason: `route file ${file} is outside the extension` })
    }
    const module = yield* load(absolute, entry.record).pipe(
      Effect.mapError((error) => new Quarantine({ reason: `route file ${file} failed to load: ${error.detail}` }))
    )
    const decoded = decodeRouteFile(module.default ?? module.routes)
    if (decoded._tag === "Left") {
      return yield* new Quarantine({ reason: `route file ${file} does not default-export defineRoutes(…)` })
    }
    const declared = new Set(entry.manifest.permissions)
    const compiled: Array<CompiledRoute> = []
    for (const route of decoded.right.routes) {
      const permission = route.options?.permission
      const routePath = normalizeRoutePath(route.path)
      if (permission !== undefined && !declared.has(permission)) {
        return yield* new Quarantine({
          reason: `route ${route.method} ${routePath} in ${file} requires permission "${permission}", which backend.permissions does not declare`
        })
      }
      const segments = compileSegments(routePath)
      compiled.push({
        group,
        method: route.method as RouteMethod,
        path: routePath,
        segments,
        permission,
        usesServer: segments.some((segment) => segment._tag === "Param" && segment.name === "server"),
        handler: route.handler,
        file
      })
    }
    return compiled
  })

/** The SDK's view of a framework event (`{name, …fields}`), for extension listeners. */
export const toHostEvent = (event: LifecycleEvent): HostEvent => {
  switch (event._tag) {
    case "ExtensionInstalled":
      return { name: event._tag, extensionId: event.extensionId, version: event.version }
    case "ExtensionUpdated":
      return { name: event._tag, extensionId: event.extensionId, fromVersion: event.fromVersion, toVersion: event.toVersion }
    case "ExtensionEnabled":
    case "ExtensionDisabled":
    case "ExtensionRemoved":
      return { name: event._tag, extensionId: event.extensionId }
  }
}
