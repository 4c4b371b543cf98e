// `host registry:build` over 200 small archives (20 ids x 10 versions) against `sha256sum` over the same
// files plus a bare `node -e 0`, measured in the same run, interleaved, median of several runs (issue 38,
// docs/registry.md "Publishing"). Goal: <= 3x of wall time; CPU time (all processes of each side, from the
// shell's `times`) is printed beside it, as it varies less on a machine shared with other work.
// The archives are made once per run by the real export code (`exportExtension`, what `host export` runs),
// bundled with esbuild and run in-process, from fixtures/extensions/hello-world with id and version changed.
import { execFileSync, spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"
import { median } from "./cpu.mjs"
import { report } from "./report.mjs"

const repo = fileURLToPath(new URL("..", import.meta.url))
const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const IDS = 20
const VERSIONS = 10

if (spawnSync("sha256sum", ["--version"], { stdio: "ignore" }).status !== 0) console.log("skipped: sha256sum is not available")
else await measure()

async function measure() {
  const base = process.env.BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir())
  const work = mkdtempSync(join(base, "host-bench-registry-build-"))
  try {
    // 1. The export code, bundled once.
    const bundle = join(work, "export.mjs")
    await build({
      stdin: {
        contents: [
          `export { exportExtension } from "./src/archive/Authoring.ts"`,
          `export { layer as nodeContext } from "@effect/platform-node/NodeContext"`,
          `export { Effect } from "effect"`
        ].join("\n"),
        resolveDir: repo,
        loader: "ts"
      },
      outfile: bundle,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
      logLevel: "warning"
    })
    const { Effect, exportExtension, nodeContext } = await import(pathToFileURL(bundle).href)

    // 2. 200 archives: a copy of hello-world per id, its manifest rewritten for each version.
    const dist = join(work, "dist")
    mkdirSync(dist)
    // The id is written in the manifest and in the frontend bundle (which must agree), so every file says it.
    const renamed = (folder, id) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name)
        if (entry.isDirectory()) renamed(path, id)
        else writeFileSync(path, readFileSync(path, "utf8").replaceAll("acme/hello-world", id))
      }
    }
    for (let id = 0; id < IDS; id++) {
      const source = join(work, `source-${id}`)
      cpSync(join(repo, "fixtures", "extensions", "hello-world"), source, { recursive: true })
      renamed(source, `bench/ext-${String(id).padStart(2, "0")}`)
      const manifestFile = join(source, "extension.yaml")
      const template = readFileSync(manifestFile, "utf8")
      for (let version = 0; version < VERSIONS; version++) {
        writeFileSync(manifestFile, template.replace(/^version: .*$/m, `version: 1.${version}.0`))
        await Effect.runPromise(
          Effect.provide(exportExtension({ path: source, output: `${dist}/`, cwd: work, sign: false, secretKeySource: "HOST_SECRET_KEY" }), nodeContext)
        )
      }
    }
    const archives = readdirSync(dist).filter((name) => name.endsWith(".host"))
    if (archives.length !== IDS * VERSIONS) throw new Error(`expected ${IDS * VERSIONS} archives, made ${archives.length}`)
    const bytes = archives.reduce((sum, name) => sum + readFileSync(join(dist, name)).length, 0)
    const root = join(work, "root")
    mkdirSync(root)

    const sh = (script) => {
      const start = process.hrtime.bigint()
      const out = execFileSync("sh", ["-c", `${script}\ntimes`], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })
      const wall = Number(process.hrtime.bigint() - start) / 1e6
      const children = out.trim().split("\n").at(-1).match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/)
      if (children === null) throw new Error(`cannot read the CPU time from ${JSON.stringify(out)}`)
      const seconds = (minutes, rest) => Number(minutes) * 60 + Number(rest)
      return { wall, cpu: (seconds(children[1], children[2]) + seconds(children[3], children[4])) * 1000 }
    }
    const node = process.execPath
    const files = archives.map((name) => `'${join(dist, name)}'`).join(" ")
    const theirsScript = `sha256sum ${files} > /dev/null && '${node}' -e 0`
    const oursScript = `'${node}' '${join(repo, "bin", "host.js")}' registry:build '${dist}' --root '${root}' --json > /dev/null 2>&1`
    sh(theirsScript) // warm the file cache and the CLI's code cache
    sh(oursScript)
    const ours = []
    const theirs = []
    for (let run = 0; run < RUNS; run++) {
      theirs.push(sh(theirsScript))
      ours.push(sh(oursScript))
    }
    const index = JSON.parse(readFileSync(join(dist, "registry.json"), "utf8"))
    if (index.extensions.length !== IDS || index.extensions.some((entry) => entry.versions.length !== VERSIONS)) {
      throw new Error("registry.json does not list every archive")
    }
    const wall = (samples) => median(samples.map((sample) => sample.wall))
    const cpu = (samples) => median(samples.map((sample) => sample.cpu))
    const ratio = wall(ours) / wall(theirs)
    console.log(`registry:build of ${archives.length} archives (${IDS} ids x ${VERSIONS} versions, ${(bytes / 1024).toFixed(0)} KiB), median of ${RUNS} runs:`)
    console.log(`  sha256sum + node -e 0   ${wall(theirs).toFixed(1)} ms (CPU ${cpu(theirs).toFixed(1)} ms)`)
    console.log(`  host registry:build     ${wall(ours).toFixed(1)} ms (CPU ${cpu(ours).toFixed(1)} ms)`)
    console.log(`  ratio                   ${ratio.toFixed(2)}x (CPU ${(cpu(ours) / cpu(theirs)).toFixed(2)}x) (goal <= 3x)`)
    report({ id: "registry:build", measure: "registry:build 200 archives vs sha256sum + node -e 0", value: `${ratio.toFixed(2)}x`, goal: "<= 3x", met: ratio <= 3 })
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
