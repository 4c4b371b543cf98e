import { build, type BuildOptions } from "esbuild"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
// @ts-expect-error the build's options are a plain JavaScript module
import { cliBundleOptions } from "../../scripts/cli-bundle.mjs"
import { repoRoot } from "../support/cli.js"

const cliBundle: BuildOptions = cliBundleOptions

// What every command evaluates at start is what dist/host.cjs reaches from its entry through static
// imports; the rest waits behind an `import()` until a run needs it (docs/architecture.md, "Startup").
// Modules a plain `host list` on an empty panel never uses must stay behind one (docs/decisions.md,
// "Cold start: …").

/** The CLI bundle's metafile: every input with what it imports, and what each put in the output. */
const bundleMetafile = async () => {
  const result = await build({
    absWorkingDir: repoRoot,
    ...cliBundle,
    write: false,
    outfile: join(repoRoot, "dist", "startup-graph.cjs"),
    metafile: true,
    logLevel: "silent"
  })
  return result.metafile
}

const staticGraph = async (): Promise<ReadonlySet<string>> => {
  const inputs = (await bundleMetafile()).inputs
  const reached = new Set<string>()
  const pending = ["src/cli/bin.ts"]
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue
    reached.add(file)
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind === "import-statement" || imported.kind === "require-call") pending.push(imported.path)
    }
  }
  return reached
}

describe("what a command evaluates at start", () => {
  it("leaves out the manifest's rules and their packages", async () => {
    const reached = [...await staticGraph()]
    for (const file of ["src/domain/Manifest.ts", "src/domain/Schedules.ts", "src/domain/Settings.ts", "src/domain/StoredManifest.ts"]) {
      expect(reached).not.toContain(file)
    }
    expect(reached.filter((file) => /node_modules\/(cron-parser|luxon)\//.test(file) || file.endsWith("node_modules/semver/index.js"))).toEqual([])
    // The check sees the graph: the data layer the commands build is in it.
    expect(reached).toContain("src/store/ExtensionsRepo.ts")
  })

  it("holds no undici: Host's HTTP clients are node:http's, and every start reads the whole bundle", async () => {
    // scripts/http-client-without-undici.mjs (docs/decisions.md "P1 floor: the bundle is read once").
    // (NodeHttpServer's module still imports the package's NodeHttpClient, for a test layer esbuild drops.)
    const output = Object.entries(Object.values((await bundleMetafile()).outputs)[0]?.inputs ?? {})
    const bundled = output.filter(([, { bytesInOutput }]) => bytesInOutput > 0).map(([file]) => file)
    expect(bundled.filter((file) => /node_modules\/undici\//.test(file))).toEqual([])
    expect(bundled.some((file) => file.endsWith("@effect/platform-node/dist/esm/internal/httpClient.js"))).toBe(true)
  })
})
