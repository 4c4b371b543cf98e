import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { stockScriptsBlade, writePanelFolder } from "../support/panel-folders.js"
import { startServer } from "../http/helpers.js"
import { itWithPrograms } from "../support/programs.js"
import { eventually } from "../support/wait.js"

// `host panel:install`, `panel:uninstall`, `panel:status` and serve's self-heal against panel folders
// shaped like Pterodactyl 1.11 / 1.12 and Pelican releases (docs/panels.md).

const temp = tempDirsPerTest()
const include = "resources/views/layouts/scripts.blade.php"

/** Every file under `root` with its content, to prove a run wrote nothing. */
const snapshot = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name)
      if (statSync(full).isDirectory()) walk(full)
      else out[full.slice(root.length)] = readFileSync(full, "utf8")
    }
  }
  walk(root)
  return out
}

const setup = (kind: "pterodactyl-1.11" | "pterodactyl-1.12" | "pelican", appName?: string) => {
  const host = temp("host-root-")
  const panel = writePanelFolder(temp("panel-"), kind, appName === undefined ? {} : { appName })
  return { host, panel }
}

const json = (stdout: string) => JSON.parse(stdout) as Record<string, any>

describe("panel detection", () => {
  it.each([
    ["pterodactyl-1.11", "pterodactyl", "1.11.8", "Pterodactyl"],
    ["pterodactyl-1.12", "pterodactyl", "1.12.0", "Pterodactyl"],
    ["pelican", "pelican", "1.0.0-beta21", "Pelican"]
  ] as const)("recognises %s", async (fixture, kind, version, name) => {
    const { host, panel } = setup(fixture)
    const run = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--dry-run", "--json"])
    expect(run.code, run.stderr).toBe(0)
    expect(json(run.stdout).panel).toEqual({ kind, version, name, root: panel })
  })

  it("refuses a folder that is neither panel, naming what it looked for, and writes nothing", async () => {
    const host = temp("host-root-")
    const folder = temp("not-panel-")
    writeFileSync(join(folder, "index.php"), "<?php echo 'hi';\n")
    mkdirSync(join(folder, "config"))
    writeFileSync(join(folder, "config", "app.php"), "<?php return ['version' => '2.0'];\n")
    const before = snapshot(folder)
    const hostBefore = snapshot(host)
    const run = await runHost(["--root", host, "panel:install", "--panel-root", folder])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`${folder} is not a Pterodactyl or Pelican panel folder`)
    expect(run.stderr).toContain("resources/views/layouts/scripts.blade.php")
    expect(run.stderr).toContain("filament/filament")
    expect(snapshot(folder)).toEqual(before)
    expect(snapshot(host)).toEqual(hostBefore)
  })

  it("without --panel-root or panel.root names both", async () => {
    const host = temp("host-root-")
    const run = await runHost(["--root", host, "panel:install"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("--panel-root")
    expect(run.stderr).toContain("panel.root")
    expect(run.stderr).toContain("HOST_PANEL_ROOT")
  })
})

describe("Pterodactyl", () => {
  it("appends one marked block, keeps the rest byte-identical, is idempotent, and uninstall restores the file", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    const file = join(panel, include)
    const first = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"])
    expect(first.code, first.stderr).toBe(0)
    const text = readFileSync(file, "utf8")
    expect(text.startsWith(stockScriptsBlade)).toBe(true)
    expect(text.slice(stockScriptsBlade.length)).toMatch(/^\{\{-- host:begin[^\n]*--\}\}\n<script src="\/host\/boot\.js" defer><\/script>\n\{\{-- host:end --\}\}\n$/)
    // No artisan in the fixture: the command is printed for the operator.
    expect(first.stdout).toContain(`Now run in ${panel}: php artisan view:clear`)
    expect(first.stdout).toContain(`include ${join(host, "storage/host/webserver/nginx.conf")};`)

    const before = snapshot(panel)
    const second = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx", "--json"])
    expect(second.code, second.stderr).toBe(0)
    const doc = json(second.stdout)
    expect(doc.changes.map((c: { action: string }) => c.action)).toEqual(["unchanged", "unchanged"])
    expect(doc.commands).toEqual([])
    expect(doc.snippet).toMatchObject({ kind: "nginx", path: join(host, "storage/host/webserver/nginx.conf") })
    expect(doc.dryRun).toBe(false)
    expect(snapshot(panel)).toEqual(before)
    const third = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"])
    expect(third.stdout).toContain("Nothing changed: Host is already installed.")

    const removed = await runHost(["--root", host, "panel:uninstall", "--panel-root", panel])
    expect(removed.code, removed.stderr).toBe(0)
    expect(readFileSync(file, "utf8")).toBe(stockScriptsBlade)
    expect(removed.stdout).toContain("php artisan view:clear")
    const again = await runHost(["--root", host, "panel:uninstall", "--panel-root", panel])
    expect(again.stdout).toContain("Nothing to remove")
  })

  it("restores a file without a final newline byte for byte", async () => {
    const { host, panel } = setup("pterodactyl-1.12")
    const file = join(panel, include)
    const original = "{{-- a theme's own line --}}\n<link rel=\"stylesheet\" href=\"/theme.css\">"
    writeFileSync(file, original)
    expect((await runHost(["--root", host, "panel:install", "--panel-root", panel])).code).toBe(0)
    expect(readFileSync(file, "utf8").startsWith(`${original}\n{{-- host:begin`)).toBe(true)
    expect((await runHost(["--root", host, "panel:uninstall", "--panel-root", panel])).code).toBe(0)
    expect(readFileSync(file, "utf8")).toBe(original)
  })

  it("a block whose content was changed is reported as modified and rewritten by the next install", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    const file = join(panel, include)
    expect((await runHost(["--root", host, "panel:install", "--panel-root", panel])).code).toBe(0)
    const installed = readFileSync(file, "utf8")
    writeFileSync(file, installed.replace("/host/boot.js", "/host/other.js"))
    const status = json((await runHost(["--root", host, "panel:status", "--panel-root", panel, "--json"])).stdout)
    expect(status.include).toMatchObject({ state: "modified", detail: "the block's content differs from what Host writes" })
    const run = json((await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])).stdout)
    expect(run.changes[0]).toEqual({ path: file, action: "update", writable: true })
    expect(readFileSync(file, "utf8")).toBe(installed)
  })

  it("--dry-run prints a unified diff and writes nothing", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    const before = snapshot(panel)
    const run = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "caddy", "--dry-run"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`--- a${join(panel, include)}`)
    expect(run.stdout).toContain(`+++ b${join(panel, include)}`)
    expect(run.stdout).toContain("@@ -1,1 +1,4 @@")
    expect(run.stdout).toContain(" {{-- Just here as a binder for dynamically rendered content. --}}")
    expect(run.stdout).toContain('+<script src="/host/boot.js" defer></script>')
    expect(run.stdout).toContain(`+++ b${join(host, "storage/host/webserver/caddy.conf")}`)
    expect(run.stdout).toContain("+    reverse_proxy 127.0.0.1:")
    expect(run.stdout).toContain("Would then run in")
    expect(snapshot(panel)).toEqual(before)
    expect(existsSync(join(host, "storage/host/webserver"))).toBe(false)
  })

  it.each([
    ["begin without end", "{{-- host:begin: added by `host panel:install` --}}\n<script src=\"/host/boot.js\" defer></script>\n", 2, "host:begin without host:end"],
    ["end without begin", "<script></script>\n{{-- host:end --}}\n", 3, "host:end without host:begin"]
  ])("refuses tampered markers (%s), naming the file and line, and writes nothing", async (_name, tail, line, reason) => {
    const { host, panel } = setup("pterodactyl-1.11")
    const file = join(panel, include)
    writeFileSync(file, stockScriptsBlade + tail)
    const before = snapshot(panel)
    for (const command of ["panel:install", "panel:uninstall"]) {
      const run = await runHost(["--root", host, command, "--panel-root", panel])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`${file}:${line}: ${reason}`)
      expect(snapshot(panel)).toEqual(before)
    }
    const status = await runHost(["--root", host, "panel:status", "--panel-root", panel, "--json"])
    expect(json(status.stdout).include).toMatchObject({ state: "tampered", detail: `line ${line}: ${reason}` })
  })

  itWithPrograms(["nginx"], "writes nginx, caddy and apache snippets; nginx accepts its snippet (nginx -t)", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    for (const kind of ["nginx", "caddy", "apache"]) {
      const run = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", kind, "--json"])
      expect(run.code, run.stderr).toBe(0)
      expect(json(run.stdout).snippet.path).toBe(join(host, `storage/host/webserver/${kind}.conf`))
    }
    const nginx = readFileSync(join(host, "storage/host/webserver/nginx.conf"), "utf8")
    for (const prefix of ["/host/", "/api/client/host/", "/admin/host/", "/api/client/host/events"]) expect(nginx).toContain(`location ^~ ${prefix} {`)
    expect(nginx).toContain("proxy_pass http://127.0.0.1:8080;")
    expect(nginx).toContain("proxy_buffering off;")
    const caddy = readFileSync(join(host, "storage/host/webserver/caddy.conf"), "utf8")
    expect(caddy).toContain("handle /api/client/host/* {")
    expect(caddy).toContain("flush_interval -1")
    const apache = readFileSync(join(host, "storage/host/webserver/apache.conf"), "utf8")
    expect(apache).toContain("ProxyPass /admin/host/ http://127.0.0.1:8080/admin/host/")
    expect(apache).toContain("ProxyPassReverse /host/ http://127.0.0.1:8080/host/")
    // The real nginx parses the snippet inside a panel-like server block (CI installs nginx-light).
    const conf = temp("nginx-")
    writeFileSync(join(conf, "nginx.conf"), `pid ${conf}/nginx.pid;\nerror_log ${conf}/error.log;\nevents {}\nhttp {\n  access_log off;\n  server {\n    listen 127.0.0.1:18080;\n    root /var/www/pterodactyl/public;\n    include ${join(host, "storage/host/webserver/nginx.conf")};\n    location / { try_files $uri $uri/ /index.php?$query_string; }\n    location ~ \\.php$ { return 404; }\n  }\n}\n`)
    const output = execFileSync("nginx", ["-t", "-p", conf, "-c", join(conf, "nginx.conf")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    expect(output).toBe("")
  })
})

describe("Pelican", () => {
  it("writes plugins/host with the extension permissions, is idempotent, and uninstall removes the folder only", async () => {
    const { host, panel } = setup("pelican")
    const before = snapshot(panel)
    const run = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])
    expect(run.code, run.stderr).toBe(0)
    const doc = json(run.stdout)
    const folder = join(panel, "plugins", "host")
    const pluginFiles = [
      "plugin.json",
      "src/HostPlugin.php",
      "src/Providers/HostPluginProvider.php",
      // The extension-page outlets (docs/panels.md "Extension pages under a real panel").
      "src/Pages/ExtensionPage.php",
      "src/Pages/DashboardExtensionPage.php",
      "src/Pages/AccountExtensionPage.php",
      "src/Pages/ServerExtensionPage.php",
      "resources/views/extension-page.blade.php",
      // The subuser form's labels for Host's permission groups, read from permissions.json.
      "lang/en/permissions.php",
      "permissions.json",
      // One navigation item per extension page (docs/panels.md "Installing into Pelican").
      "navigation.json"
    ]
    expect(doc.changes.slice(0, pluginFiles.length)).toEqual(pluginFiles.map((file) => ({ path: join(folder, file), action: "create", writable: true })))
    expect(doc.changes).toHaveLength(pluginFiles.length + 1)
    expect(doc.commands).toEqual([{ command: "php artisan p:plugin:install host --no-interaction", ran: false, exitCode: null, output: "" }])
    const plugin = JSON.parse(readFileSync(join(folder, "plugin.json"), "utf8"))
    expect(plugin).toMatchObject({ id: "host", namespace: "Host\\PelicanPlugin", class: "HostPlugin", category: "plugin", panels: ["admin", "app", "server"] })
    // No meta: Pelican sees the plugin as "not installed", which `p:plugin:install host` requires.
    expect(plugin.meta).toBeUndefined()
    // Pelican records the plugin's status in plugin.json itself: that is not a change to undo.
    writeFileSync(join(folder, "plugin.json"), JSON.stringify({ ...plugin, meta: { status: "enabled", status_message: null, load_order: 0 } }, null, 4))
    const second = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])
    expect(json(second.stdout).changes.map((c: { action: string }) => c.action)).toEqual([...pluginFiles, "snippet"].map(() => "unchanged"))
    const status = await runHost(["--root", host, "panel:status", "--panel-root", panel, "--json"])
    expect(json(status.stdout).include).toMatchObject({ kind: "plugin", state: "intact" })

    const removed = await runHost(["--root", host, "panel:uninstall", "--panel-root", panel])
    expect(removed.code, removed.stderr).toBe(0)
    expect(snapshot(panel)).toEqual(before)
    expect(existsSync(join(panel, "plugins"))).toBe(true)
  })

  it("leaves a plugins/host that is not Host's alone", async () => {
    const { host, panel } = setup("pelican")
    mkdirSync(join(panel, "plugins", "host"), { recursive: true })
    writeFileSync(join(panel, "plugins", "host", "plugin.json"), JSON.stringify({ id: "someone-else" }))
    const before = snapshot(panel)
    const run = await runHost(["--root", host, "panel:uninstall", "--panel-root", panel])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("is not Host's plugin")
    expect(snapshot(panel)).toEqual(before)
  })
})

describe("panel:status and host status", () => {
  let panelServer: Server | undefined
  afterEach(() => {
    panelServer?.close()
    panelServer = undefined
  })

  it("shows driver, panel, include state, whether the panel answers, snippet and counters", async () => {
    const { host, panel } = setup("pterodactyl-1.11", "\"Game Panel\"")
    // A stand-in for the panel's client API: without credentials /api/client/account is a 401 JSON error.
    panelServer = createServer((request, response) => {
      if (request.url === "/api/client/account") {
        response.writeHead(401, { "content-type": "application/json" })
        response.end(JSON.stringify({ errors: [{ code: "AuthenticationException", status: "401", detail: "Unauthenticated." }] }))
      } else {
        response.writeHead(404).end()
      }
    })
    await new Promise<void>((resolve) => panelServer!.listen(0, "127.0.0.1", resolve))
    const panelUrl = `http://127.0.0.1:${(panelServer.address() as AddressInfo).port}`
    const env = { HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: panelUrl, HOST_PANEL_ROOT: panel }
    expect((await runHost(["--root", host, "panel:install", "--web-server", "nginx"], { env })).code).toBe(0)
    mkdirSync(join(host, "storage", "host"), { recursive: true })
    writeFileSync(join(host, "storage/host/panel-status.json"), JSON.stringify({
      updatedAt: "2026-11-25T07:00:00.000Z",
      selfHeal: { enabled: true, checks: 4, heals: 1, lastCheckAt: "2026-11-25T07:00:00.000Z", lastHealAt: "2026-11-25T06:55:00.000Z", lastState: "intact", lastError: null }
    }))
    // The driver's identity-cache counters, as the server writes them (test/http/real-panel.test.ts runs a real one).
    mkdirSync(join(host, "storage", "host", "replica"), { recursive: true })
    writeFileSync(join(host, "storage/host/replica/panel.json"), JSON.stringify({
      pid: 1, driver: "pterodactyl", identity_cache: { hits: 10, misses: 2, panel_requests: 3 }, updated_at: "2026-11-25T07:00:00.000Z"
    }))
    const text = await runHost(["--root", host, "panel:status"], { env })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/Driver:\s+pterodactyl/)
    expect(text.stdout).toContain(`Pterodactyl 1.11.8 ("Game Panel") at ${panel}`)
    expect(text.stdout).toMatch(/Include:\s+intact: .*scripts\.blade\.php/)
    expect(text.stdout).toMatch(/Answers:\s+yes: .*\/api\/client\/account, 401 JSON/)
    expect(text.stdout).toContain(join(host, "storage/host/webserver/nginx.conf"))
    expect(text.stdout).toContain("1 heal(s), last 2026-11-25T06:55:00.000Z; 4 check(s)")
    expect(text.stdout).toContain("10 hit(s), 2 miss(es), 3 panel request(s)")
    const doc = json((await runHost(["--root", host, "panel:status", "--json"], { env })).stdout)
    expect(doc).toMatchObject({
      driver: "pterodactyl",
      panel: { kind: "pterodactyl", version: "1.11.8", name: "Game Panel", root: panel },
      include: { kind: "block", state: "intact" },
      answers: { answers: true, status: 401 },
      snippets: [join(host, "storage/host/webserver/nginx.conf")],
      selfHeal: { heals: 1, checks: 4 },
      identityCache: { hits: 10, misses: 2, panelRequests: 3 }
    })
    // The block taken out by hand: status says so.
    writeFileSync(join(panel, include), stockScriptsBlade)
    const gone = json((await runHost(["--root", host, "panel:status", "--json"], { env })).stdout)
    expect(gone.include.state).toBe("absent")
    // host status has the same part.
    const all = await runHost(["--root", host, "status", "--json"], { env })
    expect(all.code, all.stderr).toBe(0)
    expect(json(all.stdout).panel).toMatchObject({ driver: "pterodactyl", include: { state: "absent" }, answers: { answers: true } })
    const allText = await runHost(["--root", host, "status"], { env })
    expect(allText.stdout).toMatch(/Panel:\n\s+Driver:\s+pterodactyl/)
    expect(allText.stdout).toMatch(/Include:\s+absent/)
  })

  it("a panel that does not answer is reported as such", async () => {
    const { host, panel } = setup("pelican")
    panelServer = createServer((_request, response) => response.writeHead(200, { "content-type": "text/html" }).end("<html></html>"))
    await new Promise<void>((resolve) => panelServer!.listen(0, "127.0.0.1", resolve))
    const env = { HOST_PANEL_DRIVER: "pelican", HOST_PANEL_URL: `http://127.0.0.1:${(panelServer.address() as AddressInfo).port}`, HOST_PANEL_ROOT: panel }
    const doc = json((await runHost(["--root", host, "panel:status", "--json"], { env })).stdout)
    expect(doc.answers).toMatchObject({ answers: false, status: 200 })
    expect(doc.include).toMatchObject({ kind: "plugin", state: "absent" })
  })
})

describe("self-heal in host serve", () => {
  it("puts the block back after a panel upgrade overwrote the file, and counts it", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    const env = {
      HOST_PANEL_DRIVER: "pterodactyl",
      HOST_PANEL_URL: "http://127.0.0.1:9",
      HOST_PANEL_ROOT: panel,
      HOST_DEBUG: JSON.stringify({ panel_heal_ms: 100 })
    }
    expect((await runHost(["--root", host, "panel:install"], { env })).code).toBe(0)
    const installed = readFileSync(join(panel, include), "utf8")
    // What another writer put into the same file stays there.
    const statusFile = join(host, "storage/host/panel-status.json")
    writeFileSync(statusFile, JSON.stringify({ updatedAt: "2026-11-25T06:00:00.000Z", driverNote: { kept: true } }))
    const server = await startServer(host, { env })
    try {
      await eventually(() => existsSync(statusFile) ? JSON.parse(readFileSync(statusFile, "utf8")) : null, (s) => s?.selfHeal?.checks >= 1, { what: "a first check" })
      // The upgrade's tarball replaces the file with the stock one.
      writeFileSync(join(panel, include), stockScriptsBlade)
      await eventually(() => readFileSync(join(panel, include), "utf8"), (text) => text === installed, { what: "the block back" })
      const report = await eventually(() => JSON.parse(readFileSync(statusFile, "utf8")), (s) => s.selfHeal.heals === 1, { what: "the heal counted" })
      expect(report.selfHeal.lastHealAt).not.toBeNull()
      expect(report.driverNote).toEqual({ kept: true })
      expect(server.stderr()).toContain("Host's include was missing or changed")
    } finally {
      await server.stop()
    }
  })

  it("puts the Pelican plugin folder back, and refreshes permissions.json without counting a heal", async () => {
    const { host, panel } = setup("pelican")
    const env = { HOST_PANEL_DRIVER: "pelican", HOST_PANEL_URL: "http://127.0.0.1:9", HOST_PANEL_ROOT: panel, HOST_DEBUG: JSON.stringify({ panel_heal_ms: 100 }) }
    expect((await runHost(["--root", host, "panel:install"], { env })).code).toBe(0)
    const provider = join(panel, "plugins/host/src/Providers/HostPluginProvider.php")
    const installed = readFileSync(provider, "utf8")
    const server = await startServer(host, { env })
    try {
      const statusFile = join(host, "storage/host/panel-status.json")
      await eventually(() => existsSync(statusFile) ? JSON.parse(readFileSync(statusFile, "utf8")) : null, (s) => s?.selfHeal?.checks >= 1, { what: "a first check" })
      // A new extension's permissions reach the plugin's permissions.json: a refresh, not a heal.
      // The fixture asks for Pterodactyl's ^1.11; under the Pelican driver the panel's own version (1.0.0-beta…) decides.
      const extension = join(host, "..", "full-for-pelican")
      cpSync(fixture("extensions", "full"), extension, { recursive: true })
      writeFileSync(join(extension, "extension.yaml"), readFileSync(join(extension, "extension.yaml"), "utf8").replace("  panel: ^1.11\n", "  panel: ^1.0.0-beta\n"))
      const added = await runHost(["--root", host, "add", extension, "--disabled"], { env })
      expect(added.code, added.stderr).toBe(0)
      const permissions = join(panel, "plugins/host/permissions.json")
      await eventually(() => JSON.parse(readFileSync(permissions, "utf8")).permissions, (list) => list.includes("host_acme_full.full-view"), { what: "permissions.json refreshed" })
      // The check that wrote it has recorded itself once a later check has.
      const seen = JSON.parse(readFileSync(statusFile, "utf8")).selfHeal.checks
      const refreshed = await eventually(() => JSON.parse(readFileSync(statusFile, "utf8")), (s) => s.selfHeal.checks > seen, { what: "a later check" })
      expect(refreshed.selfHeal.heals).toBe(0)
      rmSync(join(panel, "plugins", "host"), { recursive: true })
      await eventually(() => existsSync(provider) ? readFileSync(provider, "utf8") : "", (text) => text === installed, { what: "the plugin back" })
      await eventually(() => JSON.parse(readFileSync(statusFile, "utf8")), (s) => s.selfHeal.heals === 1, { what: "the heal counted" })
      // No artisan command runs in the server: the folder comes back enabled, as p:plugin:install leaves it.
      expect(JSON.parse(readFileSync(join(panel, "plugins/host/plugin.json"), "utf8")).meta).toEqual({ status: "enabled", status_message: null, load_order: 0 })
    } finally {
      await server.stop()
    }
  })

  it("with panel.self_heal false never writes", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    mkdirSync(join(host, "config"), { recursive: true })
    writeFileSync(join(host, "config", "host.yaml"), `panel:\n  driver: pterodactyl\n  url: http://127.0.0.1:9\n  root: ${panel}\n  self_heal: false\n`)
    // A second server with self-heal on and the same interval is the clock: once it has healed its own
    // panel three times, the first server has had as many chances to write.
    const witness = setup("pterodactyl-1.11")
    const debug = { HOST_DEBUG: JSON.stringify({ panel_heal_ms: 50 }) }
    const witnessEnv = { ...debug, HOST_PANEL_DRIVER: "pterodactyl", HOST_PANEL_URL: "http://127.0.0.1:9", HOST_PANEL_ROOT: witness.panel }
    const server = await startServer(host, { env: debug })
    const clock = await startServer(witness.host, { env: witnessEnv })
    try {
      const witnessFile = join(witness.host, "storage/host/panel-status.json")
      for (let heal = 1; heal <= 3; heal++) {
        writeFileSync(join(witness.panel, include), stockScriptsBlade)
        await eventually(() => existsSync(witnessFile) ? JSON.parse(readFileSync(witnessFile, "utf8")) : null, (s) => s?.selfHeal?.heals >= heal, { what: `witness heal ${heal}` })
      }
      expect(readFileSync(join(panel, include), "utf8")).toBe(stockScriptsBlade)
      expect(existsSync(join(host, "storage/host/panel-status.json"))).toBe(false)
    } finally {
      await Promise.all([server.stop(), clock.stop()])
    }
  })
})
