import { FileSystem, HttpClient, HttpClientRequest, Path } from "@effect/platform"
import { Data, Duration, Effect, Option, Schema } from "effect"
import { BlockList, isIP } from "node:net"
import { networkInterfaces } from "node:os"
import { posix } from "node:path"
import { CREATE_EXTENSION_ID, validateDirectory } from "../archive/ExtensionDirectory.js"
import { defaultBundle, entryCandidates } from "../archive/ExtensionFrontend.js"
import { checkTree, listFiles } from "../archive/Tree.js"
import { HostConfig } from "../config/HostConfig.js"
import { type DoctorCheck, type DoctorReport, type DoctorSection, doctorReport, fail, ok, warning } from "../domain/Doctor.js"
import type { FrontendErrorEntry } from "../domain/FrontendErrors.js"
import { dependenciesOf, type InstalledExtension, manifestOf } from "../domain/Installed.js"
import { type ManifestDocument, resolveLayout } from "../domain/Manifest.js"
import { checkRequires, dependencyProblems, type RuntimeVersions } from "../domain/Rules.js"
import type { ExtensionHealth } from "../runtime/Backend.js"
import { callExtensionCode } from "../runtime/ExtensionCode.js"
import { readFrontendErrors } from "../runtime/FrontendErrors.js"
import { quarantineReason, readQuarantine } from "../runtime/Quarantine.js"
import type { Generation, LoadedExtension } from "../runtime/Runtime.js"
import { PanelInstall } from "../panel/PanelInstall.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"

// `host doctor` and the admin detail screen's Doctor section (docs/operations.md "host doctor"): one
// implementation over facts the caller hands in — the runtime generation (the server's current one, or
// one the CLI boots) and its health results — so both answer the same for the same panel. Every check
// reads; nothing here changes a file or a row.

export class DoctorUnknownExtension extends Data.TaggedError("DoctorUnknownExtension")<{ readonly extensionId: string }> {
  override get message() {
    return `extension ${this.extensionId} is not installed (host list shows what is)`
  }
}

export interface DoctorInput {
  /** The booted extensions and what was quarantined. */
  readonly generation: Generation
  /** Health results of the booted extensions (runtime/Backend.ts runHealthChecks). */
  readonly health: ReadonlyArray<ExtensionHealth>
  readonly versions: RuntimeVersions
}

/** `createExtension({ cssIsolation: true })`, as the runtime detects it (runtime/Runtime.ts). */
const CSS_ISOLATION_TRUE = /\bcssIsolation\s*:\s*(?:true|!0)\b/
const USES_EXTENSION_CONFIG = /\buseExtensionConfig\b/
/** A module under src/ whose name says it holds routes (`src/routes/api.ts`, `src/http/admin-routes.js`). */
const ROUTE_LIKE = /^src\/(?:.*\/)?(?:routes?\/[^/]+|[^/]*\broutes?\b[^/]*)\.(?:ts|js|mjs)$/i
const conventionalRouteFiles = "src/routes/api-client.ts, src/routes/admin.ts or src/routes/web.ts"

const readyTimeout = Duration.seconds(5)

/** Host's answer on `/host/ready` (src/http/App.ts): what proves a request reached Host and not the panel. */
const ReadyBody = Schema.Struct({ status: Schema.Literal("ok", "degraded"), generation: Schema.Number })

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

interface ExtensionFacts {
  readonly record: InstalledExtension
  readonly document: ManifestDocument
  readonly directory: string
  readonly files: ReadonlySet<string> | undefined
  readonly loaded: LoadedExtension | undefined
  readonly quarantine: string | undefined
  readonly bundleText: string | undefined
}

const idCheck = (facts: ExtensionFacts, reported: string | undefined, layoutBundle: string | undefined): DoctorCheck => {
  const manifestId = facts.document.id
  const registered = facts.bundleText === undefined ? undefined : CREATE_EXTENSION_ID.exec(facts.bundleText)?.[2]
  // The runtime refuses a mismatch before anything is booted, so the value comes from its reason.
  const idMismatch = facts.quarantine?.startsWith("id mismatch") === true
    ? /getId\(\) returns "([^"]*)"/.exec(facts.quarantine)?.[1] ?? "?"
    : undefined
  const getId = reported !== undefined
    ? `getId() returns "${reported}"`
    : idMismatch !== undefined
    ? `getId() returns "${idMismatch}"`
    : facts.loaded !== undefined
    ? "no backend entrypoint"
    : "getId() not called (the extension is not loaded)"
  const bundle = registered === undefined
    ? layoutBundle === undefined ? "no bundle" : `${layoutBundle} calls createExtension without a literal id`
    : `${layoutBundle} registers "${registered}"`
  const evidence = `manifest "${manifestId}"; ${getId}; ${bundle}`
  const problems = [
    ...(idMismatch !== undefined || (reported !== undefined && reported !== manifestId)
      ? [`make getId() return "${manifestId}"`]
      : []),
    ...(registered !== undefined && registered !== manifestId ? [`call createExtension({ id: "${manifestId}" }) and run host build`] : [])
  ]
  return problems.length === 0
    ? ok("id", evidence)
    : fail("id", `${evidence}: the extension does not load as ${manifestId}`, `${problems.join("; ")}, then host update ${manifestId} --source <folder>`)
}

const routesCheck = (facts: ExtensionFacts, layoutRoutes: ReadonlyArray<string>): DoctorCheck => {
  const files = facts.files ?? new Set<string>()
  const declared = facts.document.backend?.routes ?? {}
  const missing = Object.entries(declared).filter(([, file]) => !files.has(posix.normalize(file)))
  if (missing.length > 0) {
    return fail(
      "routes",
      missing.map(([group, file]) => `backend.routes.${group} names ${file}, which does not exist`).join("; "),
      "point backend.routes at the route files, or ship them in the archive"
    )
  }
  const loadedRoutes = Object.values(facts.loaded?.routes ?? {}).flat()
  const mounted = new Set([...layoutRoutes, ...loadedRoutes.map((route) => route.file)].map((file) => posix.normalize(file)))
  const hasRoutes = typeof (facts.loaded?.instance as { getRouteFiles?: unknown } | undefined)?.getRouteFiles === "function"
  const unmounted = [...files].filter((file) => ROUTE_LIKE.test(file) && !mounted.has(file) && !/\.(test|spec|d)\.[a-z]+$/.test(file))
  if (unmounted.length > 0) {
    return fail(
      "routes",
      `${unmounted.join(", ")} ${unmounted.length === 1 ? "looks like a route file" : "look like route files"}, but no rule mounts ${unmounted.length === 1 ? "it" : "them"}: ${
        mounted.size === 0 ? "no src/routes/<group> file, no backend.routes, no HasRoutes, so every route answers 404" : `mounted: ${[...mounted].join(", ")}`
      }`,
      `name the file ${conventionalRouteFiles}, declare it under backend.routes.<group>, or return it from getRouteFiles() (HasRoutes)`
    )
  }
  if (mounted.size === 0) {
    return ok("routes", `no HTTP routes: no src/routes/<group> file, no backend.routes${hasRoutes ? ", HasRoutes returns none" : ", no HasRoutes"}`)
  }
  const counted = facts.loaded === undefined ? "" : `, ${plural(loadedRoutes.length, "route")}`
  return ok("routes", `mounted ${[...mounted].join(", ")}${counted}${hasRoutes ? " (with HasRoutes)" : ""}`)
}

const bundleCheck = (
  facts: ExtensionFacts,
  layoutBundle: string | undefined,
  newestSource: { readonly file: string; readonly at: number } | undefined,
  bundleAt: number | undefined
): DoctorCheck => {
  const files = facts.files ?? new Set<string>()
  const declared = facts.document.frontend?.bundle
  const source = entryCandidates.find((candidate) => files.has(candidate))
  const buildOutput = declared ?? defaultBundle
  if (declared !== undefined && !files.has(posix.normalize(declared))) {
    return fail(
      "bundle",
      `frontend.bundle is ${declared}, which does not exist: the frontend is not rendered`,
      source === undefined
        ? `build the bundle to ${declared} (or remove frontend.bundle), then host update ${facts.document.id} --source <folder>`
        : `run host build in the extension's folder (it writes ${declared}), then host update ${facts.document.id} --source <folder>`
    )
  }
  if (source === undefined) {
    return layoutBundle === undefined
      ? ok("bundle", "no frontend (no resources/frontend/src entry, no bundle)")
      : ok("bundle", `${layoutBundle}, prebuilt (no frontend source shipped)`)
  }
  if (layoutBundle === undefined) {
    return fail(
      "bundle",
      `${source} exists but no bundle does: host build writes ${buildOutput}, which is missing, so the frontend is not rendered`,
      `run host build in the extension's folder, then host update ${facts.document.id} --source <folder>`
    )
  }
  if (posix.normalize(layoutBundle) !== posix.normalize(buildOutput)) {
    return fail(
      "bundle",
      `the panel loads ${layoutBundle}, but host build writes ${buildOutput}: the page runs a bundle the build does not update`,
      `set frontend.bundle: ${layoutBundle} in extension.yaml, or delete ${layoutBundle} and run host build`
    )
  }
  if (newestSource !== undefined && bundleAt !== undefined && newestSource.at > bundleAt + 1000) {
    return warning(
      "bundle",
      `${layoutBundle} is older than ${newestSource.file}: the page may run code from before the last change`,
      `run host build, then host update ${facts.document.id} --source <folder> (host dev --watch rebuilds on save)`
    )
  }
  return ok("bundle", `${layoutBundle}, host build's output, newer than its sources`)
}

const publicSettingsCheck = (facts: ExtensionFacts, fields: ReadonlyArray<{ readonly key: string; readonly public: boolean }>): DoctorCheck => {
  const visible = fields.filter((field) => field.public).map((field) => field.key)
  const readsConfig = facts.bundleText !== undefined && USES_EXTENSION_CONFIG.test(facts.bundleText)
  if (visible.length > 0) return ok("public-settings", `public to the frontend: ${visible.join(", ")}`)
  if (readsConfig) {
    return fail(
      "public-settings",
      fields.length === 0
        ? "the bundle calls useExtensionConfig, but admin.settings declares no fields: it returns {}"
        : `the bundle calls useExtensionConfig, but none of ${fields.map((field) => field.key).join(", ")} is public: true, so it returns {}`,
      "mark the fields the frontend reads public: true under admin.settings (secrets never)"
    )
  }
  return ok("public-settings", fields.length === 0 ? "no settings" : `${plural(fields.length, "setting")}, none public; the bundle does not read them`)
}

const cssIsolationCheck = (facts: ExtensionFacts, styles: string | undefined): DoctorCheck => {
  const manifest = facts.document.frontend?.css_isolation !== undefined
  const bundle = facts.bundleText !== undefined && CSS_ISOLATION_TRUE.test(facts.bundleText)
  if (manifest || bundle) return ok("css-isolation", `enabled by ${manifest ? "frontend.css_isolation" : "createExtension({ cssIsolation: true })"}`)
  if (styles === undefined) return ok("css-isolation", "no stylesheet, nothing to isolate")
  return warning(
    "css-isolation",
    `${styles} applies to the whole panel page: CSS isolation is not enabled`,
    "add frontend.css_isolation: { mode: root-class } to extension.yaml, or createExtension({ cssIsolation: true })"
  )
}

const adminSettingsCheck = (facts: ExtensionFacts, fields: number): DoctorCheck => {
  if (facts.document.admin?.settings === undefined) return ok("admin-settings", "no admin.settings section")
  if (fields === 0) {
    return fail(
      "admin-settings",
      "admin.settings has no fields: the admin settings form is not shown",
      "declare fields under admin.settings (docs/authoring.md), or remove the section"
    )
  }
  return ok("admin-settings", `${plural(fields, "field")} in the admin settings form`)
}

const schedulesCheck = (facts: ExtensionFacts, scheduled: number): DoctorCheck => {
  const declared = facts.document.schedules?.tasks?.length ?? 0
  if (declared === 0) return ok("schedules", "no scheduled tasks")
  if (scheduled === 0 && facts.document.capabilities !== undefined) {
    return fail(
      "schedules",
      `capabilities is declared without schedules: ^1, so ${plural(declared, "scheduled task")} ${declared === 1 ? "is" : "are"} ignored`,
      "remove the deprecated capabilities section (capabilities are detected), or add schedules: \"^1\" to it"
    )
  }
  return ok("schedules", `${plural(scheduled, "task")} scheduled`)
}

const quarantineCheck = (facts: ExtensionFacts, generation: Generation): DoctorCheck => {
  const id = facts.document.id
  if (!facts.record.enabled) return warning("loaded", "disabled: its routes, slots, listeners and tasks are off", `host enable ${id}`)
  if (facts.quarantine !== undefined) {
    const fix = facts.quarantine.startsWith("id mismatch")
      ? "see the id check"
      : /^dependency /.test(facts.quarantine)
      ? "see the requires check: install or enable the dependency, or update it into range"
      : `fix what the reason names and host update ${id} --source <folder>; a running server retries on every change`
    return fail("loaded", `quarantined: ${facts.quarantine}`, fix)
  }
  const unavailable = generation.unavailable.get(id)
  if (unavailable !== undefined) {
    return warning("loaded", `unavailable on this replica: ${unavailable}`, "docs/operations.md \"Running replicas\"")
  }
  if (facts.loaded === undefined) return warning("loaded", "enabled, but not loaded by this runtime", "host status shows why; restart host serve")
  return ok("loaded", "enabled and booted")
}

const healthCheck = (facts: ExtensionFacts, health: ExtensionHealth | undefined): DoctorCheck => {
  const declared = facts.document.health?.checks?.length ?? 0
  if (facts.loaded === undefined) {
    return ok("health", declared === 0 ? "no health checks" : `${plural(declared, "health check")} not run (the extension is not loaded)`)
  }
  const checks = health?.checks ?? []
  if (checks.length === 0) return ok("health", "no health checks")
  const critical = checks.filter((check) => check.declared && check.severity === "critical" && check.status === "error")
  const other = checks.filter((check) => !critical.includes(check) && (check.status === "error" || check.status === "warning"))
  const describe = (list: typeof checks) => list.map((check) => `${check.id} ${check.status}${check.message === null ? "" : `: ${check.message}`}`).join("; ")
  if (critical.length > 0) {
    return fail("health", `critical: ${describe(critical)}${other.length > 0 ? `; also ${describe(other)}` : ""}`, "fix what the check reports (host status --health runs them again)")
  }
  if (other.length > 0) return warning("health", describe(other), "see the check's message; host status --health runs them again")
  return ok("health", `${plural(checks.length, "check")} pass`)
}

const frontendErrorsCheck = (facts: ExtensionFacts, errors: ReadonlyArray<FrontendErrorEntry>): DoctorCheck => {
  const current = errors.filter((entry) => entry.version === facts.record.version)
  if (current.length === 0) {
    return ok("frontend-errors", errors.length === 0 ? "none reported" : `none for ${facts.record.version} (${plural(errors.length, "error")} of older versions)`)
  }
  const last = current[0]!
  return warning(
    "frontend-errors",
    `${plural(current.reduce((sum, entry) => sum + entry.count, 0), "render error")}; last ${last.lastAt}: ${last.message}${last.slot === undefined ? "" : ` in ${last.slot}`} (${last.user})`,
    "a component of the bundle throws: fix it and update; host status --json lists the stacks"
  )
}

const driftCheck = (record: InstalledExtension, integrity: Effect.Effect.Success<ReturnType<typeof checkTree>> | undefined): DoctorCheck => {
  if (integrity === undefined) return ok("drift", "linked with host dev: the folder is the author's, not checked")
  switch (integrity._tag) {
    case "Intact":
      return ok("drift", `${plural(integrity.files, "file")} ${integrity.files === 1 ? "matches" : "match"} checksums.json`)
    case "Missing":
      return fail("drift", "the extension's folder is missing", `host update ${record.extensionId} --force --source <archive> puts the files back`)
    case "Unverifiable":
      return warning("drift", `cannot check the files: ${integrity.reason}`, `reinstall from an archive (host update ${record.extensionId} --force --source <archive>)`)
    case "Modified":
      return fail(
        "drift",
        `files changed since the install: ${integrity.problems.slice(0, 5).join("; ")}${integrity.problems.length > 5 ? `; … ${integrity.problems.length - 5} more` : ""}`,
        `host update ${record.extensionId} --force --source <archive> restores them (or host dev for a working folder)`
      )
  }
}

const requiresCheck = (
  facts: ExtensionFacts,
  versions: RuntimeVersions,
  installed: ReadonlyArray<InstalledExtension>,
  generation: Generation
): DoctorCheck => {
  const requires = checkRequires(facts.document, versions)
  const states = new Map(installed.map((other) => [other.extensionId, { version: other.version, enabled: other.enabled, dependencies: dependenciesOf(other) }]))
  const dependencies = dependencyProblems(facts.document, states, generation.quarantined)
  const unmet = [...requires.unmet, ...dependencies]
  if (unmet.length > 0) {
    return fail("requires", unmet.join("; "), "install what is required (host add), or an extension version whose requires this panel meets")
  }
  if (requires.warnings.length > 0) return warning("requires", requires.warnings.join("; "), "check the requirement by hand")
  const declared = [...Object.entries(facts.document.requires ?? {}), ...Object.entries(facts.document.dependencies ?? {})]
  return ok("requires", declared.length === 0 ? "no requirements" : `met: ${declared.map(([key, range]) => `${key} ${range}`).join(", ")}`)
}

/** What the doctor gathers once per run and reads for every extension. */
interface ExtensionContext {
  readonly installed: ReadonlyArray<InstalledExtension>
  readonly recordedQuarantine: Parameters<typeof quarantineReason>[0]
  readonly frontendErrors: ReadonlyMap<string, ReadonlyArray<FrontendErrorEntry>>
}

/** The extension's folder as it is on disk: its files, the layout they give, and the bundle's text. */
const readFacts = (record: InstalledExtension, document: ManifestDocument, input: DoctorInput, context: ExtensionContext) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const id = record.extensionId
    const directory = path.join(paths.extensions, ...id.split("/"))
    const listed = yield* listFiles(directory).pipe(Effect.option)
    const files = Option.isSome(listed) ? new Set(listed.value) : undefined
    const fileExists = (file: string) => files?.has(posix.normalize(file)) === true
    const directoryExists = (folder: string) => [...(files ?? [])].some((file) => file.startsWith(`${posix.normalize(folder).replace(/\/$/, "")}/`))
    const layout = resolveLayout(document, fileExists, directoryExists)
    const bundleText = layout.bundle !== undefined && fileExists(layout.bundle)
      ? yield* fs.readFileString(path.join(directory, layout.bundle)).pipe(Effect.orElseSucceed(() => undefined))
      : undefined
    const facts: ExtensionFacts = {
      record,
      document,
      directory,
      files,
      loaded: input.generation.extensions.get(id),
      quarantine: input.generation.quarantined.get(id) ?? quarantineReason(context.recordedQuarantine, record),
      bundleText
    }
    return { facts, layout, fileExists }
  })

/** The id the loaded entrypoint's getId() returns (undefined when not loaded, without one, or it fails). */
const reportedId = ({ loaded, record }: ExtensionFacts) =>
  Effect.gen(function*() {
    const instance = loaded?.instance as { getId?: () => unknown } | undefined
    if (instance === undefined || typeof instance.getId !== "function") return undefined
    return yield* callExtensionCode(record.extensionId, "getId()", () => instance.getId!(), Duration.seconds(5)).pipe(
      Effect.map((value) => String(value)),
      Effect.orElseSucceed(() => undefined)
    )
  })

/** extension.yaml as `host validate` reads it; a wrong bundle id is left to the id check. */
const manifestCheck = ({ directory, files, record }: ExtensionFacts) =>
  Effect.gen(function*() {
    const { config } = yield* HostConfig
    if (files === undefined) return fail("manifest", `${directory} is missing`, `host update ${record.extensionId} --force --source <archive>`)
    const validation = yield* validateDirectory(directory, config.version)
    const problems = validation.errors.filter((problem) => !problem.message.includes("calls createExtension with id"))
    return problems.length > 0
      ? fail("manifest", problems.map((problem) => `${problem.path}: ${problem.message}`).join("; "), "fix extension.yaml (host validate <folder> lists the problems) and update")
      : ok("manifest", `extension.yaml is valid${validation.warnings.length > 0 ? ` (${plural(validation.warnings.length, "warning")}: host validate)` : ""}`)
  })

/** When the newest frontend source and the bundle were last changed (to tell a stale bundle). */
const bundleTimes = ({ directory, files }: ExtensionFacts, bundle: string | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const mtime = (file: string) =>
      fs.stat(path.join(directory, file)).pipe(
        Effect.map((info) => Option.getOrUndefined(info.mtime)?.getTime()),
        Effect.orElseSucceed(() => undefined)
      )
    const sources = [...(files ?? [])].filter((file) => file.startsWith("resources/frontend/src/"))
    let newestSource: { file: string; at: number } | undefined
    for (const file of sources) {
      const at = yield* mtime(file)
      if (at !== undefined && (newestSource === undefined || at > newestSource.at)) newestSource = { file, at }
    }
    const bundleAt = bundle === undefined ? undefined : yield* mtime(bundle)
    return { newestSource, bundleAt }
  })

/** The checks of one installed extension. */
const extensionSection = (record: InstalledExtension, input: DoctorInput, context: ExtensionContext) =>
  Effect.gen(function*() {
    const id = record.extensionId
    const manifest = manifestOf(record)
    if (manifest === undefined) {
      return {
        subject: id,
        version: record.version,
        checks: [fail("manifest", "the stored manifest cannot be read (the record is corrupt)", `host update ${id} --force --source <archive>`)]
      } satisfies DoctorSection
    }
    const { facts, fileExists, layout } = yield* readFacts(record, manifest.document, input, context)
    const reported = yield* reportedId(facts)
    const manifestResult = yield* manifestCheck(facts)
    const { bundleAt, newestSource } = yield* bundleTimes(facts, layout.bundle)
    const integrity = record.source.type === "dev-link" ? undefined : yield* checkTree(facts.directory)
    const checks: Array<DoctorCheck> = [
      quarantineCheck(facts, input.generation),
      manifestResult,
      idCheck(facts, reported, layout.bundle),
      routesCheck(facts, Object.values(layout.routes)),
      bundleCheck(facts, layout.bundle !== undefined && fileExists(layout.bundle) ? layout.bundle : undefined, newestSource, bundleAt),
      publicSettingsCheck(facts, manifest.settings),
      cssIsolationCheck(facts, layout.styles !== undefined && fileExists(layout.styles) ? layout.styles : undefined),
      adminSettingsCheck(facts, manifest.settings.length),
      schedulesCheck(facts, manifest.schedules.length),
      healthCheck(facts, input.health.find((entry) => entry.extensionId === id)),
      frontendErrorsCheck(facts, context.frontendErrors.get(id) ?? []),
      driftCheck(record, integrity),
      requiresCheck(facts, input.versions, context.installed, input.generation)
    ]
    return { subject: id, version: record.version, checks } satisfies DoctorSection
  })

/** With a real panel: Host's include in the panel's views, and `/host/` routed to Host by the web server. */
const panelSection = Effect.gen(function*() {
  const { config } = yield* HostConfig
  const panel = config.panel
  if (panel.driver === "embedded") return undefined
  // The same inspection `host panel:status` and the self-heal use (panel/PanelInstall.ts).
  const installer = yield* PanelInstall
  const inspected = yield* installer.detect(panel.root).pipe(
    Effect.flatMap((detected) => installer.inspect(detected, config.version)),
    Effect.either
  )
  const include: DoctorCheck = inspected._tag === "Left"
    ? fail("panel-include", `${panel.root}: ${inspected.left.message}`, "set panel.root in config/host.yaml to the panel's install folder")
    : inspected.right.state === "intact"
    ? ok("panel-include", `${inspected.right.path}: ${inspected.right.detail}`)
    : fail(
      "panel-include",
      `${inspected.right.path}: ${inspected.right.state} (${inspected.right.detail}): the panel pages do not load Host as installed`,
      "host panel:install (a panel upgrade replaces the panel's files; host serve puts Host's include back when panel.self_heal is on)"
    )
  const url = `${panel.url.replace(/\/+$/, "")}/host/ready`
  const client = yield* HttpClient.HttpClient
  const answer = yield* client.execute(HttpClientRequest.get(url)).pipe(
    Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, contentType: response.headers["content-type"] ?? "", text }))),
    Effect.scoped,
    Effect.timeout(readyTimeout),
    Effect.either
  )
  // Under a real panel only Host's three prefixes go to Host: /auth/ is the panel's own sign-in (Host's
  // /auth/ pages serve the embedded panel alone), so routing it to Host would take the panel's sign-in over.
  const fix = "route /host/, /api/client/host/ and /admin/host/ (only these three; /auth/ stays the panel's sign-in) to Host in the panel's web server: include the snippet host panel:install writes (docs/operations.md \"Behind the panel's web server\")"
  let routing: DoctorCheck
  if (answer._tag === "Left") {
    const reason = answer.left._tag === "TimeoutException" ? `no answer within ${Duration.format(readyTimeout)}` : answer.left.message
    routing = fail("panel-routing", `GET ${url}: ${reason}`, `check panel.url, then ${fix}`)
  } else {
    const body = Schema.decodeUnknownOption(Schema.parseJson(ReadyBody))(answer.right.text)
    routing = answer.right.status === 200 && Option.isSome(body)
      ? ok("panel-routing", `GET ${url} answered Host's ready JSON (${body.value.status}, generation ${body.value.generation})`)
      : fail(
        "panel-routing",
        `GET ${url} answered ${answer.right.status} ${answer.right.contentType.split(";")[0] || "without a content type"}, not Host's ready JSON: the web server sends /host/ to the panel`,
        fix
      )
  }
  return { subject: "host", version: config.version, checks: [include, routing] } satisfies DoctorSection
})

/** The loopback ranges and this machine's interface addresses: what "on this machine" means for a proxy. */
const thisMachine = (): BlockList => {
  const list = new BlockList()
  list.addSubnet("127.0.0.0", 8, "ipv4")
  list.addAddress("::1", "ipv6")
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) list.addAddress(entry.address.replace(/%.*$/, ""), entry.family === "IPv6" ? "ipv6" : "ipv4")
  }
  return list
}

/** The `trusted_proxies` entries that are (or include) addresses not on this machine. */
export const remoteProxies = (entries: ReadonlyArray<string>, local: BlockList): ReadonlyArray<string> =>
  entries.filter((entry) => {
    const [address, bits] = entry.trim().split("/")
    const type = isIP(address!) === 6 ? "ipv6" : "ipv4"
    const whole = type === "ipv6" ? 128 : 32
    if (bits === undefined || Number(bits) === whole) return !local.check(address!, type)
    // A range is on this machine only when it lies within loopback (127.0.0.0/8).
    return !(type === "ipv4" && Number(bits) >= 8 && address!.split(".")[0] === "127")
  })

/**
 * `trusted_proxies` naming another machine while `base_url` is unset (docs/operations.md "Behind a proxy"):
 * the X-Forwarded-Host such a proxy sends then decides the origin Host checks and links to. Said only when
 * it applies: a report of a plain install does not grow a check.
 */
const proxiesCheck = Effect.gen(function*() {
  const host = yield* HostConfig
  if (host.baseUrlConfigured === true) return undefined
  const remote = remoteProxies(host.config.trusted_proxies, thisMachine())
  if (remote.length === 0) return undefined
  return warning(
    "trusted-proxies",
    `trusted_proxies lists ${remote.join(", ")}, not on this machine, and base_url is not set: the Host (X-Forwarded-Host) a remote proxy forwards decides the origin Host checks unsafe requests against and builds its links with`,
    "set base_url in config/host.yaml (or HOST_BASE_URL) to the address users open, e.g. https://panel.example.com; or list only this machine's proxies in trusted_proxies"
  )
})

/**
 * The report for one installed extension, or for all of them, plus the panel's include and routing
 * when Host runs beside a real panel. Fails only when `only` is not installed.
 */
export const runDoctor = Effect.fn("Doctor.run")(function*(only: string | undefined, input: DoctorInput) {
  const installed = yield* Effect.flatMap(ExtensionsRepo, (repo) => repo.list)
  const targets = only === undefined ? installed : installed.filter((record) => record.extensionId === only)
  if (only !== undefined && targets.length === 0) return yield* new DoctorUnknownExtension({ extensionId: only })
  const context = {
    installed,
    recordedQuarantine: yield* readQuarantine,
    frontendErrors: yield* readFrontendErrors
  }
  const sections = yield* Effect.forEach(targets, (record) => extensionSection(record, input, context), { concurrency: 4 })
  // The panel's include and routing concern every extension, so a report on one carries them too.
  const panel = yield* Effect.provide(panelSection, PanelInstall.Default)
  const proxies = yield* proxiesCheck
  const host: DoctorSection | undefined = proxies === undefined
    ? panel
    : panel === undefined
    ? { subject: "host", version: (yield* HostConfig).config.version, checks: [proxies] }
    : { ...panel, checks: [...panel.checks, proxies] }
  return doctorReport(host === undefined ? sections : [host, ...sections]) satisfies DoctorReport
})
