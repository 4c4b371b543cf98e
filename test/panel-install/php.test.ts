import { execFileSync } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"

// The PHP that `host panel:install` writes into a Pelican panel, checked by the real PHP (CI installs
// php8.2-cli): every file passes `php -l`, and the plugin, loaded against stand-ins of the Filament,
// Laravel and Pelican classes it uses (test/panel-install/php/run-plugin.php), emits the boot script, one
// slot container per mapped render hook, and registers the installed extensions' permissions.

const temp = tempDirsPerTest()

const phpFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? phpFiles(full) : name.endsWith(".php") ? [full] : []
  })

describe("the Pelican plugin's PHP", () => {
  it("lints, and registers the boot script, the slot containers and the extension permissions", async () => {
    const host = temp("host-root-")
    const panel = writePanelFolder(temp("pelican-"), "pelican")
    // Its dependency acme/hello-world is not installed: added disabled, its permissions still count.
    const added = await runHost(["--root", host, "add", fixture("extensions", "full"), "--disabled"])
    expect(added.code, added.stderr).toBe(0)
    const run = await runHost(["--root", host, "panel:install", "--panel-root", panel])
    expect(run.code, run.stderr).toBe(0)
    const folder = join(panel, "plugins", "host")
    const files = phpFiles(folder)
    expect(files.map((file) => file.slice(folder.length)).sort()).toEqual(["/src/HostPlugin.php", "/src/Providers/HostPluginProvider.php"])
    for (const file of files) expect(execFileSync("php", ["-l", file], { encoding: "utf8" })).toContain("No syntax errors detected")

    const output = JSON.parse(execFileSync("php", [join(import.meta.dirname, "php", "run-plugin.php"), folder], { encoding: "utf8" }))
    expect(output.pluginId).toBe("host")
    expect(output.global).toEqual([{ hook: "panels::head.end", html: '<script src="/host/boot.js" defer></script>' }])
    const container = (slot: string, panelId: string) => `<div data-host-slot="${slot}" data-host-panel="${panelId}"></div>`
    expect(output.panels.app).toEqual([
      { hook: "panels::topbar.start", html: container("navbar.before", "app") },
      { hook: "panels::topbar.end", html: container("navbar", "app") },
      { hook: "panels::page.start", html: container("dashboard.header", "app") },
      { hook: "panels::page.end", html: container("dashboard.footer", "app") },
      { hook: "panels::auth.login.form.before", html: container("auth.container.before", "app") },
      { hook: "panels::auth.login.form.after", html: container("auth.container.after", "app") }
    ])
    expect(output.panels.server).toEqual([
      { hook: "panels::topbar.start", html: container("navbar.before", "server") },
      { hook: "panels::topbar.end", html: container("navbar", "server") },
      { hook: "panels::sidebar.nav.start", html: container("server.subnav.before", "server") },
      { hook: "panels::sidebar.nav.end", html: container("server.subnav.after", "server") },
      { hook: "panels::page.start", html: container("server.header", "server") },
      { hook: "panels::page.end", html: container("server.footer", "server") }
    ])
    expect(output.panels.admin).toEqual([])
    // fixtures/extensions/full (acme/full) declares backend.permissions full.view and full.manage: Pelican
    // names them "<group>.<key>", so they reach the panel as host.acme-full.full.view and …manage.
    expect(output.permissions).toEqual({
      "host.acme-full.full": { name: "host.acme-full.full", permissions: ["manage", "view"], icon: "tabler-puzzle" }
    })
  })

  it("registers no permissions when no extension declares any", async () => {
    const host = temp("host-root-")
    const panel = writePanelFolder(temp("pelican-"), "pelican")
    expect((await runHost(["--root", host, "panel:install", "--panel-root", panel])).code).toBe(0)
    const output = JSON.parse(execFileSync("php", [join(import.meta.dirname, "php", "run-plugin.php"), join(panel, "plugins", "host")], { encoding: "utf8" }))
    expect(output.permissions).toEqual([])
    expect(output.global).toHaveLength(1)
  })
})
