import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms, findProgram } from "../support/programs.js"

// The traps of an admin's first hour with a real panel (issue 35; docs/panels.md, docs/operations.md):
// help that names the wrong root and file, a dry run that wrote Host's database, web-server detection by a
// bare folder, and doctor advice that would route the panel's own sign-in to Host.

const temp = tempDirsPerTest()

/** Every path under `root` (folders end in /), with each file's content: a run that writes nothing leaves it equal. */
const tree = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name)
      if (statSync(full).isDirectory()) {
        out[`${prefix}${name}/`] = ""
        walk(full, `${prefix}${name}/`)
      } else out[`${prefix}${name}`] = readFileSync(full, "latin1")
    }
  }
  walk(root, "")
  return out
}

describe("host --help", () => {
  it("calls --root Host's root, not the panel's, and names desired-state/extensions.yaml", async () => {
    const run = await runHost(["--help"])
    expect(run.code).toBe(0)
    const rootLine = run.stdout.split("\n").find((line) => line.trimStart().startsWith("--root DIR"))
    expect(rootLine).toMatch(/Host's root, not the panel's folder/)
    expect(run.stdout).not.toMatch(/the panel root/)
    expect(run.stdout).toContain("converge to desired-state/extensions.yaml")
    expect(run.stdout).not.toContain("desired-state/host.yaml")
  })

  it("a missing --root folder is named Host's root, and the error says it is not the panel's folder", async () => {
    const missing = join(temp("host-"), "nowhere")
    const run = await runHost(["--root", missing, "list"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`Host's root ${missing} does not exist`)
    expect(run.stderr).toContain("(not the panel's folder)")
  })
})

describe("panel:install --dry-run and panel:uninstall --dry-run write nothing anywhere", () => {
  for (const kind of ["pterodactyl-1.11", "pelican"] as const) {
    it(`on an empty Host root (${kind}): no database, no storage folder, no panel file`, async () => {
      const host = temp("host-root-")
      const panel = writePanelFolder(temp("panel-"), kind)
      const before = { host: tree(host), panel: tree(panel) }
      for (const args of [["panel:install", "--dry-run"], ["panel:install", "--dry-run", "--json"], ["panel:uninstall", "--dry-run"]]) {
        const run = await runHost(["--root", host, ...args, "--panel-root", panel])
        expect(run.code, run.stderr).toBe(0)
        expect({ host: tree(host), panel: tree(panel) }, args.join(" ")).toEqual(before)
      }
      const text = await runHost(["--root", host, "panel:install", "--dry-run", "--panel-root", panel])
      expect(text.stdout).toContain("Would write (nothing written, --dry-run):")
      // The real install afterwards does write (the dry run was no refusal in disguise), and needs no database.
      const real = await runHost(["--root", host, "panel:install", "--panel-root", panel])
      expect(real.code, real.stderr).toBe(0)
      expect(tree(panel)).not.toEqual(before.panel)
    })
  }
})

describe("host doctor's routing fix under a real panel", () => {
  const servers: Array<Server> = []
  afterEach(() => servers.splice(0).forEach((server) => server.close()))

  it("names Host's three prefixes and keeps /auth/ the panel's sign-in", async () => {
    // The panel's web server as a stand-in that sends everything to the panel: its 404 page.
    const server = createServer((_request, response) => {
      response.writeHead(404, { "content-type": "text/html; charset=UTF-8" }).end("<!doctype html><title>Pterodactyl</title><h1>404</h1>")
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const root = temp("host-root-")
    const panel = writePanelFolder(temp("pterodactyl-"), "pterodactyl-1.11")
    mkdirSync(join(root, "config"), { recursive: true })
    writeFileSync(join(root, "config", "host.yaml"), `panel:\n  driver: pterodactyl\n  url: ${url}\n  root: ${panel}\n`)
    const run = await runHost(["doctor", "--json", "--root", root])
    const report = JSON.parse(run.stdout) as { sections: Array<{ subject: string; checks: Array<{ id: string; verdict: string; fix?: string }> }> }
    const routing = report.sections.find((s) => s.subject === "host")?.checks.find((c) => c.id === "panel-routing")
    expect(routing?.verdict).toBe("fail")
    for (const prefix of ["/host/", "/api/client/host/", "/admin/host/"]) expect(routing?.fix).toContain(prefix)
    expect(routing?.fix).toMatch(/only these three; \/auth\/ stays the panel's sign-in/)
    expect(routing?.fix).not.toMatch(/\/auth\/\) to Host|, \/auth\/\)/)
  })

  it("docs/operations.md routes the three prefixes and never /auth/ to Host", () => {
    const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "operations.md"), "utf8")
    const section = docs.slice(docs.indexOf("### Behind the panel's web server"), docs.indexOf("## Web installs"))
    expect(section).toContain("exactly three prefixes")
    expect(section).toMatch(/Never `\/auth\/`/)
    expect(section).not.toMatch(/`\/admin\/host\/` and `\/auth\/` to `host serve`/)
  })
})

// Detection by the web server's program on the PATH and its main configuration (HOST_SETUP_ETC stands for
// /etc), never a bare folder. The PATH holds links to the machine's real programs.
describeWithPrograms(["nginx", "caddy", "apache2ctl"], "panel:install's web-server detection", () => {
  const machine = (programs: ReadonlyArray<string>, configs: ReadonlyArray<string>, folders: ReadonlyArray<string> = []) => {
    const bin = temp("host-bin-")
    for (const program of programs) symlinkSync(findProgram(program)!, join(bin, program))
    const etc = temp("host-etc-")
    for (const config of configs) {
      mkdirSync(join(etc, config, ".."), { recursive: true })
      writeFileSync(join(etc, config), "# the web server's main configuration\n")
    }
    for (const folder of folders) mkdirSync(join(etc, folder), { recursive: true })
    return { PATH: bin, HOST_SETUP_ETC: etc }
  }
  const detected = async (env: Readonly<Record<string, string>>) => {
    const host = temp("host-root-")
    const panel = writePanelFolder(temp("panel-"), "pterodactyl-1.11")
    const run = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--dry-run", "--json"], { env })
    expect(run.code, run.stderr).toBe(0)
    return (JSON.parse(run.stdout) as { snippet: { kind: string } }).snippet.kind
  }

  it("a bare /etc/apache2/conf-available with no Apache program is no Apache", async () => {
    expect(await detected(machine([], [], ["apache2/conf-available", "apache2/sites-available"]))).toBe("nginx")
    expect(await detected(machine(["caddy"], ["caddy/Caddyfile"], ["apache2/conf-available", "nginx"]))).toBe("caddy")
  })

  it("a program without its configuration is not the web server; program and configuration are", async () => {
    expect(await detected(machine(["nginx", "caddy"], ["caddy/Caddyfile"]))).toBe("caddy")
    expect(await detected(machine(["apache2ctl"], ["apache2/apache2.conf"], ["nginx/sites-available"]))).toBe("apache")
    expect(await detected(machine(["nginx", "apache2ctl"], ["nginx/nginx.conf", "apache2/apache2.conf"]))).toBe("nginx")
  })
})
