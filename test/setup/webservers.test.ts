import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms } from "../support/programs.js"
import { machines, people, startPanelStandIn } from "../support/pterodactyl-api.js"
import { eventually } from "../support/wait.js"
import {
  caddyEnv,
  freePort,
  type Running,
  startApacheAt,
  startCaddyAt,
  startHostServe,
  treeHash,
  writeApacheEtc,
  writeCaddyEtc
} from "./support.js"

// `host setup` in front of Caddy and Apache (DESIGN §22): the site found by its `root` / `DocumentRoot`,
// one marked `import` / `Include`, `caddy validate` / `apachectl configtest`, the reload, the check through
// the web server, and `--remove` leaving every file outside Host's root byte-identical.

const temp = tempDirsPerTest()
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

const happyPath = async (kind: "caddy" | "apache") => {
  const host = temp("setup-host-")
  const panel = writePanelFolder(temp("setup-panel-"), "pterodactyl-1.11")
  mkdirSync(join(panel, "public"), { recursive: true })
  const standIn = await startPanelStandIn({ users: people, servers: machines })
  stops.push(standIn.close)
  const port = await freePort()
  const hostPort = await freePort()
  writeFileSync(join(panel, ".env"), `APP_NAME=Pterodactyl\nAPP_URL=http://127.0.0.1:${port}\n`)
  const etc = temp("setup-etc-")
  let server: Running
  let env: Record<string, string> = { HOST_SETUP_ETC: etc }
  let site: string
  if (kind === "caddy") {
    const { conf } = writeCaddyEtc(etc, port, await freePort(), panel, standIn.url)
    site = conf
    env = { ...env, ...caddyEnv(etc) }
    server = await startCaddyAt(conf, port, caddyEnv(etc))
  } else {
    site = writeApacheEtc(etc, port, panel, standIn.url).site
    server = await startApacheAt(etc, port)
  }
  stops.push(server.stop)
  const before = { panel: treeHash(panel), site: readFileSync(site) }
  const unit = join(etc, "systemd", "system", "host.service")
  let stopped = false
  const run = runHost(["--root", host, "setup", "--panel-root", panel, "--port", String(hostPort), "--json"], { env })
  const watcher = (async () => {
    await eventually(() => stopped || existsSync(unit), (seen) => seen, { ms: 60_000, what: "the unit written" })
    if (!stopped) stops.push((await startHostServe(host, hostPort)).stop)
  })()
  const result = await run
  stopped = true
  await watcher
  expect(result.code, `${result.stdout}\n${result.stderr}\n${server.log()}`).toBe(0)
  const json = JSON.parse(result.stdout) as { steps: Array<{ id: string; action: string; path?: string }>; admin_url: string }
  expect(json.steps.map((s) => `${s.id} ${s.action}`)).toEqual([
    "panel unchanged",
    "config create",
    "include update",
    "webserver update",
    "service create",
    "check unchanged"
  ])
  expect(json.steps.find((s) => s.id === "webserver")?.path).toBe(site)
  const text = readFileSync(site, "utf8")
  expect(text).toContain(kind === "caddy" ? `import ${join(host, "storage/host/webserver/caddy.conf")}` : `Include ${join(host, "storage/host/webserver/apache.conf")}`)
  expect(await (await fetch(`http://127.0.0.1:${port}/host/ready`)).json()).toMatchObject({ status: "ok" })
  expect((await fetch(`http://127.0.0.1:${port}/api/client/account`)).status).toBe(401) // the stand-in panel

  const removed = await runHost(["--root", host, "setup", "--remove", "--json"], { env })
  expect(removed.code, `${removed.stdout}\n${removed.stderr}`).toBe(0)
  expect(readFileSync(site).equals(before.site)).toBe(true)
  expect(treeHash(panel)).toEqual(before.panel)
  expect(existsSync(unit)).toBe(false)
  await eventually(() => fetch(`http://127.0.0.1:${port}/host/ready`).then((r) => r.text()), (body) => !body.includes("generation"), { what: `${kind} reloaded` })
}

describeWithPrograms(["caddy"], "host setup with a real Caddy", () => {
  it("imports the snippet into the panel's site, validates, reloads, checks, and --remove takes it out", () => happyPath("caddy"), 120_000)
})

describeWithPrograms(["apache2ctl", "apache2"], "host setup with a real Apache", () => {
  it("includes the snippet in the panel's VirtualHost, configtests, reloads, checks, and --remove takes it out", () => happyPath("apache"), 120_000)
})
