import { spawn, spawnSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { hostBin, repoRoot, runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms } from "../support/programs.js"
import { startPelicanStandIn } from "../support/pelican-api.js"
import { machines, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { eventually } from "../support/wait.js"
import { freePort, panelSite, type Running, startHostServe, startNginxAt, treeHash, writeNginxEtc } from "./support.js"

// `host setup` and `host setup --remove` (DESIGN §22, docs/panels.md "Five minutes") against a stand-in
// panel folder, a real nginx of the test's own (its configuration under a folder standing for /etc,
// HOST_SETUP_ETC), the Pterodactyl stand-in API behind it, and `host serve` started by the test once setup
// has written the unit (systemd does not run here).

const temp = tempDirsPerTest()
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

interface Scene {
  readonly host: string
  readonly panel: string
  readonly etc: string
  readonly site: string
  readonly nginxPort: number
  readonly hostPort: number
  readonly env: Record<string, string>
}

const scene = async (
  options: { readonly siteExtra?: string; readonly appUrl?: string | null; readonly start?: boolean; readonly kind?: "pterodactyl-1.11" | "pelican" } = {}
): Promise<Scene> => {
  const host = temp("setup-host-")
  const panel = writePanelFolder(temp("setup-panel-"), options.kind ?? "pterodactyl-1.11")
  mkdirSync(join(panel, "public"), { recursive: true })
  const standIn = options.kind === "pelican" ? await startPelicanStandIn({ users: people, servers: machines }) : await startPanelStandIn({ users: people, servers: machines })
  stops.push(standIn.close)
  const nginxPort = await freePort()
  const hostPort = await freePort()
  const appUrl = options.appUrl === undefined ? `http://127.0.0.1:${nginxPort}` : options.appUrl
  writeFileSync(join(panel, ".env"), `APP_ENV=production\nAPP_NAME=${options.kind === "pelican" ? "Pelican" : "Pterodactyl"}\n${appUrl === null ? "" : `APP_URL=${appUrl}\n`}`)
  const etc = temp("setup-etc-")
  const { conf, site } = writeNginxEtc(etc, panelSite(nginxPort, panel, standIn.url, options.siteExtra))
  if (options.start !== false) {
    const nginx = await startNginxAt(conf, nginxPort)
    stops.push(nginx.stop)
  }
  return { host, panel, etc, site, nginxPort, hostPort, env: { HOST_SETUP_ETC: etc } }
}

/** Runs setup; once it has written the unit, starts `host serve` as systemd would (it does not run here). */
const setupWithServe = async (s: Scene, args: ReadonlyArray<string>) => {
  const unit = join(s.etc, "systemd", "system", "host.service")
  let serve: Running | undefined
  let stopped = false
  const run = runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), ...args], { env: s.env })
  const watcher = (async () => {
    await eventually(() => stopped || existsSync(unit), (seen) => seen, { ms: 60_000, what: "the unit written" })
    if (!stopped) {
      serve = await startHostServe(s.host, s.hostPort)
      stops.push(serve.stop)
    }
  })()
  const result = await run
  stopped = true
  await watcher
  return { result, serve }
}

const stepsOf = (stdout: string) => (JSON.parse(stdout) as { steps: Array<{ id: string; action: string; path?: string; output?: string }> }).steps

describeWithPrograms(["nginx", "systemd-analyze"], "host setup with a real nginx", () => {
  it("sets Host up through nginx, is idempotent, and --remove leaves every file outside Host's root byte-identical", async () => {
    const s = await scene()
    const before = { panel: treeHash(s.panel), etc: treeHash(s.etc) }
    const { result } = await setupWithServe(s, [])
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    // Each step printed, in order, with its action.
    expect(lines.filter((l) => /^\[\d\/6\]/.test(l)).map((l) => l.split(/\s+/).slice(0, 3).join(" "))).toEqual([
      "[1/6] panel unchanged",
      "[2/6] config create",
      "[3/6] include update",
      "[4/6] webserver update",
      "[5/6] service create",
      "[6/6] check unchanged"
    ])
    expect(lines.at(-1)).toBe(`Host's admin screens: http://127.0.0.1:${s.nginxPort}/admin/host/`)

    // config/host.yaml holds setup's keys; the site has one marked include; nginx routes Host's prefixes.
    const config = readFileSync(join(s.host, "config", "host.yaml"), "utf8")
    expect(config).toContain("driver: pterodactyl")
    expect(config).toContain(`base_url: http://127.0.0.1:${s.nginxPort}`)
    expect(config).toContain(`port: ${s.hostPort}`)
    const site = readFileSync(s.site, "utf8")
    expect(site.match(/# host:begin/g)).toHaveLength(1)
    expect(site).toContain(`include ${join(s.host, "storage/host/webserver/nginx.conf")};`)
    expect(statSync(join(s.etc, "nginx", "sites-enabled", "pterodactyl.conf")).isFile()).toBe(true)
    expect(readdirSync(join(s.etc, "nginx", "sites-enabled"))).toEqual(["pterodactyl.conf"])
    const through = await fetch(`http://127.0.0.1:${s.nginxPort}/host/ready`)
    expect(through.status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${s.nginxPort}/api/client/account`)).status).toBe(401) // the stand-in panel

    // The unit, checked by systemd's own verifier.
    const unitFile = join(s.etc, "systemd", "system", "host.service")
    const unit = readFileSync(unitFile, "utf8")
    expect(unit).toContain(`ExecStart=${process.execPath} ${join(repoRoot, "bin", "host.js")} serve --root ${s.host}`)
    expect(unit).toContain("Restart=on-failure")
    expect(unit).toContain("After=network-online.target")
    const verify = spawnSync("systemd-analyze", ["verify", unitFile], { encoding: "utf8" })
    expect(verify.status, verify.stderr).toBe(0)
    expect(verify.stderr.split("\n").filter((l) => l.includes("host.service"))).toEqual([])
    // systemd does not run here: the unit is written and the two commands are printed.
    expect(result.stdout).toContain("systemctl daemon-reload")
    expect(result.stdout).toContain("systemctl enable --now host")

    // A second run: every step unchanged.
    const again = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--json"], { env: s.env })
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0)
    const json = JSON.parse(again.stdout) as { steps: Array<{ id: string; action: string }>; admin_url: string; dry_run: boolean }
    expect(json.steps.map((step) => `${step.id} ${step.action}`)).toEqual([
      "panel unchanged",
      "config unchanged",
      "include unchanged",
      "webserver unchanged",
      "service unchanged",
      "check unchanged"
    ])
    expect(json.admin_url).toBe(`http://127.0.0.1:${s.nginxPort}/admin/host/`)
    expect(json.dry_run).toBe(false)

    // --remove: in reverse; every file outside Host's root as it was; Host's root and config stay.
    const removed = await runHost(["--root", s.host, "setup", "--remove", "--json"], { env: s.env })
    expect(removed.code, `${removed.stdout}\n${removed.stderr}`).toBe(0)
    expect(stepsOf(removed.stdout).map((step) => `${step.id} ${step.action}`)).toEqual(["service remove", "webserver remove", "include remove"])
    expect(treeHash(s.panel)).toEqual(before.panel)
    // (nginx's own pid, log and temporary files aside)
    expect(pick(treeHash(s.etc), (key) => !key.startsWith("nginx/run/"))).toEqual(pick(before.etc, (key) => !key.startsWith("nginx/run/")))
    expect(existsSync(join(s.host, "config", "host.yaml"))).toBe(true)
    expect(existsSync(join(s.host, "storage", "host", "setup.json"))).toBe(false)
    // nginx was reloaded without the include: Host's prefixes go to the (stand-in) panel again.
    await eventually(() => fetch(`http://127.0.0.1:${s.nginxPort}/host/ready`).then((r) => r.text()), (body) => !body.includes("generation"), { what: "nginx reloaded" })
    const check = spawnSync("nginx", ["-t", "-c", join(s.etc, "nginx", "nginx.conf"), "-e", "stderr"], { encoding: "utf8" })
    expect(check.status, check.stderr).toBe(0)
  }, 120_000)

  it("sets Host up in a Pelican panel (its plugin folder) and --remove takes the folder away again", async () => {
    const s = await scene({ kind: "pelican" })
    const before = { panel: treeHash(s.panel), etc: treeHash(s.etc) }
    // Its dry run opens no database (there is none yet) and writes nothing either.
    const hostBefore = treeHash(s.host)
    const dry = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--dry-run"], { env: s.env })
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain("plugins/host/plugin.json")
    expect({ host: treeHash(s.host), panel: treeHash(s.panel), etc: treeHash(s.etc) }).toEqual({ host: hostBefore, ...before })
    const { result } = await setupWithServe(s, ["--json"])
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    const steps = stepsOf(result.stdout)
    expect(steps.map((step) => `${step.id} ${step.action}`)).toEqual([
      "panel unchanged",
      "config create",
      "include create",
      "webserver update",
      "service create",
      "check unchanged"
    ])
    expect(steps.find((step) => step.id === "include")?.path).toBe(join(s.panel, "plugins", "host"))
    expect(readFileSync(join(s.host, "config", "host.yaml"), "utf8")).toContain("driver: pelican")
    expect(existsSync(join(s.panel, "plugins", "host", "plugin.json"))).toBe(true)
    const removed = await runHost(["--root", s.host, "setup", "--remove"], { env: s.env })
    expect(removed.code, `${removed.stdout}\n${removed.stderr}`).toBe(0)
    expect(treeHash(s.panel)).toEqual(before.panel)
    expect(pick(treeHash(s.etc), (key) => !key.startsWith("nginx/run/"))).toEqual(pick(before.etc, (key) => !key.startsWith("nginx/run/")))
    // Once removed, there is nothing left to remove.
    const again = await runHost(["--root", s.host, "setup", "--remove"], { env: s.env })
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("Nothing to remove: setup keeps no record")
  }, 120_000)

  it("--dry-run prints each diff and command and writes nothing in either root", async () => {
    const s = await scene()
    const before = { host: treeHash(s.host), panel: treeHash(s.panel), etc: treeHash(s.etc) }
    const dry = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--dry-run"], { env: s.env })
    expect(dry.code, `${dry.stdout}\n${dry.stderr}`).toBe(0)
    expect(dry.stdout).toContain(`+    include ${join(s.host, "storage/host/webserver/nginx.conf")};`)
    expect(dry.stdout).toContain("+{{-- host:begin")
    expect(dry.stdout).toContain("+ExecStart=")
    expect(dry.stdout).toMatch(/would then run: \S*nginx -t/)
    expect(dry.stdout).toContain("check     skipped")
    expect({ host: treeHash(s.host), panel: treeHash(s.panel), etc: treeHash(s.etc) }).toEqual(before)
    const json = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--dry-run", "--json"], { env: s.env })
    expect(JSON.parse(json.stdout).dry_run).toBe(true)
    expect({ host: treeHash(s.host), panel: treeHash(s.panel), etc: treeHash(s.etc) }).toEqual(before)
  })

  it("a failing nginx -t restores the site byte for byte and shows nginx's own message", async () => {
    // The site already sends /host/ somewhere: Host's snippet would duplicate that location.
    const s = await scene({ siteExtra: "    location ^~ /host/ { return 200 'mine'; }" })
    const siteBefore = readFileSync(s.site)
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort)], { env: s.env })
    expect(result.code).toBe(1)
    expect(result.stdout).toContain("[4/6] webserver failed")
    expect(result.stdout).toContain("duplicate location \"/host/\"")
    expect(result.stdout).toContain("restored byte for byte")
    expect(readFileSync(s.site).equals(siteBefore)).toBe(true)
    // The steps before stand, and --remove takes them back.
    expect(existsSync(join(s.host, "config", "host.yaml"))).toBe(true)
    const removed = await runHost(["--root", s.host, "setup", "--remove", "--json"], { env: s.env })
    expect(removed.code, removed.stderr).toBe(0)
    expect(stepsOf(removed.stdout).map((step) => `${step.id} ${step.action}`)).toEqual(["service skipped", "webserver skipped", "include remove"])
    expect(readFileSync(join(s.panel, "resources/views/layouts/scripts.blade.php"), "utf8")).toBe("{{-- Just here as a binder for dynamically rendered content. --}}\n")
  })
})

const pick = (record: Record<string, string>, keep: (key: string) => boolean) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => keep(key)))

describeWithPrograms(["nginx"], "host setup refuses bad input, naming what to fix", () => {
  it("a folder that is no panel", async () => {
    const host = temp("setup-host-")
    const notPanel = temp("not-panel-")
    const before = treeHash(host)
    const result = await runHost(["--root", host, "setup", "--panel-root", notPanel], {})
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("is not a Pterodactyl or Pelican panel folder")
    expect(treeHash(host)).toEqual(before)
  })

  it("an .env without APP_URL, or with an invalid one, names the key and --panel-url", async () => {
    for (const appUrl of [null, "panel.example.com"]) {
      const s = await scene({ appUrl, start: false })
      const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel], { env: s.env })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("APP_URL")
      expect(result.stderr).toContain("--panel-url")
      expect(existsSync(join(s.host, "config"))).toBe(false)
    }
  })

  it("no site serving the panel's public/ says where it looked and mentions --site", async () => {
    const s = await scene({ start: false })
    writeFileSync(s.site, "server {\n    listen 127.0.0.1:1;\n    root /var/www/other/public;\n}\n")
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort)], { env: s.env })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`no web-server site serves ${s.panel}/public`)
    expect(result.stderr).toContain(join(s.etc, "nginx", "sites-enabled"))
    expect(result.stderr).toContain("--site FILE")
  })

  it("a port taken by something else", async () => {
    const s = await scene({ start: false })
    const other = createServer((_, response) => response.end("not Host"))
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve))
    stops.push(() => new Promise((resolve) => other.close(() => resolve())))
    const port = (other.address() as { port: number }).port
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(port)], { env: s.env })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is taken by another program`)
    expect(result.stderr).toContain("--port")
    expect(existsSync(join(s.host, "config", "host.yaml"))).toBe(false)
  })

  it("without --port, a port taken by something other than Host moves Host to the next free one, keeping the file's comments", async () => {
    const s = await scene({ start: false })
    const other = createServer((_, response) => response.end("not Host"))
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve))
    stops.push(() => new Promise((resolve) => other.close(() => resolve())))
    const port = (other.address() as { port: number }).port
    mkdirSync(join(s.host, "config"), { recursive: true })
    writeFileSync(join(s.host, "config", "host.yaml"), `# ours\nserver:\n  port: ${port} # the port we had\nregistry_cache_ttl: 60\n`)
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--dry-run", "--json"], { env: s.env })
    expect(result.code, result.stderr).toBe(0)
    const config = (JSON.parse(result.stdout) as { steps: Array<{ id: string; output?: string }> }).steps.find((step) => step.id === "config")
    const chosen = Number(/server 127\.0\.0\.1:(\d+)/.exec(config?.output ?? "")?.[1])
    expect(chosen).toBeGreaterThan(port)
    const text = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--dry-run"], { env: s.env })
    expect(text.stdout).toContain(`-  port: ${port} # the port we had`)
    expect(text.stdout).toContain(" # ours")
    expect(text.stdout).toContain(" registry_cache_ttl: 60")
  })
})

describeWithPrograms(["nginx"], "host setup's choices", () => {
  it("--web-server none and --service none skip those steps, print the include, and skip the check saying why", async () => {
    const s = await scene({ start: false })
    const siteBefore = readFileSync(s.site)
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--web-server", "none", "--service", "none", "--json"], { env: s.env })
    expect(result.code, result.stderr).toBe(0)
    const steps = stepsOf(result.stdout)
    expect(steps.map((step) => `${step.id} ${step.action}`)).toEqual(["panel unchanged", "config create", "include update", "webserver skipped", "service skipped", "check skipped"])
    expect(steps.find((step) => step.id === "webserver")?.output).toContain(`include ${join(s.host, "storage/host/webserver/nginx.conf")};`)
    expect(steps.find((step) => step.id === "check")?.output).toContain("not necessarily reachable")
    expect(readFileSync(s.site).equals(siteBefore)).toBe(true)
    expect(existsSync(join(s.etc, "systemd"))).toBe(false)
  })

  it("--site FILE names the panel's site where setup would not look", async () => {
    const s = await scene({ start: false })
    const elsewhere = join(s.etc, "panel-site.conf")
    writeFileSync(elsewhere, readFileSync(s.site))
    writeFileSync(s.site, "server {\n    listen 127.0.0.1:1;\n    root /var/www/other/public;\n}\n")
    const result = await runHost(["--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort), "--site", elsewhere, "--dry-run", "--json"], { env: s.env })
    expect(result.code, result.stderr).toBe(0)
    expect(stepsOf(result.stdout).find((step) => step.id === "webserver")).toMatchObject({ action: "update", path: elsewhere })
  })
})

describeWithPrograms(["nginx", "setpriv"], "host setup without root", () => {
  it.skipIf(process.getuid?.() !== 0)("a step needing root fails naming the file and the command to run as root; the steps before stand", async () => {
    const s = await scene({ start: false })
    // Host's root and the panel belong to `nobody`; the web server's configuration stays root's.
    const nobody = 65534
    for (const dir of [s.host, s.panel]) {
      spawnSync("chown", ["-R", `${nobody}:${nobody}`, dir])
    }
    chmodSync(s.etc, 0o755)
    const siteBefore = readFileSync(s.site)
    const env: Record<string, string> = { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin`, HOME: "/nonexistent", HOST_SETUP_ETC: s.etc, NO_COLOR: "1" }
    const child = spawn("setpriv", ["--reuid", String(nobody), "--regid", String(nobody), "--clear-groups", process.execPath, hostBin, "--root", s.host, "setup", "--panel-root", s.panel, "--port", String(s.hostPort)], { env })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)))
    expect(code, `${stdout}\n${stderr}`).toBe(1)
    expect(stdout).toContain("[4/6] webserver failed")
    expect(stderr).toContain(`cannot write ${s.site}`)
    expect(stderr).toContain(`run it as root: sudo host --root ${s.host} setup --panel-root ${s.panel}`)
    expect(readFileSync(s.site).equals(siteBefore)).toBe(true)
    // Steps 2 and 3 stand.
    expect(readFileSync(join(s.host, "config", "host.yaml"), "utf8")).toContain("driver: pterodactyl")
    expect(readFileSync(join(s.panel, "resources/views/layouts/scripts.blade.php"), "utf8")).toContain("host:begin")
    chownSync(s.host, 0, 0)
  }, 60_000)
})
