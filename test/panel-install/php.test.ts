import { execFileSync } from "node:child_process"
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, expect, it } from "vitest"
import { pelicanHooks, pelicanPages } from "../../src/domain/PelicanHooks.js"
import { fixture, runHost, tempDir } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms } from "../support/programs.js"

// The PHP that `host panel:install` writes into a Pelican panel, checked by the real PHP: every file passes
// `php -l`, and the plugin, loaded against stand-ins of the Filament, Laravel and Pelican classes it uses
// (test/panel-install/php/run-plugin.php, written from Pelican v1.0.0-beta38's and Filament 5's sources as
// docs/panels.md records them), emits the boot script and one slot container per mapped render hook on the
// pages that emit it, registers the installed extensions' permissions so that every one of Pelican's
// permission lookups answers (a warning is an exception, as Laravel makes it), round-trips them through the
// subuser form, and adds the extension-page outlets as pages Filament can link, with a navigation item per
// extension page — under Filament 3's and 5's page signatures and Pelican's registration signatures before
// and since beta34.

const runner = join(import.meta.dirname, "php", "run-plugin.php")

// Pages of both of Pelican's folder layouts, and how each renders: the file list has its own view (no
// list-records table hooks), the other lists the default list page's, the rest a plain page.
const pages: Readonly<Record<string, "page" | "list-records" | "own-view">> = {
  "App\\Filament\\Server\\Pages\\Console": "page",
  "App\\Filament\\Server\\Resources\\FileResource\\Pages\\ListFiles": "own-view",
  "App\\Filament\\Server\\Resources\\Files\\Pages\\ListFiles": "own-view",
  "App\\Filament\\Server\\Resources\\Subusers\\Pages\\ListSubusers": "list-records",
  "App\\Filament\\Server\\Resources\\Backups\\Pages\\ListBackups": "list-records",
  "App\\Filament\\Server\\Pages\\Startup": "page",
  "App\\Filament\\App\\Resources\\Servers\\Pages\\ListServers": "list-records",
  "App\\Filament\\Server\\Pages\\Mounts": "page"
}

interface Attempt<A> {
  readonly ok?: A
  readonly error?: string
}

interface NavigationShown {
  readonly label: string
  readonly icon: string
  readonly visible: boolean
  readonly url: string | null
  readonly active: boolean
}

interface PluginRun {
  readonly pluginId: string
  readonly registration: ReadonlyArray<string>
  readonly global: ReadonlyArray<{ hook: string; html: string }>
  readonly panels: Record<string, ReadonlyArray<{ hook: string; html: Record<string, string> }>>
  readonly rendered: Record<string, Record<string, ReadonlyArray<string>>>
  readonly pages: Record<string, ReadonlyArray<Record<string, unknown> & { routes: ReadonlyArray<{ uri: string; name: string }>; url: Attempt<string>; urlWithoutPath: Attempt<string> }>>
  readonly navigation: Record<string, Attempt<ReadonlyArray<NavigationShown>>>
  readonly permissions: Attempt<Record<string, Record<string, unknown>>>
  readonly lookups: {
    readonly allPermissionData: Attempt<ReadonlyArray<Record<string, unknown>>>
    readonly allPermissionKeys: Attempt<ReadonlyArray<string>>
    readonly doesPermissionExist?: Record<string, Attempt<boolean>>
    readonly can?: Record<string, Attempt<boolean>>
  }
  readonly form: Attempt<{
    readonly tabs: ReadonlyArray<{ name: string; label: string; description: string; icon: string; options: Record<string, string>; descriptions: Record<string, string> }>
    readonly saved: ReadonlyArray<string>
    readonly ticked: Record<string, ReadonlyArray<string>>
  }>
}

const runPlugin = (folder: string, options: { readonly env?: Record<string, string>; readonly request?: object } = {}): PluginRun =>
  JSON.parse(execFileSync("php", [runner, folder, JSON.stringify(pages), JSON.stringify(options.request ?? {})], {
    encoding: "utf8",
    env: { ...process.env, ...options.env }
  })) as PluginRun

const phpFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? phpFiles(full) : name.endsWith(".php") ? [full] : []
  })

const container = (slot: string, panelId: string) => `<div data-host-slot="${slot}" data-host-panel="${panelId}"></div>`

describeWithPrograms(["php"], "the Pelican plugin's PHP", () => {
  // One panel for the file: acme/hello-world and acme/full (permissions full.view and full.manage, a server page
  // "Full Example" and a hidden one under /:section) installed and enabled.
  let folder = ""
  let cleanups: Array<() => void> = []
  beforeAll(async () => {
    const host = tempDir("host-root-")
    const panel = tempDir("pelican-")
    cleanups = [host.cleanup, panel.cleanup]
    writePanelFolder(panel.path, "pelican")
    for (const extension of ["hello-world", "full"]) {
      const added = await runHost(["--root", host.path, "add", fixture("extensions", extension)])
      expect(added.code, added.stderr).toBe(0)
    }
    const run = await runHost(["--root", host.path, "panel:install", "--panel-root", panel.path])
    expect(run.code, run.stderr).toBe(0)
    folder = join(panel.path, "plugins", "host")
    return () => cleanups.forEach((cleanup) => cleanup())
  })

  it("lints, and renders the boot script and each slot container on the pages that emit its hook, in order", () => {
    const files = phpFiles(folder)
    // The Blade view ends in .php too: PHP reads it as plain text, so it lints.
    expect(files.map((file) => file.slice(folder.length)).sort()).toEqual([
      "/lang/en/permissions.php",
      "/resources/views/extension-page.blade.php",
      "/src/HostPlugin.php",
      "/src/Pages/AccountExtensionPage.php",
      "/src/Pages/DashboardExtensionPage.php",
      "/src/Pages/ExtensionPage.php",
      "/src/Pages/ServerExtensionPage.php",
      "/src/Providers/HostPluginProvider.php"
    ])
    for (const file of files) expect(execFileSync("php", ["-l", file], { encoding: "utf8" })).toContain("No syntax errors detected")

    const output = runPlugin(folder)
    // The same plugin under Filament 3's page signatures does the same.
    expect(runPlugin(folder, { env: { FILAMENT_MAJOR: "3" } })).toEqual(output)
    expect(output.pluginId).toBe("host")
    expect(output.global).toEqual([{ hook: "panels::head.end", html: '<script src="/host/boot.js" defer></script>' }])
    // One registered hook per entry of the table the bridge reads (domain/PelicanHooks.ts), each rendering its
    // container exactly on its pages (compared by class basename) and everywhere when it names none.
    for (const panelId of ["app", "server"] as const) {
      const entries = pelicanHooks.filter((entry) => entry.panel === panelId)
      expect(output.panels[panelId]!.map((registered) => registered.hook)).toEqual(entries.map((entry) => entry.hook))
      entries.forEach((entry, index) => {
        for (const page of Object.keys(pages)) {
          const onPage = entry.scopes.length === 0 || entry.scopes.includes(page.slice(page.lastIndexOf("\\") + 1))
          expect(output.panels[panelId]![index]!.html[page], `${entry.slot} on ${page}`).toBe(onPage ? container(entry.slot, panelId) : "")
        }
      })
    }
    expect(output.panels.admin).toEqual([])

    // What each page shows, in the order Filament emits the hooks of its view. Pelican's file list (its own
    // view, no list-records table hooks) still gets its header and footer, around its content; every page's
    // `.before` comes after server.header and its `.after` before server.footer.
    // (The top bar's and sidebar's hooks belong to the layout around the page, not rendered here.)
    const slotsOf = (page: string) => output.rendered.server![page]
    for (const layout of ["FileResource", "Files"]) {
      expect(slotsOf(`App\\Filament\\Server\\Resources\\${layout}\\Pages\\ListFiles`)).toEqual([
        "server.header",
        "server.files.actions",
        "server.files.header",
        "server.files.footer",
        "server.footer"
      ])
    }
    expect(slotsOf("App\\Filament\\Server\\Resources\\Backups\\Pages\\ListBackups")).toEqual(["server.header", "server.backups.before", "server.backups.after", "server.footer"])
    expect(slotsOf("App\\Filament\\Server\\Resources\\Subusers\\Pages\\ListSubusers")).toEqual(["server.header", "server.users.before", "server.users.after", "server.footer"])
    expect(slotsOf("App\\Filament\\Server\\Pages\\Startup")).toEqual(["server.header", "server.startup.before", "server.startup.after", "server.footer"])
    expect(slotsOf("App\\Filament\\Server\\Pages\\Console")).toEqual([
      "server.header",
      "server.console.header",
      "server.terminal.buttons",
      "server.console.info.before",
      "server.console.info.after",
      "server.console.footer",
      "server.footer"
    ])
    expect(slotsOf("App\\Filament\\Server\\Pages\\Mounts")).toEqual(["server.header", "server.footer"])
    expect(output.rendered.app!["App\\Filament\\App\\Resources\\Servers\\Pages\\ListServers"]).toEqual([
      "dashboard.header",
      "dashboard.widgets",
      "dashboard.serverlist.before",
      "dashboard.serverlist.after",
      "dashboard.footer"
    ])
  })

  it("registers the extension permissions so that every one of Pelican's permission lookups answers", () => {
    const output = runPlugin(folder)
    expect(output.registration).toEqual(["name", "permissions", "translationPrefix", "icon", "hidden"])
    // One group per extension with no dot, its keys "<area>-<action>", the icon given by name.
    expect(output.permissions).toEqual({
      ok: {
        host_acme_full: { name: "host_acme_full", permissions: ["full-manage", "full-view"], translation_prefix: "host::permissions", icon: "tabler-puzzle" }
      }
    })
    const data = output.lookups.allPermissionData.ok!
    expect(data.find((group) => group.name === "host_acme_full")).toEqual({
      name: "host_acme_full",
      hidden: false,
      icon: "tabler-puzzle",
      permissions: ["full-manage", "full-view"],
      translation_prefix: "host::permissions"
    })
    expect(output.lookups.allPermissionKeys.ok).toEqual(expect.arrayContaining(["host_acme_full.full-manage", "host_acme_full.full-view"]))
    expect(output.lookups.doesPermissionExist).toEqual({ "host_acme_full.full-manage": { ok: true }, "host_acme_full.full-view": { ok: true } })
    expect(output.lookups.can).toEqual({ "host_acme_full.full-manage": { ok: true }, "host_acme_full.full-view": { ok: true } })

    // The server's Users page: the group's tab is labelled from the plugin's translations, every box can be
    // ticked and saved as the names Host checks, and opens again ticked.
    const form = output.form.ok!
    const tab = form.tabs.find((candidate) => candidate.name === "host_acme_full")
    expect(tab).toEqual({
      name: "host_acme_full",
      label: "Full Example",
      description: "Permissions of the extension acme/full, added by Host.",
      icon: "tabler-puzzle",
      options: { "full-manage": "Full Manage", "full-view": "Full View" },
      descriptions: { "full-manage": "Full Example: full.manage", "full-view": "Full Example: full.view" }
    })
    expect(form.saved).toEqual(expect.arrayContaining(["host_acme_full.full-manage", "host_acme_full.full-view"]))
    expect(form.ticked.host_acme_full).toEqual(["full-manage", "full-view"])
    expect(form.ticked.control).toEqual(["console", "start"])
  })

  it("registers them as well under Pelican's signature up to v1.0.0-beta33 (icon third, no translation prefix)", () => {
    const output = runPlugin(folder, { env: { PELICAN_SUBUSER: "beta33" } })
    expect(output.registration).toEqual(["name", "permissions", "icon", "hidden"])
    expect(output.permissions.ok).toEqual({ host_acme_full: { name: "host_acme_full", permissions: ["full-manage", "full-view"], icon: "tabler-puzzle" } })
    expect(output.lookups.allPermissionKeys.ok).toEqual(expect.arrayContaining(["host_acme_full.full-view"]))
    expect(output.lookups.can!["host_acme_full.full-view"]).toEqual({ ok: true })
    expect(output.form.ok!.ticked.host_acme_full).toEqual(["full-manage", "full-view"])
  })

  it("the stand-in answers 500 where Pelican did: an icon passed third and a dotted group", () => {
    // What Host wrote before: the icon third (a translation prefix since beta34) and groups named
    // host.<vendor>-<name>.<area>. Both are checked here against the same stand-in, so the checks above can fail.
    const old = tempDir("pelican-old-plugin-")
    try {
      cpSync(folder, old.path, { recursive: true })
      const provider = join(old.path, "src", "Providers", "HostPluginProvider.php")
      const source = readFileSync(provider, "utf8")
      writeFileSync(provider, source.replace("Subuser::registerCustomPermissions($group, $keys, ...$arguments);", "Subuser::registerCustomPermissions($group, $keys, 'tabler-puzzle');"))
      const iconThird = runPlugin(old.path)
      expect(iconThird.lookups.allPermissionData.error).toBe('ErrorException: Undefined array key "icon"')
      expect(iconThird.lookups.can!["host_acme_full.full-view"]!.error).toBe('ErrorException: Undefined array key "icon"')
      expect(iconThird.form.error).toBe('ErrorException: Undefined array key "icon"')

      const permissions = JSON.parse(readFileSync(join(old.path, "permissions.json"), "utf8")) as { groups: Array<{ name: string }> }
      permissions.groups[0]!.name = "host.acme-full.full"
      writeFileSync(provider, source.replace("preg_match('/^host_[a-z0-9-]+_[a-z0-9-]+$/', $name)", "true"))
      writeFileSync(join(old.path, "permissions.json"), JSON.stringify(permissions))
      const dotted = runPlugin(old.path)
      expect(dotted.form.error).toBe("ErrorException: Array to string conversion")
    } finally {
      old.cleanup()
    }
  })

  it("adds the extension-page outlets as pages Filament can link, and a navigation item per extension page", () => {
    const output = runPlugin(folder, {
      request: { panel: "server", route: "filament.server.pages.ext", path: "acme/full/overview", url: "/server/5f0c2a1e/ext/acme/full/overview", held: [] }
    })
    // One Filament page per row of the table, at `<prefix>/{path?}` of any depth, with the panel's page
    // middleware, its route named by its slug as Filament names a page's (so getUrl links it), out of the
    // navigation as an outlet, rendering only the slot's container through the plugin's view.
    const prefixOf = (panelId: string) => (panelId === "server" ? "/server/{tenant}" : "")
    for (const panelId of ["app", "server"] as const) {
      expect(output.pages[panelId]).toEqual(pelicanPages.filter((page) => page.panel === panelId).map((page) => ({
        class: `Host\\PelicanPlugin\\Pages\\${page.className}`,
        routes: [{
          uri: `${prefixOf(panelId)}/${page.prefix}/{path?}`,
          action: `Host\\PelicanPlugin\\Pages\\${page.className}`,
          where: { path: ".*" },
          middleware: [`panel:${panelId}`],
          name: `filament.${panelId}.pages.${page.prefix.replace("/", ".")}`
        }],
        url: { ok: `${panelId === "server" ? "/server/5f0c2a1e" : ""}/${page.prefix}/acme/full/stats` },
        urlWithoutPath: { ok: `${panelId === "server" ? "/server/5f0c2a1e" : ""}/${page.prefix}` },
        navigation: false,
        view: "host::extension-page",
        title: "Extension",
        heading: "",
        viewData: { hostContainer: container(page.slot, panelId) }
      })))
    }
    expect(output.pages.admin).toEqual([])
    const view = readFileSync(join(folder, "resources", "views", "extension-page.blade.php"), "utf8")
    expect(view).toContain("<x-filament-panels::page>\n    {!! $hostContainer !!}\n</x-filament-panels::page>")

    // acme/full's one page that is not hidden, in the server panel's navigation, active below its path;
    // the admin panel links Host's admin screens.
    expect(output.navigation.server).toEqual({
      ok: [{ label: "Full Example", icon: "tabler-puzzle", visible: true, url: "/server/5f0c2a1e/ext/acme/full", active: true, sort: 100 }]
    })
    expect(output.navigation.app).toEqual({ ok: [] })
    expect(output.navigation.admin).toEqual({
      ok: [{ label: "Extensions", icon: "tabler-puzzle", visible: true, url: "/admin/host/extensions", active: false, sort: 100 }]
    })
    const onAdmin = runPlugin(folder, { request: { panel: "admin", url: "/admin/host/extensions" } })
    expect(onAdmin.navigation.admin!.ok![0]!.active).toBe(true)
    expect(onAdmin.navigation.server!.ok![0]!.active).toBe(false)
  })

  it("lists a page behind an extension permission only to users who hold it on the server", () => {
    const navigation = JSON.parse(readFileSync(join(folder, "navigation.json"), "utf8")) as { items: Array<Record<string, unknown>> }
    const guarded = tempDir("pelican-guarded-")
    try {
      cpSync(folder, guarded.path, { recursive: true })
      writeFileSync(
        join(guarded.path, "navigation.json"),
        JSON.stringify({ items: [...navigation.items, { ...navigation.items[0], path: "acme/full/admin", label: "Full Admin", permission: "host_acme_full.full-manage" }] })
      )
      const shown = (held: ReadonlyArray<string>) =>
        runPlugin(guarded.path, { request: { panel: "server", url: "/server/5f0c2a1e", held } }).navigation.server!.ok!.map((item) => [item.label, item.visible])
      expect(shown([])).toEqual([["Full Example", true], ["Full Admin", false]])
      expect(shown(["host_acme_full.full-manage"])).toEqual([["Full Example", true], ["Full Admin", true]])
      expect(shown(["host_acme_full.*"])).toEqual([["Full Example", true], ["Full Admin", true]])
    } finally {
      guarded.cleanup()
    }
  })

  it("registers no permissions and no pages when no extension declares any", async () => {
    const host = tempDir("host-root-")
    const panel = tempDir("pelican-")
    try {
      writePanelFolder(panel.path, "pelican")
      expect((await runHost(["--root", host.path, "panel:install", "--panel-root", panel.path])).code).toBe(0)
      const output = runPlugin(join(panel.path, "plugins", "host"))
      expect(output.permissions).toEqual({ ok: [] })
      expect(output.lookups.allPermissionData.ok!.map((group) => group.name)).toEqual(["control", "websocket"])
      expect(output.navigation.server).toEqual({ ok: [] })
      expect(output.global).toHaveLength(1)
    } finally {
      host.cleanup()
      panel.cleanup()
    }
  })
})
