import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { pelicanHooks, pelicanPages } from "../../src/domain/PelicanHooks.js"

// The PHP that `host panel:install` writes into a Pelican panel, checked by the real PHP (CI installs
// php8.2-cli): every file passes `php -l`, and the plugin, loaded against stand-ins of the Filament,
// Laravel and Pelican classes it uses (test/panel-install/php/run-plugin.php), emits the boot script, one
// slot container per mapped render hook, registers the installed extensions' permissions, and adds the
// extension-page outlets as Filament pages whose classes load against Filament 3's and 4's signatures.

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
    // The Blade view ends in .php too: PHP reads it as plain text, so it lints.
    expect(files.map((file) => file.slice(folder.length)).sort()).toEqual([
      "/resources/views/extension-page.blade.php",
      "/src/HostPlugin.php",
      "/src/Pages/AccountExtensionPage.php",
      "/src/Pages/DashboardExtensionPage.php",
      "/src/Pages/ExtensionPage.php",
      "/src/Pages/ServerExtensionPage.php",
      "/src/Providers/HostPluginProvider.php"
    ])
    for (const file of files) expect(execFileSync("php", ["-l", file], { encoding: "utf8" })).toContain("No syntax errors detected")

    // Pages of both of Pelican's folder layouts, and one page no container belongs to.
    const pages = [
      "App\\Filament\\Server\\Pages\\Console",
      "App\\Filament\\Server\\Resources\\FileResource\\Pages\\ListFiles",
      "App\\Filament\\Server\\Resources\\Files\\Pages\\ListFiles",
      "App\\Filament\\Server\\Resources\\Subusers\\Pages\\ListSubusers",
      "App\\Filament\\App\\Resources\\Servers\\Pages\\ListServers",
      "App\\Filament\\Server\\Pages\\Mounts"
    ]
    const run3 = JSON.parse(execFileSync("php", [join(import.meta.dirname, "php", "run-plugin.php"), folder, JSON.stringify(pages)], { encoding: "utf8", env: { ...process.env, FILAMENT_MAJOR: "3" } }))
    const output = JSON.parse(execFileSync("php", [join(import.meta.dirname, "php", "run-plugin.php"), folder, JSON.stringify(pages)], { encoding: "utf8", env: { ...process.env, FILAMENT_MAJOR: "4" } }))
    // The same plugin under Filament 3's Page signatures does the same.
    expect(run3).toEqual(output)
    expect(output.pluginId).toBe("host")
    expect(output.global).toEqual([{ hook: "panels::head.end", html: '<script src="/host/boot.js" defer></script>' }])
    const container = (slot: string, panelId: string) => `<div data-host-slot="${slot}" data-host-panel="${panelId}"></div>`
    // One registered hook per entry of the table the bridge reads (domain/PelicanHooks.ts), each rendering its
    // container exactly on its pages (compared by class basename) and everywhere when it names none.
    for (const panelId of ["app", "server"] as const) {
      const entries = pelicanHooks.filter((entry) => entry.panel === panelId)
      expect(output.panels[panelId].map((registered: { hook: string }) => registered.hook)).toEqual(entries.map((entry) => entry.hook))
      entries.forEach((entry, index) => {
        for (const page of pages) {
          const onPage = entry.scopes.length === 0 || entry.scopes.includes(page.slice(page.lastIndexOf("\\") + 1))
          expect(output.panels[panelId][index].html[page], `${entry.slot} on ${page}`).toBe(onPage ? container(entry.slot, panelId) : "")
        }
      })
    }
    // Spot checks of the same, spelled out.
    const serverOn = (page: string) => output.panels.server.flatMap((registered: { html: Record<string, string> }) => registered.html[page] === "" ? [] : [registered.html[page]])
    expect(serverOn(pages[1]!)).toEqual(serverOn(pages[2]!))
    expect(serverOn(pages[1]!)).toContain(container("server.files.header", "server"))
    expect(serverOn(pages[0]!)).toContain(container("server.console.footer", "server"))
    expect(serverOn(pages[0]!)).not.toContain(container("server.files.header", "server"))
    expect(serverOn(pages[3]!)).toContain(container("server.users.before", "server"))
    expect(serverOn(pages[5]!)).toEqual(["navbar", "navbar.left", "navbar.before", "navbar.after", "server.subnav", "server.subnav.before", "server.subnav.after", "server.header", "server.footer"].map((slot) => container(slot, "server")))
    expect(output.panels.admin).toEqual([])

    // The extension-page outlets: one Filament page per row of the table, at `<prefix>/{path}` of any depth,
    // with the panel's page middleware, out of the navigation, rendering only the slot's container through
    // the plugin's view (resources/views, which Pelican loads as `host::`).
    for (const panelId of ["app", "server"] as const) {
      expect(output.pages[panelId]).toEqual(pelicanPages.filter((page) => page.panel === panelId).map((page) => ({
        class: `Host\\PelicanPlugin\\Pages\\${page.className}`,
        routes: [{
          uri: `/${page.prefix}/{path}`,
          action: `Host\\PelicanPlugin\\Pages\\${page.className}`,
          where: { path: ".*" },
          middleware: [`panel:${panelId}`],
          name: `host.${page.slot.replace(".", "-")}`
        }],
        navigation: false,
        view: "host::extension-page",
        title: "Extension",
        heading: "",
        viewData: { hostContainer: container(page.slot, panelId) }
      })))
    }
    expect(output.pages.server.map((page: { routes: Array<{ uri: string }> }) => page.routes[0]!.uri)).toEqual(["/ext/{path}"])
    expect(output.pages.admin).toEqual([])
    const view = readFileSync(join(folder, "resources", "views", "extension-page.blade.php"), "utf8")
    expect(view).toContain("<x-filament-panels::page>\n    {!! $hostContainer !!}\n</x-filament-panels::page>")
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
