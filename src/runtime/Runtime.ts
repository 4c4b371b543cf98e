import { FileSystem, Path } from "@effect/platform"
import { Data, Duration, Effect, Option, Schema } from "effect"
import { posix } from "node:path"
import { pathToFileURL } from "node:url"
import semver from "semver"
import {
  type EventListener as ExtensionEventListener,
  extensionContextKey,
  hasEventListeners,
  hasFrontendSlots,
  hasMiddleware,
  hasRoutes,
  type HostEvent,
  type Middleware
} from "../../sdk/src/server.js"
import { listFiles } from "../archive/Tree.js"
import { eventNameOf, eventNames, type LifecycleEvent } from "../domain/Events.js"
import type { InstalledExtension } from "../domain/Installed.js"
import {
  decodeManifest,
  type ExtensionLayout,
  type Manifest,
  resolveEntrypoint,
  resolveLayout,
  type RouteGroup,
  routeGroups
} from "../domain/Manifest.js"
import { checkRequires, dependencyOrder, type RuntimeVersions } from "../domain/Rules.js"
import type { LoadedModule, ModuleLoader } from "../lifecycle/ModuleLoader.js"
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
  readonly warnings: ReadonlyArray<string>
}

export interface BuildOptions {
  readonly number: number
  readonly installed: ReadonlyArray<InstalledExtension>
  readonly extensionsPath: string
  readonly frameworkVersion: string
  readonly versions: RuntimeVersions
  readonly loader: ModuleLoader["Type"]
  /** Loaded modules by `<file>|<installed updated_at>`, kept across generations so a swap recompiles only what changed. */
  readonly moduleCache: Map<string, LoadedModule>
  /** How long one register()/boot() may take. */
  readonly bootTimeout?: Duration.DurationInput
}

class Quarantine extends Data.TaggedError("Quarantine")<{
  readonly reason: string
}> {}

const describe = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message
  return String(error)
}

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

/** Calls a method of extension code: sync throws, rejected promises and timeouts become Quarantine. */
const callExtension = (what: string, call: () => unknown, timeout: Duration.DurationInput) =>
  Effect.tryPromise({
    try: async () => await call(),
    catch: (error) => new Quarantine({ reason: `${what} failed: ${describe(error)}` })
  }).pipe(
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new Quarantine({ reason: `${what} timed out` }) })
  )

const invoke = (instance: unknown, method: string): unknown => {
  const fn = (instance as Record<string, unknown>)[method]
  return typeof fn === "function" ? (fn as () => unknown).call(instance) : undefined
}

export const buildGeneration = Effect.fn("Runtime.buildGeneration")(function*(options: BuildOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const timeout = options.bootTimeout ?? Duration.seconds(10)
  const quarantined = new Map<string, string>()
  const warnings: Array<string> = []
  const enabled = options.installed.filter((extension) => extension.enabled)

  const load = (file: string, record: InstalledExtension) => {
    const key = `${file}|${record.updatedAt}`
    const cached = options.moduleCache.get(key)
    if (cached !== undefined) return Effect.succeed(cached)
    return options.loader.load(file).pipe(
      Effect.tap((module) => Effect.sync(() => options.moduleCache.set(key, module)))
    )
  }

  // 1. Files: the manifest as installed (validated then; the database is the source of truth) and the
  // files it needs still in place under the id it was installed as.
  const prepared = yield* Effect.forEach(enabled, (record) =>
    Effect.gen(function*() {
      const directory = path.join(options.extensionsPath, ...record.extensionId.split("/"))
      const listed = yield* listFiles(directory).pipe(
        Effect.mapError(() => new Quarantine({ reason: `files missing: ${directory} cannot be read` }))
      )
      const files = new Set(listed)
      if (!files.has("extension.yaml")) return yield* new Quarantine({ reason: "files missing: extension.yaml" })
      const decoded = decodeManifest(record.manifest, options.frameworkVersion)
      if (decoded.manifest === undefined) {
        const first = decoded.errors[0]
        return yield* new Quarantine({
          reason: `the installed manifest is invalid: ${first === undefined ? "unknown problem" : `${first.path}: ${first.message}`}`
        })
      }
      const manifest = decoded.manifest
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
  const candidates = new Map(prepared.flatMap((entry) => Option.isSome(entry) ? [[entry.value.record.extensionId, entry.value] as const] : []))

  // 2. Dependencies: in range and bootable, no cycles; the order is the boot order.
  const dependenciesOf = (id: string) => Object.keys(candidates.get(id)?.manifest.document.dependencies ?? {})
  const { cycle, order } = dependencyOrder([...candidates.keys()].sort(), dependenciesOf)
  for (const id of cycle) quarantined.set(id, `dependency cycle: ${cycle.join(" → ")}`)
  const installedById = new Map(options.installed.map((record) => [record.extensionId, record]))
  const dependencyFailure = (id: string): string | undefined => {
    for (const [dependency, range] of Object.entries(candidates.get(id)?.manifest.document.dependencies ?? {})) {
      const record = installedById.get(dependency)
      if (record === undefined) return `dependency ${dependency} (${range}) is not installed`
      if (!record.enabled) return `dependency ${dependency} is disabled`
      if (!semver.satisfies(record.version, range, { includePrerelease: true })) {
        return `dependency ${dependency} is at ${record.version}, which does not satisfy ${range}`
      }
      if (quarantined.has(dependency)) return `dependency ${dependency} is quarantined`
    }
    return undefined
  }

  // Compile and import every module up front, concurrently (esbuild runs them in parallel); the steps
  // below then take them from the cache, and a module that fails is loaded again there to report it.
  yield* Effect.forEach(order, (id) => {
    const entry = candidates.get(id)!
    const entrypoint = resolveEntrypoint(entry.manifest.document, (file) => entry.files.has(file), undefined)
    const files = [
      ...(entrypoint._tag === "Class" ? [entrypoint.module] : []),
      ...Object.values(entry.layout.routes).filter((file): file is string => file !== undefined)
    ]
    return Effect.forEach(files, (file) => Effect.ignore(load(path.join(entry.directory, file), entry.record)), { discard: true })
  }, { concurrency: 16, discard: true })

  // 3. Code: entrypoint instance, route files, middleware, listeners (in dependency order).
  const staged = new Map<string, Staged>()
  for (const id of order) {
    const entry = candidates.get(id)!
    const failure = dependencyFailure(id)
    if (failure !== undefined) {
      quarantined.set(id, failure)
      continue
    }
    const outcome = yield* Effect.gen(function*() {
      const { directory, files, manifest, record } = entry
      const packageEntrypoint = files.has("package.json")
        ? yield* fs.readFileString(path.join(directory, "package.json")).pipe(
          Effect.flatMap(Schema.decodeUnknown(PackageJson)),
          Effect.map((pkg) => pkg.host?.entrypoint),
          Effect.orElseSucceed(() => undefined)
        )
        : undefined
      const entrypoint = resolveEntrypoint(manifest.document, (file) => files.has(file), packageEntrypoint)
      let instance: unknown = undefined
      if (entrypoint._tag === "Missing") {
        return yield* new Quarantine({ reason: `entrypoint class ${entrypoint.className} not found (${entrypoint.candidates.join(", ")})` })
      }
      if (entrypoint._tag !== "None") {
        const file = path.join(directory, entrypoint.module)
        const module = yield* load(file, record).pipe(
          Effect.mapError((error) => new Quarantine({ reason: `entrypoint ${entrypoint.module} failed to load: ${error.detail}` }))
        )
        const exportName = entrypoint._tag === "Class" ? entrypoint.exportName : undefined
        const exported = (exportName !== undefined ? module[exportName] : undefined) ?? module.default
        if (exported === undefined) {
          return yield* new Quarantine({ reason: `entrypoint ${entrypoint.module} exports no ${exportName ?? "default"} class` })
        }
        instance = yield* Effect.try({
          try: () => {
            const context = { basePath: directory, modulePath: pathToFileURL(file).href }
            const made = typeof exported === "function" ? new (exported as new(context: unknown) => unknown)(context) : exported
            // HostExtension takes the context here too, should a subclass constructor not pass it on.
            const handOver = (made as Record<symbol, unknown> | null)?.[extensionContextKey]
            if (typeof handOver === "function") handOver.call(made, context)
            return made
          },
          catch: (error) => new Quarantine({ reason: `constructing the entrypoint failed: ${describe(error)}` })
        })
        const missing = ["getId", "register", "boot"].filter((method) =>
          typeof (instance as Record<string, unknown>)[method] !== "function"
        )
        if (missing.length > 0) {
          return yield* new Quarantine({ reason: `entrypoint does not implement ExtensionInterface (missing ${missing.join(", ")})` })
        }
        const reported = yield* callExtension("getId()", () => invoke(instance, "getId"), timeout)
        if (reported !== manifest.id) {
          return yield* new Quarantine({ reason: `id mismatch: getId() returns "${String(reported)}", the manifest id is "${manifest.id}"` })
        }
      }
      // Route files: the layout's (declared or conventional) plus HasRoutes.
      const routeFiles: Array<readonly [RouteGroup, string]> = routeGroups.flatMap((group) => {
        const file = entry.layout.routes[group]
        return file === undefined ? [] : [[group, file] as const]
      })
      if (hasRoutes(instance)) {
        const extra = yield* callExtension("getRouteFiles()", () => instance.getRouteFiles(), timeout)
        for (const [group, file] of Object.entries((extra ?? {}) as Record<string, unknown>)) {
          if (!(routeGroups as ReadonlyArray<string>).includes(group) || typeof file !== "string") {
            return yield* new Quarantine({ reason: `getRouteFiles() returns an unknown route group "${group}"` })
          }
          if (!routeFiles.some(([g, f]) => g === group && f === file)) routeFiles.push([group as RouteGroup, file])
        }
      }
      const routes: Partial<Record<RouteGroup, Array<CompiledRoute>>> = {}
      for (const [group, file] of routeFiles) {
        const compiled = yield* loadRouteFile(group, file, entry, load)
        routes[group] = [...(routes[group] ?? []), ...compiled]
      }
      const middleware = hasMiddleware(instance)
        ? yield* callExtension("getMiddleware()", () => instance.getMiddleware(), timeout).pipe(
          Effect.map((value) => functionLists<Middleware>(value))
        )
        : {}
      const declaredListeners = hasEventListeners(instance)
        ? yield* callExtension("getEventListeners()", () => instance.getEventListeners(), timeout).pipe(
          Effect.map((value) => functionLists<ExtensionEventListener>(value))
        )
        : {}
      const listeners: Record<string, ReadonlyArray<ExtensionEventListener>> = {}
      for (const [key, handlers] of Object.entries(declaredListeners)) {
        const name = eventNameOf(key)
        if (name === undefined) warnings.push(`${id}: getEventListeners() names ${JSON.stringify(key)}, which is no event (known: ${eventNames.join(", ")})`)
        else listeners[name] = [...(listeners[name] ?? []), ...handlers]
      }
      let backendSlots: Record<string, Record<string, unknown>> = {}
      if (hasFrontendSlots(instance)) {
        warnings.push(`${id}: HasFrontendSlots is deprecated; register slots with createExtension({ slots }) in the bundle`)
        const value = yield* callExtension("getFrontendSlots()", () => instance.getFrontendSlots(), timeout)
        backendSlots = typeof value === "object" && value !== null ? value as Record<string, Record<string, unknown>> : {}
      }
      return { ...entry, instance, routes, middleware, listeners, backendSlots } satisfies Staged
    }).pipe(Effect.either)
    if (outcome._tag === "Left") quarantined.set(id, outcome.left.reason)
    else staged.set(id, outcome.right)
  }

  // 4. register() all, then boot() all, in dependency order.
  for (const phase of ["register", "boot"] as const) {
    for (const id of order) {
      const entry = staged.get(id)
      if (entry === undefined) continue
      const failure = dependencyFailure(id)
      if (failure !== undefined) {
        quarantined.set(id, failure)
        staged.delete(id)
        continue
      }
      if (entry.instance === undefined) continue
      const result = yield* callExtension(`${phase}()`, () => invoke(entry.instance, phase), timeout).pipe(Effect.either)
      if (result._tag === "Left") {
        quarantined.set(id, result.left.reason)
        staged.delete(id)
      }
    }
  }

  // 5. Frontend: bundle and styles, slots (manifest frontend.slots, HasFrontendSlots, bundle scan).
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

  return {
    number: options.number,
    bootedAt: new Date().toISOString(),
    extensions,
    quarantined,
    warnings
  } satisfies Generation
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
