import { Effect, Layer } from "effect"
import { appendFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { dataLayer, platformLayer } from "../../src/CompositionRoot.js"
import { recordFrontendError } from "../../src/runtime/FrontendErrors.js"
import { repoRoot, runHost, tempDir, tempDirsPerTest } from "../support/cli.js"
import { writeExtension } from "../support/extensions.js"
import { writePanelConfig } from "../http/helpers.js"
import { pterodactylInclude, withBlock } from "../../src/panel/PanelFiles.js"
import { stockScriptsBlade, writePanelFolder } from "../support/panel-folders.js"

// `host doctor` (docs/operations.md "host doctor"): every check is shown passing on a healthy extension
// and failing (or warning) on one broken the way the check is about.

const temp = tempDirsPerTest()

interface Check {
  readonly id: string
  readonly verdict: "ok" | "warning" | "fail"
  readonly evidence: string
  readonly fix: string
}
interface Report {
  readonly sections: ReadonlyArray<{ readonly subject: string; readonly version: string | null; readonly checks: ReadonlyArray<Check> }>
  readonly summary: { readonly ok: number; readonly warning: number; readonly fail: number }
  readonly healthy: boolean
}

const entrypoint = (className: string, id: string, extra = "") =>
  `export class ${className} { getId() { return "${id}" } register() {} boot() {} ${extra} }\n`

const manifestTail = (lines: ReadonlyArray<string>) => `${lines.join("\n")}\n`

/** A folder whose frontend bundle is newer than its source, as host build leaves it. */
const built = (folder: string, bundle: string) => {
  const later = new Date(Date.now() + 60_000)
  utimesSync(join(folder, bundle), later, later)
  return folder
}

const doctor = async (root: string, ...args: ReadonlyArray<string>) => {
  const run = await runHost(["doctor", ...args, "--json", "--root", root])
  return { run, report: JSON.parse(run.stdout) as Report }
}

const checkOf = (report: Report, subject: string, id: string): Check => {
  const section = report.sections.find((candidate) => candidate.subject === subject)
  const check = section?.checks.find((candidate) => candidate.id === id)
  if (check === undefined) throw new Error(`no check ${id} for ${subject} in ${JSON.stringify(report, null, 2)}`)
  return check
}

const add = async (root: string, folder: string, ...flags: ReadonlyArray<string>) => {
  const run = await runHost(["add", folder, ...flags, "--root", root])
  expect(run.code, run.stderr).toBe(0)
}

describe("host doctor", () => {
  let root: string
  let src: string
  let report: Report
  let code: number
  let text: string

  // One root with every broken extension, shared by the tests of this block (and removed after them).
  const shared = [tempDir("host-root-"), tempDir("host-src-")]
  afterAll(() => shared.forEach((folder) => folder.cleanup()))

  beforeAll(async () => {
    root = shared[0]!.path
    src = shared[1]!.path
    // A healthy extension: every check passes.
    const good = writeExtension(src, {
      id: "acme/good",
      version: "1.0.0",
      requires: { host: "^1.0" },
      files: {
        "src/GoodExtension.js": entrypoint("GoodExtension", "acme/good", `getHealthChecks() { return [{ id: "db", status: "pass" }] }`),
        "src/routes/api-client.ts": `import { defineRoutes } from "@host/sdk/server"\nexport default defineRoutes((r) => { r.get("/ping", () => ({ pong: true })) })\n`,
        "resources/frontend/src/index.tsx": "export default {}\n",
        "resources/frontend/dist/extension.js": `createExtension({ id: "acme/good", cssIsolation: true }); useExtensionConfig()\n`,
        "resources/frontend/dist/extension.css": ".x { color: red }\n"
      }
    })
    appendFileSync(join(good, "extension.yaml"), manifestTail([
      "admin:",
      "  settings:",
      "    color: { type: string, default: red, public: true }",
      "health:",
      "  checks:",
      "    - { id: db, label: Database, severity: critical }",
      "schedules:",
      "  tasks:",
      "    - { id: tidy, label: Tidy, command: \"good:tidy\", cron: \"0 3 * * *\" }"
    ]))
    await add(root, built(good, "resources/frontend/dist/extension.js"))

    // getId() disagrees with the manifest (quarantined at boot), a route file no rule mounts, a frontend
    // source without a bundle, an empty admin.settings, capabilities without schedules.
    const broken = writeExtension(src, {
      id: "acme/broken",
      version: "1.0.0",
      files: {
        "src/BrokenExtension.js": entrypoint("BrokenExtension", "acme/brokn"),
        "src/routes/api.js": "export default () => {}\n",
        "resources/frontend/src/index.tsx": "export default {}\n"
      }
    })
    appendFileSync(join(broken, "extension.yaml"), manifestTail([
      "capabilities:",
      "  routes: ^1",
      "schedules:",
      "  tasks:",
      "    - { id: tidy, label: Tidy, command: \"broken:tidy\", cron: \"0 3 * * *\" }",
      "admin:",
      "  settings:",
      "    title: Broken settings"
    ]))
    await add(root, broken)

    // The loader takes a stale default bundle while host build writes another; the bundle reads settings
    // none of which is public; a stylesheet without isolation; a critical health check that fails.
    const styled = writeExtension(src, {
      id: "acme/styled",
      version: "1.0.0",
      files: {
        "src/StyledExtension.js": entrypoint("StyledExtension", "acme/styled", `getHealthChecks() { return [{ id: "api", status: "fail", message: "api down" }] }`),
        "resources/frontend/src/index.tsx": "export default {}\n",
        "dist/extension.js": `createExtension({ id: "acme/styled" }); useExtensionConfig()\n`,
        "dist/extension.css": ".x { color: red }\n"
      }
    })
    appendFileSync(join(styled, "extension.yaml"), manifestTail([
      "admin:",
      "  settings:",
      "    token: { type: string, input: password }",
      "health:",
      "  checks:",
      "    - { id: api, label: API, severity: critical }"
    ]))
    await add(root, built(styled, "dist/extension.js"))

    // A dependency turned off under it, and files changed after the install (the bundle now names
    // another id).
    const base = writeExtension(src, { id: "acme/base", version: "1.0.0" })
    await add(root, base)
    const leaning = writeExtension(src, {
      id: "acme/leaning",
      version: "1.0.0",
      dependencies: { "acme/base": "^1.0" },
      files: { "resources/frontend/dist/extension.js": `createExtension({ id: "acme/leaning" })\n` }
    })
    await add(root, leaning)
    expect((await runHost(["disable", "acme/base", "--force", "--root", root])).code).toBe(0)
    writeFileSync(join(root, "host", "extensions", "acme", "leaning", "resources", "frontend", "dist", "extension.js"), `createExtension({ id: "acme/other" })\n`)

    // Render errors the bridge reported for acme/styled 1.0.0, recorded as the server records them.
    await Effect.runPromise(
      recordFrontendError({ extensionId: "acme/styled", message: "Cannot read properties of undefined", slot: "server.overview.after" }, { version: "1.0.0", user: "admin" })
        .pipe(Effect.provide(dataLayer({ frameworkRoot: repoRoot, root, verbose: false, env: {} }).pipe(Layer.provideMerge(platformLayer))))
    )

    const result = await doctor(root)
    report = result.report
    code = result.run.code
    text = (await runHost(["doctor", "--root", root])).stdout
  })

  it("passes every check of a healthy extension", () => {
    const good = report.sections.find((section) => section.subject === "acme/good")!
    expect(good.checks.map((check) => check.id)).toEqual([
      "loaded", "manifest", "id", "routes", "bundle", "public-settings", "css-isolation", "admin-settings", "schedules", "health",
      "frontend-errors", "drift", "requires"
    ])
    for (const check of good.checks) expect(check, check.id).toMatchObject({ verdict: "ok", fix: "" })
    expect(checkOf(report, "acme/good", "id").evidence).toBe(`manifest "acme/good"; getId() returns "acme/good"; resources/frontend/dist/extension.js registers "acme/good"`)
    expect(checkOf(report, "acme/good", "routes").evidence).toContain("src/routes/api-client.ts, 1 route")
    // The embedded panel has no include to check.
    expect(report.sections.some((section) => section.subject === "host")).toBe(false)
  })

  it("exits 1 when any check fails; --json is one document", () => {
    expect(code).toBe(1)
    expect(report.healthy).toBe(false)
    expect(report.summary.fail).toBeGreaterThan(0)
  })

  it("names a getId() that disagrees with the manifest, and the quarantine it causes", () => {
    expect(checkOf(report, "acme/broken", "id")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringContaining(`getId() returns "acme/brokn"`),
      fix: expect.stringContaining(`make getId() return "acme/broken"`)
    })
    expect(checkOf(report, "acme/broken", "loaded")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("quarantined: id mismatch") })
  })

  it("names a bundle that registers another id (and the drift that put it there)", () => {
    expect(checkOf(report, "acme/leaning", "id")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringContaining(`resources/frontend/dist/extension.js registers "acme/other"`),
      fix: expect.stringContaining(`createExtension({ id: "acme/leaning" })`)
    })
    expect(checkOf(report, "acme/leaning", "drift")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringContaining("resources/frontend/dist/extension.js")
    })
  })

  it("names a route-like file no rule mounts", () => {
    expect(checkOf(report, "acme/broken", "routes")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringMatching(/^src\/routes\/api\.js looks like a route file, but no rule mounts it: .*404/),
      fix: expect.stringContaining("src/routes/api-client.ts")
    })
  })

  it("names a missing bundle, and a loaded bundle that is not host build's output", () => {
    expect(checkOf(report, "acme/broken", "bundle")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringContaining("host build writes resources/frontend/dist/extension.js, which is missing")
    })
    expect(checkOf(report, "acme/styled", "bundle")).toMatchObject({
      verdict: "fail",
      evidence: "the panel loads dist/extension.js, but host build writes resources/frontend/dist/extension.js: the page runs a bundle the build does not update"
    })
  })

  it("names useExtensionConfig with no public field, styles without isolation, empty admin settings, ignored schedules", () => {
    expect(checkOf(report, "acme/styled", "public-settings")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("none of token is public: true") })
    expect(checkOf(report, "acme/styled", "css-isolation")).toMatchObject({ verdict: "warning", evidence: expect.stringContaining("dist/extension.css applies to the whole panel page") })
    expect(checkOf(report, "acme/broken", "admin-settings")).toMatchObject({ verdict: "fail", evidence: "admin.settings has no fields: the admin settings form is not shown" })
    expect(checkOf(report, "acme/broken", "schedules")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("capabilities is declared without schedules: ^1") })
  })

  it("names a failing critical health check and the last frontend errors", () => {
    expect(checkOf(report, "acme/styled", "health")).toMatchObject({ verdict: "fail", evidence: "critical: api error: api down" })
    expect(checkOf(report, "acme/styled", "frontend-errors")).toMatchObject({
      verdict: "warning",
      evidence: expect.stringMatching(/^1 render error; last .*: Cannot read properties of undefined in server\.overview\.after \(admin\)$/)
    })
  })

  it("names a disabled extension and a dependency that is not met", () => {
    expect(checkOf(report, "acme/base", "loaded")).toMatchObject({ verdict: "warning", fix: "host enable acme/base" })
    expect(checkOf(report, "acme/leaning", "requires")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("acme/base") })
  })

  it("prints the same report as text, grouped per extension with the fix lines", () => {
    expect(text).toContain("acme/broken 1.0.0: ")
    expect(text).toMatch(/^ {2}FAIL {2}routes +src\/routes\/api\.js looks like a route file/m)
    expect(text).toMatch(/^ +fix: name the file src\/routes\/api-client\.ts/m)
    expect(text).toMatch(/^acme\/good 1\.0\.0: all checks pass$/m)
  })

  it("reports one extension, and refuses an id that is not installed", async () => {
    const one = await doctor(root, "acme/good")
    expect(one.run.code).toBe(0)
    expect(one.report.sections.map((section) => section.subject)).toEqual(["acme/good"])
    const missing = await runHost(["doctor", "acme/nothing", "--root", root])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("extension acme/nothing is not installed")
  })

  it("warns about a bundle older than its source", async () => {
    const own = temp("host-root-")
    const folder = writeExtension(temp("host-src-"), {
      id: "acme/stale",
      version: "1.0.0",
      files: {
        "resources/frontend/src/index.tsx": "export default {}\n",
        "resources/frontend/dist/extension.js": `createExtension({ id: "acme/stale" })\n`
      }
    })
    await add(own, built(folder, "resources/frontend/dist/extension.js"))
    // The source edited after the last build (its bytes as installed, so only its age changes).
    const later = new Date(Date.now() + 3_600_000)
    utimesSync(join(own, "host", "extensions", "acme", "stale", "resources", "frontend", "src", "index.tsx"), later, later)
    const { report: stale } = await doctor(own)
    expect(checkOf(stale, "acme/stale", "bundle")).toMatchObject({
      verdict: "warning",
      evidence: "resources/frontend/dist/extension.js is older than resources/frontend/src/index.tsx: the page may run code from before the last change"
    })
    expect(checkOf(stale, "acme/stale", "drift").verdict).toBe("ok")
  })

  it("names a requires range the panel left behind after an upgrade", async () => {
    const own = temp("host-root-")
    writePanelConfig(own)
    await add(own, writeExtension(temp("host-src-"), { id: "acme/ranged", version: "1.0.0", requires: { panel: "^1.11" } }))
    expect(checkOf((await doctor(own)).report, "acme/ranged", "requires")).toMatchObject({ verdict: "ok", evidence: "met: panel ^1.11" })
    const panelFile = join(own, "config", "panel.yaml")
    writeFileSync(panelFile, readFileSync(panelFile, "utf8").replace("version: 1.11.0", "version: 2.0.0"))
    expect(checkOf((await doctor(own)).report, "acme/ranged", "requires")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("2.0.0") })
  })

  it("flags an invalid installed manifest, and a missing folder", async () => {
    const own = temp("host-root-")
    const folder = writeExtension(temp("host-src-"), { id: "acme/plain", version: "1.0.0" })
    await add(own, folder)
    appendFileSync(join(own, "host", "extensions", "acme", "plain", "extension.yaml"), "frontend:\n  bundle: /etc/passwd\n")
    const { report: edited } = await doctor(own)
    expect(checkOf(edited, "acme/plain", "manifest")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("frontend.bundle") })
    expect(checkOf(edited, "acme/plain", "drift")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("extension.yaml") })

    rmSync(join(own, "host", "extensions", "acme", "plain"), { recursive: true })
    const { report: gone } = await doctor(own)
    expect(checkOf(gone, "acme/plain", "manifest")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("is missing") })
    expect(checkOf(gone, "acme/plain", "drift")).toMatchObject({ verdict: "fail", evidence: "the extension's folder is missing" })
  })
})

describe("host doctor with a real panel", () => {
  const servers: Array<Server> = []
  afterEach(() => servers.splice(0).forEach((server) => server.close()))

  /** The panel's web server as a stand-in: Host's ready JSON when /host/ reaches Host, else the panel's 404 page. */
  const webServer = async (routesHost: boolean) => {
    const server = createServer((request, response) => {
      if (routesHost && request.url === "/host/ready") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok", generation: 3, unavailable: [] }))
      } else {
        response.writeHead(404, { "content-type": "text/html; charset=UTF-8" }).end("<!doctype html><title>Pterodactyl</title><h1>404</h1>")
      }
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** A Pterodactyl folder (test/support/panel-folders.ts), with Host's block in its scripts view as panel:install writes it. */
  const panelRoot = (withHostBlock: boolean) => {
    const folder = writePanelFolder(temp("pterodactyl-"), "pterodactyl-1.11")
    if (withHostBlock) writeFileSync(join(folder, pterodactylInclude), withBlock(stockScriptsBlade))
    return folder
  }

  const configure = (root: string, url: string, panel: string) => {
    mkdirSync(join(root, "config"), { recursive: true })
    writeFileSync(join(root, "config", "host.yaml"), `panel:\n  driver: pterodactyl\n  url: ${url}\n  root: ${panel}\n`)
  }

  it("fails without the include and when /host/ goes to the panel, passes with both", async () => {
    const root = temp("host-root-")
    configure(root, await webServer(false), panelRoot(false))
    const broken = await doctor(root)
    expect(broken.run.code).toBe(1)
    expect(checkOf(broken.report, "host", "panel-include")).toMatchObject({ verdict: "fail", fix: expect.stringContaining("host panel:install") })
    expect(checkOf(broken.report, "host", "panel-routing")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringMatching(/\/host\/ready answered 404 text\/html, not Host's ready JSON/)
    })

    configure(root, await webServer(true), panelRoot(true))
    const fixed = await doctor(root)
    expect(fixed.run.code, fixed.run.stdout).toBe(0)
    expect(checkOf(fixed.report, "host", "panel-include").verdict).toBe("ok")
    expect(checkOf(fixed.report, "host", "panel-routing")).toMatchObject({ verdict: "ok", evidence: expect.stringContaining("(ok, generation 3)") })
  })

  it("checks Pelican's plugin folder", async () => {
    const root = temp("host-root-")
    const pelican = writePanelFolder(temp("pelican-"), "pelican")
    const url = await webServer(true)
    mkdirSync(join(root, "config"), { recursive: true })
    writeFileSync(join(root, "config", "host.yaml"), `panel:\n  driver: pelican\n  url: ${url}\n  root: ${pelican}\n`)
    expect(checkOf((await doctor(root)).report, "host", "panel-include")).toMatchObject({
      verdict: "fail",
      evidence: expect.stringContaining(`${join(pelican, "plugins", "host")}: absent`),
      fix: expect.stringContaining("host panel:install")
    })
    const installed = await runHost(["--root", root, "panel:install"])
    expect(installed.code, installed.stderr).toBe(0)
    expect(checkOf((await doctor(root)).report, "host", "panel-include").verdict).toBe("ok")
    // A plugin file changed by hand is what panel:status calls modified: the doctor fails it too.
    writeFileSync(join(pelican, "plugins", "host", "src", "HostPlugin.php"), "<?php // edited\n")
    expect(checkOf((await doctor(root)).report, "host", "panel-include")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining("modified") })
  })

  it("fails the routing check when nothing answers at panel.url", async () => {
    const root = temp("host-root-")
    const url = await webServer(false)
    await new Promise((resolve) => servers.pop()!.close(resolve))
    configure(root, url, panelRoot(true))
    const { report } = await doctor(root)
    expect(checkOf(report, "host", "panel-routing")).toMatchObject({ verdict: "fail", evidence: expect.stringContaining(`GET ${url}/host/ready: `) })
  })
})

describe("host doctor: trusted proxies", () => {
  const withConfig = (yaml: string) => {
    const root = temp("host-root-")
    writePanelConfig(root)
    writeFileSync(join(root, "config", "host.yaml"), yaml)
    return root
  }
  const proxiesCheck = (report: Report) =>
    report.sections.find((section) => section.subject === "host")?.checks.find((check) => check.id === "trusted-proxies")

  it("warns when trusted_proxies names addresses not on this machine while base_url is unset", async () => {
    const root = withConfig("trusted_proxies: [127.0.0.1, 127.0.0.0/8, '::1', 10.1.2.3, 192.168.0.0/16]\n")
    const { run, report } = await doctor(root)
    expect(run.code).toBe(0)
    expect(proxiesCheck(report)).toEqual({
      id: "trusted-proxies",
      verdict: "warning",
      evidence: expect.stringContaining("trusted_proxies lists 10.1.2.3, 192.168.0.0/16, not on this machine, and base_url is not set"),
      fix: expect.stringContaining("set base_url in config/host.yaml")
    })
    // Set in the file or by HOST_BASE_URL, base_url decides the origin: nothing to warn about.
    const fixed = withConfig("base_url: https://panel.example.test\ntrusted_proxies: [10.1.2.3]\n")
    expect(proxiesCheck((await doctor(fixed)).report)).toBeUndefined()
    const byEnv = await runHost(["doctor", "--json", "--root", root], { env: { HOST_BASE_URL: "https://panel.example.test" } })
    expect(proxiesCheck(JSON.parse(byEnv.stdout) as Report)).toBeUndefined()
  })

  it("says nothing when every trusted proxy is on this machine (loopback, or an address of its interfaces)", async () => {
    const { networkInterfaces } = await import("node:os")
    const own = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []).find((entry) => entry.family === "IPv4" && !entry.internal)
    const root = withConfig(`trusted_proxies: [127.0.0.0/8, '::1'${own === undefined ? "" : `, ${own.address}`}]\n`)
    const { report } = await doctor(root)
    expect(proxiesCheck(report)).toBeUndefined()
  })
})
