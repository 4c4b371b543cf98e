import { FileSystem, Path } from "@effect/platform"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { parseEnv } from "node:util"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { CoreRows } from "../store/CoreRows.js"
import { embeddedService, makeDirectory, Panel, type PanelInfo, type PanelKind, type PanelServer, type PanelService } from "./Panel.js"
import { allPages, makePanelClient, morePages, type PanelClient, type PanelCounters } from "./PanelClient.js"
import { type Flavor, flavors } from "./PanelFlavor.js"
import { makePanelCaches, makeRealAccess } from "./RealPanelAccess.js"

// Real panels (docs/panels.md "Drivers"): Pterodactyl and Pelican, asked over their own client API with the
// caller's credentials — the panel stays the authority on who a user is and what they may do. Host never
// reads the panel's secrets; from its folder (`panel.root`) it reads only the version and `.env`'s name and
// session cookie name.

export { flavors }
export { panelPermits, SubuserList } from "./RealPanelAccess.js"

// ---- the panel's folder ------------------------------------------------------------------------------

export interface PanelRootFacts {
  readonly name: string | undefined
  readonly version: string | undefined
  readonly cookie: string
}

/** `Str::slug($value, '_')` for the cookie name: lowercase ASCII words joined by `_`. */
const slug = (value: string) =>
  value.normalize("NFKD").replace(/[^\x00-\x7f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")

/** Reads the version (`config/app.php`), name and session cookie (`.env`) from the panel's folder. */
export const readPanelRoot = (root: string, flavor: Flavor) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const fail = (message: string) =>
      new ConfigInvalid({ source: "config/host.yaml", problems: [problem("panel.root", message)] })
    const appPhp = path.join(root, "config", "app.php")
    const app = yield* fs.readFileString(appPhp).pipe(
      Effect.mapError(() => fail(`${root} is not a readable panel folder (${appPhp} cannot be read)`))
    )
    const envFile = path.join(root, ".env")
    const envText = yield* fs.readFileString(envFile).pipe(Effect.orElseSucceed(() => ""))
    const env = yield* Effect.try({ try: () => parseEnv(envText), catch: () => fail(`${envFile} cannot be parsed`) })
    const version = /['"]version['"]\s*=>\s*['"]([^'"]+)['"]/.exec(app)?.[1]
    const name = env.APP_NAME
    const cookie = env.SESSION_COOKIE !== undefined && env.SESSION_COOKIE !== ""
      ? env.SESSION_COOKIE
      : flavor.cookieFromAppName && name !== undefined && slug(name) !== ""
      ? `${slug(name)}_session`
      : flavor.defaultCookie
    return { name, version, cookie } satisfies PanelRootFacts
  })

/**
 * `php -r 'echo PHP_VERSION;'` when `php` is on the PATH. node:child_process (with node:net and
 * node:dgram under it) loads when it is first asked: this module is loaded by every plan, which asks
 * nothing of php, and loading it cost a dry run several milliseconds
 * (docs/decisions.md "P4 (session 10): Schema checks by hand, modules on first use").
 * A `require`, not an `import()`: the bundle runs from V8's code cache, which has no dynamic-import
 * hook (bin/host.js).
 *
 * Synchronous (`spawnSync`), not `execFile`: an asynchronous child process makes Node create some of its
 * tick objects with a boxed number as their id, which turns `process.nextTick`'s object literal
 * megamorphic for the rest of the process — in `host serve` under a real panel every request then paid
 * about 3 µs more in Node's own stream code (docs/decisions.md "P3r: php's version is read synchronously").
 * The service waits for the answer either way, so only the event loop is held, for php's start — at most
 * 5 s: a php that ignores the timeout's signal is killed (SIGKILL), as spawnSync waits for the child to exit.
 */
const phpVersion = Effect.sync((): string | undefined => {
  const { spawnSync } = require("node:child_process") as typeof import("node:child_process")
  const run = spawnSync("php", ["-r", "echo PHP_VERSION;"], { timeout: 5000, killSignal: "SIGKILL", stdio: ["ignore", "pipe", "ignore"] })
  const text = run.error === undefined && run.status === 0 ? run.stdout.toString("utf8").trim() : ""
  return /^\d+\.\d+/.test(text) ? text : undefined
})

// ---- the service ---------------------------------------------------------------------------------

export interface RealPanelOptions {
  readonly kind: Exclude<PanelKind, "embedded">
  readonly url: string
  readonly root: string
  readonly cacheSeconds: number
  readonly applicationKey: string
  readonly php: string
  /** `base_url`'s origin for the CSRF Origin check (docs/panels.md "CSRF"); undefined: derived per request (http/Auth.ts `expectedOrigin`). */
  readonly origin: string | undefined
}

const ApplicationServerList = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    attributes: Schema.Struct({ uuid: Schema.String, identifier: Schema.optional(Schema.String), name: Schema.String, user: Schema.optional(Schema.Int) })
  })),
  meta: Schema.optional(Schema.Struct({
    pagination: Schema.optional(Schema.Struct({ current_page: Schema.Number, total_pages: Schema.Number }))
  }))
})

/** The servers of the panel by its application API (for ServerCreated/ServerDeleted). */
const applicationServers = (client: PanelClient, applicationKey: string) =>
  allPages((page) =>
    Effect.gen(function*() {
      const answer = yield* client.ask(`/api/application/servers?per_page=100&page=${page}`, { authorization: `Bearer ${applicationKey}` })
      if (answer.status !== 200) return yield* client.unavailable(`the application API answered ${answer.status}`)
      const list = Schema.decodeUnknownOption(ApplicationServerList)(answer.body)
      if (Option.isNone(list)) return yield* client.unavailable("the application API's server list did not decode")
      return Option.some({
        items: list.value.data.map(({ attributes: a }): PanelServer => ({ uuid: a.uuid, name: a.name, identifier: a.identifier, ownerId: a.user ?? -1, subusers: [] })),
        more: morePages(list.value.meta?.pagination)
      })
    }))

const emptyDirectory = makeDirectory({ users: [], servers: [] })

/** Reloading reads the panel's server list again when an application key is set; without one there is none. */
const reloadOf = (client: PanelClient, info: PanelInfo, applicationKey: string): PanelService["reload"] =>
  applicationKey === ""
    ? Effect.sync(() => ({ info, directory: emptyDirectory }))
    : applicationServers(client, applicationKey).pipe(
      Effect.map((list) => ({ info, directory: { ...emptyDirectory, servers: list } })),
      Effect.mapError((error) => new ConfigInvalid({ source: "panel.application_key", problems: [problem("panel.application_key", error.message)] }))
    )

/** The panel's name, version and PHP version, from its folder and the machine. */
const panelInfo = (options: RealPanelOptions, flavor: Flavor, facts: PanelRootFacts) =>
  Effect.map(phpVersion, (found): PanelInfo => ({
    kind: flavor.kind,
    name: facts.name ?? (flavor.kind === "pelican" ? "Pelican" : "Pterodactyl"),
    version: facts.version,
    php: found ?? (options.php === "" ? undefined : options.php)
  }))

export const makeRealPanel = (options: RealPanelOptions) =>
  Effect.gen(function*() {
    const flavor = flavors[options.kind]
    const facts = yield* readPanelRoot(options.root, flavor)
    const info = yield* panelInfo(options, flavor, facts)
    const rows = yield* Effect.serviceOption(CoreRows)
    // Counted in this closure (one panel service per process): read by `stats`.
    const counters: PanelCounters = { hits: 0, misses: 0, panelRequests: 0 }
    const client = makePanelClient(options.url, counters)
    const caches = yield* makePanelCaches(client, flavor, Duration.seconds(options.cacheSeconds))
    const access = makeRealAccess({ flavor, client, caches, counters, sessionCookie: facts.cookie, rows, origin: options.origin })
    const service: PanelService = {
      info,
      directory: emptyDirectory,
      reload: reloadOf(client, info, options.applicationKey),
      reloadEvery: options.applicationKey === "" ? undefined : Duration.seconds(Math.max(1, options.cacheSeconds)),
      access: () => access,
      stats: Effect.sync(() => ({ ...counters }))
    }
    return service
  })

/** The Panel of `panel.driver` in config (docs/panels.md "Drivers"). */
export const layerFromConfig = Layer.effect(
  Panel,
  Effect.gen(function*() {
    const { baseUrlConfigured, config } = yield* HostConfig
    const panel = config.panel
    if (panel.driver === "embedded") return yield* embeddedService
    const origin = baseUrlConfigured ? new URL(config.base_url).origin : undefined
    return yield* makeRealPanel({
      kind: panel.driver,
      url: panel.url,
      root: panel.root,
      cacheSeconds: panel.cache_seconds,
      applicationKey: panel.application_key,
      php: panel.php,
      origin
    })
  })
)
