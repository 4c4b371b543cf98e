import { spawn, spawnSync } from "node:child_process"
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { hostBin, type HostRun, repoRoot, runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { requirePrograms } from "../support/programs.js"

// panel:install and panel:uninstall run by a user who cannot write the panel's folder (docs/decisions.md
// "panel:install checks it may write before it writes"): the dry run marks each file it could not write and
// says how to run it instead; the real run checks every target before it writes anything, and refuses
// naming the file and the command. The CLI runs as the real user `nobody` (setpriv), on a panel folder
// owned by root with mode 0755 and a Host root that user may write. Only root can switch users: elsewhere
// the suite is skipped.

const temp = tempDirsPerTest()

/** Every file under `root` with its content. */
const snapshot = (root: string): Record<string, string> => {
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

/** `host …` as the user nobody (uid and gid 65534, no supplementary groups). */
const runHostAsNobody = (args: ReadonlyArray<string>): Promise<HostRun> =>
  new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", HOME: "/nonexistent" }
    const child = spawn("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, hostBin, ...args], { cwd: repoRoot, env })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

/** `host …` as root in a mount namespace of its own where `folder` is mounted read-only (EROFS refuses root too). */
const runHostOnReadOnly = (folder: string, args: ReadonlyArray<string>): Promise<HostRun> =>
  new Promise((resolve, reject) => {
    const script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    const child = spawn("unshare", ["-m", "sh", "-c", script, "sh", folder, process.execPath, hostBin, ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

const asRoot = process.getuid?.() === 0
// Mount namespaces need root and a kernel that grants them here (containers may not).
const canMountReadOnly = asRoot && spawnSync("unshare", ["-m", "true"]).status === 0
const programs = requirePrograms(["setpriv"], "panel:install by a user who cannot write the panel's folder")

describe.skipIf(!asRoot || programs.skip)("panel:install by a user who cannot write the panel's folder", () => {
  /** A panel folder owned by root (0755, files 0644) and a Host root nobody may write. */
  const setup = (kind: "pterodactyl-1.11" | "pelican") => {
    programs.assert()
    const host = temp("host-root-")
    chmodSync(host, 0o777)
    const panelParent = temp("panel-")
    chmodSync(panelParent, 0o755)
    const panel = writePanelFolder(join(panelParent, "panel"), kind)
    return { host, panel }
  }

  it("the dry run marks the file it cannot write; the real run refuses before writing anything, naming the file and the command", async () => {
    const { host, panel } = setup("pterodactyl-1.11")
    const before = { host: snapshot(host), panel: snapshot(panel) }
    const blade = join(panel, "resources/views/layouts/scripts.blade.php")

    const dry = await runHostAsNobody(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx", "--dry-run"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain("Would write (nothing written, --dry-run):")
    expect(dry.stdout).toMatch(/append +resources\/views\/layouts\/scripts\.blade\.php \(not writable by nobody\)/)
    // The snippet goes under Host's root, which nobody may write: not marked.
    expect(dry.stdout).toMatch(/create +storage\/host\/webserver\/nginx\.conf\n/)
    expect(dry.stdout).toContain(`Not writable by nobody: run it as root: sudo host --root ${host} panel:install --panel-root ${panel} --web-server nginx`)
    const json = await runHostAsNobody(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx", "--dry-run", "--json"])
    expect(JSON.parse(json.stdout).changes).toContainEqual({ path: blade, action: "append", writable: false })

    const real = await runHostAsNobody(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"])
    expect(real.code).toBe(1)
    expect(real.stderr).not.toContain("FileSystem.open")
    expect(real.stderr).toContain(`${blade} is not writable by nobody`)
    expect(real.stderr).toContain("nothing was written")
    expect(real.stderr).toContain(`sudo host --root ${host} panel:install --panel-root ${panel} --web-server nginx`)
    // Nothing anywhere: not the panel file, not the snippet Host's root would have taken.
    expect({ host: snapshot(host), panel: snapshot(panel) }).toEqual(before)

    // Root installs; nobody's uninstall is then refused the same way, and leaves the block.
    expect((await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"])).code).toBe(0)
    const installed = snapshot(panel)
    const uninstall = await runHostAsNobody(["--root", host, "panel:uninstall", "--panel-root", panel])
    expect(uninstall.code).toBe(1)
    expect(uninstall.stderr).toContain(`${blade} is not writable by nobody`)
    expect(snapshot(panel)).toEqual(installed)
  })

  it("a panel owned by another user is offered to that user too (sudo -u <owner>)", async () => {
    const { host, panel } = setup("pelican")
    // The panel belongs to daemon (uid 1), as a panel belongs to its web server's user.
    const { chownSync } = await import("node:fs")
    const chownAll = (path: string) => {
      chownSync(path, 1, 1)
      if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownAll(join(path, name))
    }
    chownAll(panel)
    const before = snapshot(panel)
    const dry = await runHostAsNobody(["--root", host, "panel:install", "--panel-root", panel, "--dry-run"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/create +plugins\/host\/src\/HostPlugin\.php \(not writable by nobody\)/)
    expect(dry.stdout).toContain(`or sudo -u daemon host --root ${host} panel:install --panel-root ${panel}`)
    const real = await runHostAsNobody(["--root", host, "panel:install", "--panel-root", panel])
    expect(real.code).toBe(1)
    expect(real.stderr).toContain("is not writable by nobody")
    expect(real.stderr).toContain(`sudo -u daemon host --root ${host} panel:install --panel-root ${panel}`)
    expect(snapshot(panel)).toEqual(before)
  })
})

describe.skipIf(!canMountReadOnly)("panel:install as root on a read-only panel folder", () => {
  it("refuses before writing anything, naming the file, instead of failing part-way in FileSystem.open", async () => {
    const host = temp("host-root-")
    const panel = writePanelFolder(temp("panel-"), "pterodactyl-1.11")
    const before = { host: snapshot(host), panel: snapshot(panel) }
    const dry = await runHostOnReadOnly(panel, ["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx", "--dry-run"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/append +resources\/views\/layouts\/scripts\.blade\.php \(not writable by root\)/)
    const real = await runHostOnReadOnly(panel, ["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"])
    expect(real.code).toBe(1)
    expect(real.stderr).not.toContain("FileSystem.open")
    expect(real.stderr).toContain(`${join(panel, "resources/views/layouts/scripts.blade.php")} is not writable by root`)
    expect(real.stderr).toContain("nothing was written")
    expect(real.stderr).toContain(`${join(panel, "resources/views/layouts")} is on a read-only file system: mount it read-write`)
    expect({ host: snapshot(host), panel: snapshot(panel) }).toEqual(before)
  })
})
