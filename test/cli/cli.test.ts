import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runHost, tempDir } from "../support/cli.js"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()))
const freshRoot = () => {
  const root = tempDir("host-root-")
  cleanups.push(root.cleanup)
  return root.path
}

describe("host list", () => {
  it("prints [] on a fresh root, which then holds the four tables", async () => {
    const root = freshRoot()
    const run = await runHost(["list", "--json", "--root", root])
    expect(run).toEqual({ code: 0, stdout: "[]\n", stderr: "" })
    const status = await runHost(["status", "--json"], { env: { HOST_ROOT: root } })
    expect(JSON.parse(status.stdout).extensions).toEqual({ total: 0, enabled: 0, disabled: 0 })
  })

  it("says so in text when nothing is installed", async () => {
    const run = await runHost(["list", "--root", freshRoot()])
    expect(run.stdout).toBe("No extensions installed.\n")
  })

  it("accepts the host:-prefixed name and --root=DIR anywhere", async () => {
    const root = freshRoot()
    const run = await runHost(["host:list", `--root=${root}`, "--json"])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("[]\n")
  })
})

describe("errors", () => {
  // Short commands record no stack traces unless asked (docs/decisions.md): --verbose must still show one.
  it("show the failure's stack trace with --verbose, and only then", async () => {
    const missing = join(freshRoot(), "no-such-panel")
    const stackLine = /^\s+at .+$/m
    const plain = await runHost(["list", "--root", missing])
    expect(plain.code).toBe(1)
    expect(plain.stderr).toContain(`error: list: Host's root ${missing} does not exist`)
    expect(plain.stderr).not.toMatch(stackLine)
    const verbose = await runHost(["list", "--verbose", "--root", missing])
    expect(verbose.code).toBe(1)
    expect(verbose.stderr).toContain(`RootNotFound: Host's root ${missing} does not exist`)
    // The failure's own trace comes first; the span's two lines (where HostConfig.load was defined and
    // called) follow. Without a recorded trace only the span's lines would be there.
    const frames = verbose.stderr.split("\n").filter((line) => stackLine.test(line))
    expect(frames.length).toBeGreaterThanOrEqual(3)
    expect(frames[0]).not.toContain("HostConfig.load")
  })
})

describe("host status", () => {
  it("reports version, database, extensions, registry, artifacts, lock and drift", async () => {
    const root = freshRoot()
    const json = await runHost(["status", "--json", "--root", root])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({
      version: "1.2.3",
      root,
      database: { url: "sqlite:storage/host/host.db", ok: true },
      extensions: { total: 0, enabled: 0, disabled: 0 },
      registry: {
        url: null,
        cache: {
          path: join(root, "storage/host/registry-cache.json"),
          last_sync: null,
          age_seconds: null,
          ttl_seconds: 3600,
          status: "missing",
          extensions: 0,
          cache_size_bytes: 0
        }
      },
      artifacts: { path: join(root, "storage/host/artifacts"), count: 0, bytes: 0 },
      lock: null,
      leftovers: { uploads: [], staging: [] },
      drift: { checked: 0, modified: [], missing: [], unverifiable: [], linked: [] },
      quarantined: 0,
      corrupt: 0,
      frontendErrors: {},
      // The embedded panel: no real panel to report on (docs/panels.md).
      panel: { driver: "embedded", panel: null, include: null, answers: null, snippets: [], selfHeal: null, identityCache: null, problem: null },
      anchors: []
    })
    const text = await runHost(["status", "--root", root])
    expect(text.stdout).toContain("Host:       1.2.3")
    expect(text.stdout).toContain("Lock:       free")
    expect(text.stdout).toContain(`Artifacts:  0 archive(s), 0 bytes in ${join(root, "storage/host/artifacts")}`)
  })

  it("reads the registry cache", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "config"))
    writeFileSync(join(root, "config", "host.yaml"), "registry_url: file:///srv/registry\nregistry_cache_ttl: 0\n")
    mkdirSync(join(root, "storage", "host"), { recursive: true })
    writeFileSync(
      join(root, "storage", "host", "registry-cache.json"),
      JSON.stringify({ fetched_at: new Date(Date.now() - 5000).toISOString(), registry: { version: "1.0", extensions: [{}, {}] } })
    )
    const run = await runHost(["status", "--json", "--extensions", "--root", root])
    const report = JSON.parse(run.stdout)
    expect(report.registry.url).toBe("file:///srv/registry")
    expect(report.registry.cache).toMatchObject({ status: "no-expiry", extensions: 2, ttl_seconds: 0 })
    expect(report.registry.cache.age_seconds).toBeGreaterThanOrEqual(4)
    expect(report.installed).toEqual([])
  })

})

describe("errors and exit codes", () => {
  it("a --root that does not exist is an error, and no panel is made there", async () => {
    const missing = join(freshRoot(), "no", "such", "panel")
    const run = await runHost(["list", "--root", missing])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe(`error: list: Host's root ${missing} does not exist; pass --root (or HOST_ROOT) the folder Host keeps its config/ and storage/ in (not the panel's folder), or create the folder first\n`)
    expect(existsSync(join(missing, ".."))).toBe(false)
  })

  it("takes --json before the command too", async () => {
    const run = await runHost(["--json", "list", "--root", freshRoot()])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual([])
  })

  it("names a bad configuration key, exit 1, and with --json one error document on stdout", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "config"))
    writeFileSync(join(root, "config", "host.yaml"), "server:\n  port: 99999\n")
    const run = await runHost(["list", "--json", "--root", root])
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: "ConfigInvalid", message: expect.stringMatching(/^list: config\/host\.yaml: server\.port: .*65535/) } })
    expect(run.stderr).toMatch(/^error: list: config\/host\.yaml: server\.port: .*65535/)
    expect(run.stderr).toContain("hint: fix config/host.yaml")
  })

  it("names an environment override that is wrong", async () => {
    const run = await runHost(["list", "--root", freshRoot()], { env: { HOST_PORT: "eighty" } })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("server.port (from HOST_PORT)")
  })

  it("warns about unknown config keys on stderr, keeping --json clean", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "config"))
    writeFileSync(join(root, "config", "host.yaml"), "colour: blue\n")
    const run = await runHost(["list", "--json", "--root", root])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("[]\n")
    expect(run.stderr).toBe(`warning: config/host.yaml: colour: unknown configuration key "colour" is ignored\n`)
  })

  it("exits 2 on usage errors, each an error: line", async () => {
    const root = freshRoot()
    const typo = await runHost(["lisst", "--root", root])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toMatch(/^error: lisst: Invalid subcommand for host/)
    const unknown = await runHost(["list", "--bogus", "--root", root])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim()).toBe("error: list: Received unknown argument: '--bogus'")
    const missing = await runHost(["add", "--root", root])
    expect(missing.code).toBe(2)
    expect(missing.stderr.trim()).toBe("error: add: Missing argument <source>")
    expect((await runHost(["list", "--root"])).code).toBe(2)
  })

  it("refuses a HOST_DEBUG that is not the debug object, naming the key (exit 2)", async () => {
    const run = await runHost(["list", "--root", freshRoot()], { env: { HOST_DEBUG: JSON.stringify({ crash: "staged" }) } })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^error: HOST_DEBUG is not valid: /)
    expect(run.stderr).toContain('"crash"')
  })

  it("says when a registry install has no registry to use", async () => {
    const run = await runHost(["add", "acme/not-here@^1.0", "--root", freshRoot()])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^error: add: no registry is configured/)
  })

  it("prints one JSON error document for a failing --json run, also a usage error", async () => {
    const failing = await runHost(["add", join(freshRoot(), "nothing-here"), "--json", "--root", freshRoot()])
    expect(failing.code).toBe(1)
    expect(JSON.parse(failing.stdout).error).toMatchObject({ code: expect.any(String), message: expect.stringContaining("nothing-here") })
    expect(failing.stderr).toMatch(/^error: add: /m)
    const usage = await runHost(["list", "--json", "--no-such-flag", "--root", freshRoot()])
    expect(usage.code).toBe(2)
    expect(JSON.parse(usage.stdout)).toEqual({ error: { code: "UsageError", message: "list: invalid arguments (see host list --help)" } })
  })

  it("prints help listing every command", async () => {
    const run = await runHost(["--help"])
    expect(run.code).toBe(0)
    expect(run.stdout).not.toMatch(/\u001b\[/)
    for (const command of ["validate", "list", "status", "add", "reconcile", "serve", "registry:sync", "panel:token", "schedule:list", "new", "build", "dev"]) {
      expect(run.stdout).toContain(command)
    }
  })

  it("prints the version", async () => {
    const run = await runHost(["--version"])
    expect(run).toEqual({ code: 0, stdout: "1.2.3\n\n", stderr: "" })
    // After the command and its flags, the command's own --version (@effect/cli's) says the same.
    expect((await runHost(["list", "--version"])).stdout).toBe(run.stdout)
  })
})

describe("HOST_DEBUG spans", () => {
  interface Line { readonly name: string; readonly parent: string | null; readonly start_ms: number; readonly duration_ms: number; readonly failed: boolean }
  const readLines = (file: string): ReadonlyArray<Line> => readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Line)

  it("writes each span of a plan as it ends: its parent, when it started and how long it took", async () => {
    const root = freshRoot()
    mkdirSync(join(root, "desired-state"))
    writeFileSync(join(root, "desired-state", "extensions.yaml"), 'host: "1.0"\nextensions: {}\n')
    const file = join(root, "spans.jsonl")
    const run = await runHost(["reconcile", "--dry-run", "--root", root], { env: { HOST_DEBUG: JSON.stringify({ spans: file }) } })
    expect(run.code).toBe(0)
    const lines = readLines(file)
    const named = (name: string) => lines.filter((line) => line.name === name)
    // The phases of a plan (docs/operations.md "The debug variable"), in the order they ran.
    const phases = ["Reconcile.readDesiredFile", "TreeCache.read", "ExtensionsRepo.list", "Reconcile.readInstalledFiles", "Reconcile.readCandidates", "Reconcile.planActions", "Reconcile.printPlan"]
    const firstStarts = phases.map((name) => named(name)[0]?.start_ms)
    expect(firstStarts.every((start) => typeof start === "number")).toBe(true)
    expect([...firstStarts].sort((a, b) => a! - b!)).toEqual(firstStarts)
    expect(named("ExtensionsRepo.list")[0]!.parent).toBe("Reconcile.readActual")
    expect(named("Reconcile.readInstalledFiles")[0]!.parent).toBe("Reconcile.readActual")
    const end = (line: Line) => line.start_ms + line.duration_ms
    lines.forEach((line, index) => {
      expect(line.failed).toBe(false)
      expect(line.start_ms).toBeGreaterThan(0)
      expect(line.duration_ms).toBeGreaterThanOrEqual(0)
      // A span ends before its parent does, so its parent's line comes later in the file, and ends later
      // (to the hundredths of a millisecond the file keeps).
      if (line.parent === null) return
      const parent = lines.slice(index + 1).find((candidate) => candidate.name === line.parent)
      expect(parent, `${line.name}'s parent ${line.parent}`).toBeDefined()
      expect(end(line)).toBeLessThanOrEqual(end(parent!) + 0.02)
    })
  })

  it("refuses a file it cannot write (spans, lock_log) before the command does anything (exit 2)", async () => {
    const root = freshRoot()
    const file = join(root, "no-such-folder", "spans.jsonl")
    const run = await runHost(["list", "--root", root], { env: { HOST_DEBUG: JSON.stringify({ spans: file }) } })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(new RegExp(`^error: HOST_DEBUG is not valid: spans: cannot write ${file} \\(ENOENT`))
    // Nothing was made: not the file, and not the panel's database.
    expect(existsSync(file)).toBe(false)
    expect(existsSync(join(root, "storage"))).toBe(false)
    // The lock's log is a file the run appends to as well.
    const lockLog = await runHost(["list", "--root", root], { env: { HOST_DEBUG: JSON.stringify({ lock_log: file }) } })
    expect(lockLog.code).toBe(2)
    expect(lockLog.stderr).toMatch(/^error: HOST_DEBUG is not valid: lock_log: cannot write /)
    expect(existsSync(join(root, "storage"))).toBe(false)
  })

  it("keeps the run going when spans can no longer be appended, with one warning", async () => {
    // /dev/full opens, and every write to it fails as a full disk does.
    const root = freshRoot()
    const run = await runHost(["list", "--json", "--root", root], { env: { HOST_DEBUG: JSON.stringify({ spans: "/dev/full" }) } })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("[]\n")
    expect(run.stderr).toBe("warning: HOST_DEBUG spans: cannot append to /dev/full (ENOSPC: no space left on device, write); no more spans are written\n")
  })

  it("marks a span that failed", async () => {
    const root = freshRoot()
    const file = join(root, "spans.jsonl")
    const run = await runHost(["reconcile", "--dry-run", "--file", join(root, "missing.yaml"), "--root", root], { env: { HOST_DEBUG: JSON.stringify({ spans: file }) } })
    expect(run.code).not.toBe(0)
    expect(readLines(file).find((line) => line.name === "Reconcile.readDesiredFile")).toMatchObject({ parent: null, failed: true })
  })
})
