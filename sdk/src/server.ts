// @host/sdk/server: the backend contracts of Host extensions (docs/backend.md in the Host repository) as
// TypeScript interfaces, the HostExtension base class, and route definitions. Contracts are detected
// structurally (the method is present), never with instanceof.
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parse } from "yaml"

export type RouteGroup = "api-client" | "admin" | "web"

type Awaitable<A> = A | Promise<A>

export interface ExtensionInterface {
  getId(): string
  getName(): string
  getVersion(): string
  register(): Awaitable<void>
  boot(): Awaitable<void>
  getBasePath(): string
}

export interface HasRoutes {
  /** Group → route file, relative to the extension base directory. */
  getRouteFiles(): Partial<Record<RouteGroup, string>>
}

export interface HasMigrations {
  getMigrationsPath(): string
}

export interface CommandDefinition {
  /** `vendor:thing`; run as `host vendor:thing …`. */
  readonly name: string
  readonly description?: string
  run(args: ReadonlyArray<string>): Awaitable<void | number>
}

export interface HasCommands {
  getCommands(): ReadonlyArray<CommandDefinition>
}

export type HealthStatus = "ok" | "warning" | "error" | "unknown"

export interface HealthResult {
  readonly id: string
  /** `ok`, `warning`, `error`, `unknown`; common synonyms (`pass`, `fail`, …) are normalised. */
  readonly status: HealthStatus | string
  readonly message?: string
  readonly details?: unknown
}

export interface HasHealthChecks {
  getHealthChecks(): Awaitable<ReadonlyArray<HealthResult>>
}

export interface MiddlewareContext {
  readonly request: Request
  readonly extensionId: string
}

/** Returns nothing to continue, or a Response to answer the request itself. */
export type Middleware = (context: MiddlewareContext) => Awaitable<Response | void>

export interface HasMiddleware {
  /** Middleware group (`web`, `api`, …) → middleware. */
  getMiddleware(): Readonly<Record<string, ReadonlyArray<Middleware>>>
}

export type EventListener = (event: HostEvent) => Awaitable<void>

export interface HasEventListeners {
  /** Event name (`ExtensionInstalled`, `ServerCreated`, …) → listeners. */
  getEventListeners(): Readonly<Record<string, ReadonlyArray<EventListener>>>
}

export interface HasBladeViews {
  getViewsPath(): string
  getViewNamespace(): string
}

/** @deprecated Register slots with createExtension({ slots }) in the frontend bundle. */
export interface HasFrontendSlots {
  getFrontendSlots(): Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

export type HostEvent =
  | { readonly name: "ExtensionInstalled"; readonly extensionId: string; readonly version: string }
  | { readonly name: "ExtensionUpdated"; readonly extensionId: string; readonly fromVersion: string; readonly toVersion: string }
  | { readonly name: "ExtensionEnabled"; readonly extensionId: string }
  | { readonly name: "ExtensionDisabled"; readonly extensionId: string }
  | { readonly name: "ExtensionRemoved"; readonly extensionId: string }
  | { readonly name: "ServerCreated"; readonly server: { readonly uuid: string; readonly name: string } }
  | { readonly name: "ServerDeleted"; readonly server: { readonly uuid: string; readonly name: string } }

const hasMethod = (value: unknown, method: string): boolean =>
  typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"

export const hasRoutes = (value: unknown): value is HasRoutes => hasMethod(value, "getRouteFiles")
export const hasMigrations = (value: unknown): value is HasMigrations => hasMethod(value, "getMigrationsPath")
export const hasCommands = (value: unknown): value is HasCommands => hasMethod(value, "getCommands")
export const hasHealthChecks = (value: unknown): value is HasHealthChecks => hasMethod(value, "getHealthChecks")
export const hasMiddleware = (value: unknown): value is HasMiddleware => hasMethod(value, "getMiddleware")
export const hasEventListeners = (value: unknown): value is HasEventListeners => hasMethod(value, "getEventListeners")
export const hasBladeViews = (value: unknown): value is HasBladeViews =>
  hasMethod(value, "getViewsPath") && hasMethod(value, "getViewNamespace")
export const hasFrontendSlots = (value: unknown): value is HasFrontendSlots => hasMethod(value, "getFrontendSlots")
export const isExtension = (value: unknown): value is ExtensionInterface =>
  ["getId", "getName", "getVersion", "register", "boot", "getBasePath"].every((method) => hasMethod(value, method))

/** What the runtime passes to an entrypoint's constructor. */
export interface ExtensionContext {
  /** The extension root (where extension.yaml is). */
  readonly basePath?: string
  /** The entrypoint module's file path or file: URL; the base path is found by walking up from it. */
  readonly modulePath?: string
}

interface ManifestIdentity {
  readonly id: string
  readonly name: string
  readonly version: string
}

/** Walks up from `start` to the nearest folder holding extension.yaml. */
export const findExtensionRoot = (start: string): string | undefined => {
  let directory = resolve(start)
  for (;;) {
    if (existsSync(join(directory, "extension.yaml"))) return directory
    const parent = dirname(directory)
    if (parent === directory) return undefined
    directory = parent
  }
}

/**
 * The runtime also hands the construction context through this method after `new`, so a subclass whose
 * constructor calls `super()` without it still finds its own folder (never the current directory's).
 */
export const extensionContextKey: unique symbol = Symbol.for("host.extensionContext") as never

/**
 * Recommended base class: id, name and version come from the manifest; the base path is found by
 * walking up to extension.yaml; register and boot do nothing by default.
 */
export abstract class HostExtension implements ExtensionInterface {
  #context: ExtensionContext
  #basePath: string | undefined
  #manifest: ManifestIdentity | undefined

  constructor(context: ExtensionContext = {}) {
    this.#context = context
  }

  [extensionContextKey](context: ExtensionContext): void {
    if (this.#context.basePath === undefined && this.#context.modulePath === undefined) this.#context = context
  }

  getBasePath(): string {
    if (this.#basePath !== undefined) return this.#basePath
    const module = this.#context.modulePath
    const start = this.#context.basePath ??
      (module === undefined ? undefined : dirname(module.startsWith("file:") ? fileURLToPath(module) : module))
    if (start === undefined) {
      throw new Error("HostExtension: no base path; pass the constructor's context on: constructor(context) { super(context) }")
    }
    const found = findExtensionRoot(start)
    if (found === undefined) throw new Error(`HostExtension: no extension.yaml found above ${start}`)
    this.#basePath = found
    return found
  }

  #readManifest(): ManifestIdentity {
    if (this.#manifest !== undefined) return this.#manifest
    const document = parse(readFileSync(join(this.getBasePath(), "extension.yaml"), "utf8")) as Partial<Record<string, unknown>>
    this.#manifest = { id: String(document.id), name: String(document.name), version: String(document.version) }
    return this.#manifest
  }

  getId(): string {
    return this.#readManifest().id
  }

  getName(): string {
    return this.#readManifest().name
  }

  getVersion(): string {
    return this.#readManifest().version
  }

  register(): Awaitable<void> {}

  boot(): Awaitable<void> {}
}

// ---- Route files ---------------------------------------------------------------------------------

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface RouteUser {
  /** A number on the embedded panel and Pterodactyl; the user's uuid on Pelican. */
  readonly id: number | string
  readonly username: string
  readonly email: string
  readonly admin: boolean
}

export interface RouteServer {
  readonly uuid: string
  readonly name: string
  readonly permissions: ReadonlyArray<string>
}

/**
 * The framework's SQL client as extension code gets it (route handlers, migrations): an @effect/sql
 * SqlClient whose statements are Effects and can also be awaited. `sql\`… ${value}\`` binds values as
 * parameters; `sql.unsafe(text, params)` runs text as it is.
 */
export interface Sql {
  <Row = Record<string, unknown>>(strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): PromiseLike<ReadonlyArray<Row>>
  unsafe<Row = Record<string, unknown>>(sql: string, params?: ReadonlyArray<unknown>): PromiseLike<ReadonlyArray<Row>>
}

export interface RouteContext {
  readonly request: Request
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string>>
  readonly body: unknown
  readonly user: RouteUser | undefined
  readonly server: RouteServer | undefined
  readonly settings: Readonly<Record<string, unknown>>
  /** The framework's SQL client (see Sql). */
  readonly sql: Sql
  readonly extension: { readonly id: string; readonly version: string; readonly basePath: string }
  /** Renders a view (`namespace::view`, see HasBladeViews) to HTML; escaping is on. */
  readonly view: (name: string, data?: object) => Promise<string>
}

/** A value (sent as JSON), a Response, a Promise of either, or an Effect. */
export type RouteHandler = (context: RouteContext) => unknown

export interface RouteOptions {
  /** A permission the extension declares in backend.permissions; users without it get 403. */
  readonly permission?: string
}

export interface RouteDefinition {
  readonly method: HttpMethod
  readonly path: string
  readonly handler: RouteHandler
  readonly options: RouteOptions
}

export interface RouteBuilder {
  get(path: string, handler: RouteHandler, options?: RouteOptions): void
  post(path: string, handler: RouteHandler, options?: RouteOptions): void
  put(path: string, handler: RouteHandler, options?: RouteOptions): void
  patch(path: string, handler: RouteHandler, options?: RouteOptions): void
  delete(path: string, handler: RouteHandler, options?: RouteOptions): void
}

export interface RouteFile {
  readonly routes: ReadonlyArray<RouteDefinition>
}

/** The default export of a route file: `export default defineRoutes((r) => { r.get("/stats", …) })`. */
export const defineRoutes = (define: (routes: RouteBuilder) => void): RouteFile => {
  const routes: Array<RouteDefinition> = []
  const add = (method: HttpMethod) => (path: string, handler: RouteHandler, options: RouteOptions = {}) => {
    routes.push({ method, path, handler, options })
  }
  define({ get: add("GET"), post: add("POST"), put: add("PUT"), patch: add("PATCH"), delete: add("DELETE") })
  return { routes }
}

// ---- Aborting a request from a handler ------------------------------------------------------------

/**
 * Thrown (or returned as a rejected Promise) by a handler or middleware to answer with an error status:
 * the framework renders `{"errors":[{"code","status","detail"}]}`. Detected structurally (`_tag`), so
 * it works across copies of the SDK.
 */
export class HttpError extends Error {
  readonly _tag = "HostHttpError" as const
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string
  ) {
    super(message)
    this.name = "HttpError"
  }
}

/** `abort(403, "needs full.manage")`: stops the request with that status (an HTTP error answer, docs/http.md "Errors"). */
export const abort = (status: number, message: string, code?: string): never => {
  throw new HttpError(status, message, code)
}
