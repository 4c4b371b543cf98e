import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { startServer } from "../http/helpers.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms } from "../support/programs.js"
import { eventually } from "../support/wait.js"

// The artisan commands Host runs in a Pelican panel (docs/panels.md "Installing into Pelican", "Upgrading the
// panel"), against a stand-in of Pelican's `artisan` run by the real php: it records each call, and its
// `p:plugin:install` behaves as Pelican's does — it enables a plugin that is not installed (writing
// `meta.status` into plugin.json) and refuses one that is ("Plugin is already installed!", exit 0).

const temp = tempDirsPerTest()

const standInArtisan = `<?php
$args = array_slice($argv, 1);
file_put_contents(__DIR__ . '/artisan-calls.log', implode(' ', $args) . "\\n", FILE_APPEND);
if (($args[0] ?? '') === 'p:plugin:install') {
    $file = __DIR__ . '/plugins/' . $args[1] . '/plugin.json';
    $plugin = json_decode((string) file_get_contents($file), true);
    if (isset($plugin['meta'])) {
        echo "Plugin is already installed!\\n";
        exit(0);
    }
    $plugin['meta'] = ['status' => 'enabled', 'status_message' => null, 'load_order' => 0];
    file_put_contents($file, json_encode($plugin, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
    echo "Plugin installed and enabled.\\n";
}
`

const pelicanWithArtisan = () => {
  const panel = writePanelFolder(temp("pelican-"), "pelican")
  writeFileSync(join(panel, "artisan"), standInArtisan)
  return panel
}

const calls = (panel: string): ReadonlyArray<string> =>
  existsSync(join(panel, "artisan-calls.log")) ? readFileSync(join(panel, "artisan-calls.log"), "utf8").trim().split("\n") : []

describeWithPrograms(["php"], "artisan commands in a Pelican panel", () => {
  it("installs the plugin with p:plugin:install, then clears Filament's cache when only its code changes", async () => {
    const host = temp("host-root-")
    const panel = pelicanWithArtisan()
    const first = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout).commands).toEqual([
      { command: "php artisan p:plugin:install host --no-interaction", ran: true, exitCode: 0, output: "Plugin installed and enabled." }
    ])
    expect(JSON.parse(readFileSync(join(panel, "plugins/host/plugin.json"), "utf8")).meta.status).toBe("enabled")

    // Nothing changed: nothing runs.
    const again = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])
    expect(JSON.parse(again.stdout).commands).toEqual([])

    // The plugin is installed and a code file differs (a Host upgrade rewrites it): p:plugin:install would
    // refuse, so the rewritten pages are made visible by clearing Filament's component cache.
    writeFileSync(join(panel, "plugins/host/src/Pages/ServerExtensionPage.php"), "<?php\n")
    const upgraded = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--json"])
    expect(upgraded.code, upgraded.stderr).toBe(0)
    expect(JSON.parse(upgraded.stdout).commands).toEqual([{ command: "php artisan filament:optimize-clear", ran: true, exitCode: 0, output: "" }])
    expect(calls(panel)).toEqual(["p:plugin:install host --no-interaction", "filament:optimize-clear"])
  })

  it("the self-heal clears Filament's cache after it writes the plugin back, and not after a refresh of its data files", async () => {
    const host = temp("host-root-")
    const panel = pelicanWithArtisan()
    const env = { HOST_PANEL_DRIVER: "pelican", HOST_PANEL_URL: "http://127.0.0.1:9", HOST_PANEL_ROOT: panel, HOST_DEBUG: JSON.stringify({ panel_heal_ms: 100 }) }
    expect((await runHost(["--root", host, "panel:install"], { env })).code).toBe(0)
    expect(calls(panel)).toEqual(["p:plugin:install host --no-interaction"])
    const server = await startServer(host, { env })
    try {
      const statusFile = join(host, "storage/host/panel-status.json")
      const read = () => (existsSync(statusFile) ? JSON.parse(readFileSync(statusFile, "utf8")) : null)
      // A data file that differs is written back as a refresh (what follows the extensions), with no command.
      const permissions = join(panel, "plugins/host/permissions.json")
      const written = readFileSync(permissions, "utf8")
      writeFileSync(permissions, "{}\n")
      await eventually(() => readFileSync(permissions, "utf8"), (text) => text === written, { what: "permissions.json written back" })
      const checked = (await eventually(read, (status) => status?.selfHeal?.checks >= 1, { what: "a check recorded" })).selfHeal.checks
      await eventually(read, (status) => status?.selfHeal?.checks > checked, { what: "a later check" })
      expect(read().selfHeal.heals).toBe(0)
      expect(calls(panel)).toEqual(["p:plugin:install host --no-interaction"])
      rmSync(join(panel, "plugins", "host"), { recursive: true })
      await eventually(read, (status) => status?.selfHeal?.heals === 1, { what: "the heal counted" })
      await eventually(() => calls(panel), (list) => list.length === 2, { what: "the cache cleared" })
      expect(calls(panel)).toEqual(["p:plugin:install host --no-interaction", "filament:optimize-clear"])
      expect(existsSync(join(panel, "plugins/host/src/Pages/ServerExtensionPage.php"))).toBe(true)
    } finally {
      await server.stop()
    }
  })
})
