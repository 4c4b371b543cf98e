// Archives: pack, and verify+unpack, of a 20 MB / 2,000-file tree, against `tar czf` and against
// `tar xzf` + `sha256sum` of every file, measured in the same run (median of several runs each,
// interleaved). Ours runs in-process (as `host add` and the server do), through an esbuild bundle
// of src/archive; the baselines are spawned. The install-side goal is verify+unpack <= 1.5x.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"

const repo = fileURLToPath(new URL("..", import.meta.url))
const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const FILES = 2000
const TOTAL_BYTES = 20 * 1024 * 1024

for (const tool of ["tar", "sha256sum", "find", "xargs"]) {
  if (spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0) {
    console.log(`skipped: ${tool} is not available`)
    process.exit(0)
  }
}

// On a RAM file system (tmpfs) when there is one, so the figures compare the software rather than
// the disk's writeback (which, on a VM disk, varies several-fold between runs). BENCH_DIR overrides.
const base = process.env.BENCH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir())
const onDisk = process.env.BENCH_DIR !== undefined || !existsSync("/dev/shm")
const work = mkdtempSync(join(base, "host-bench-archive-"))
try {
  // 1. The framework's own archive code, bundled once.
  const bundle = join(work, "archive.mjs")
  await build({
    stdin: {
      contents: [
        `export { packTree, inspectArchive, unpackArchive, defaultLimits } from "./src/archive/Archive.ts"`,
        `export { emptyKeyring } from "./src/archive/Signing.ts"`,
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
  const { Effect, defaultLimits, emptyKeyring, inspectArchive, nodeContext, packTree, unpackArchive } = await import(
    pathToFileURL(bundle).href
  )
  const run = (effect) => Effect.runPromise(Effect.provide(effect, nodeContext))

  // 2. A tree of 2,000 files adding up to 20 MB: source-like text (compresses ~3-4x) and some
  //    incompressible binary assets, in 100 folders up to three levels deep. Seeded, so every run
  //    of the bench packs the same tree.
  const tree = join(work, "tree")
  let seed = 42
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const words = Array.from({ length: 800 }, (_, i) => `w${(i * 2654435761 % 99991).toString(36)}`)
  const text = (size) => {
    const parts = []
    let length = 0
    while (length < size) {
      const line = `${Array.from({ length: 8 }, () => words[Math.floor(random() * words.length)]).join(" ")};\n`
      parts.push(line)
      length += line.length
    }
    return Buffer.from(parts.join("")).subarray(0, size)
  }
  const binary = (size) => Buffer.from(Array.from({ length: size }, () => Math.floor(random() * 256)))
  mkdirSync(tree, { recursive: true })
  writeFileSync(join(tree, "extension.yaml"), 'host: "1.0"\nid: acme/bench\nname: Bench\nversion: 1.0.0\ndescription: Bench tree.\nlicense: MIT\n')
  const weights = Array.from({ length: FILES - 1 }, () => 0.2 + random() * 1.8)
  const scale = (TOTAL_BYTES - 100) / weights.reduce((a, b) => a + b, 0)
  for (let i = 0; i < FILES - 1; i++) {
    const folder = join(tree, `mod${i % 10}`, `part${Math.floor(i / 10) % 10}`, i % 3 === 0 ? "assets" : "src")
    mkdirSync(folder, { recursive: true })
    const size = Math.round(weights[i] * scale)
    writeFileSync(join(folder, `file${i}.${i % 10 === 9 ? "bin" : "js"}`), i % 10 === 9 ? binary(size) : text(size))
  }

  const time = async (fn) => {
    const start = process.hrtime.bigint()
    await fn()
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const sh = (script) => execFileSync("sh", ["-c", script], { stdio: ["ignore", "ignore", "inherit"] })
  // On a disk, flush dirty pages before each timed run, so no run pays for the writeback of the one before.
  const settle = () => {
    if (onDisk) execFileSync("sync")
  }
  /** Runs both in alternating order, so neither always goes first. */
  const pair = async (i, a, b) => {
    if (i % 2 === 0) {
      settle()
      await a()
      settle()
      await b()
    } else {
      settle()
      await b()
      settle()
      await a()
    }
  }

  // 3. Pack: ours (list, read, hash, tar, gzip, write) vs tar czf.
  const ours = join(work, "ours.host")
  const theirs = join(work, "theirs.tar.gz")
  const packOurs = []
  const packTar = []
  for (let i = 0; i < RUNS; i++) {
    await pair(
      i,
      async () =>
        packOurs.push(await time(async () => {
          const packed = await run(packTree(tree))
          writeFileSync(ours, packed.bytes)
        })),
      async () => packTar.push(await time(() => sh(`tar czf '${theirs}' -C '${tree}' .`)))
    )
  }

  // 4. Verify + unpack of the same archive: ours (read, every check, write into a fresh staging
  //    folder) vs tar xzf into a fresh folder, then sha256sum of every file.
  const bytes = readFileSync(ours)
  const unpackOurs = []
  const unpackTar = []
  for (let i = 0; i < RUNS; i++) {
    const oursDir = join(work, `staging-${i}`)
    const tarDir = join(work, `tar-${i}`)
    await pair(
      i,
      async () =>
        unpackOurs.push(await time(async () => {
          const inspection = await run(inspectArchive(readFileSync(ours), {
            source: "ours.host",
            limits: defaultLimits,
            keyring: emptyKeyring
          }))
          if (inspection.status !== "unsigned") throw new Error(`unexpected status ${inspection.status}`)
          await run(unpackArchive(inspection, { into: oursDir }))
        })),
      async () =>
        unpackTar.push(await time(() => {
          mkdirSync(tarDir)
          sh(`tar xzf '${ours}' -C '${tarDir}' && find '${tarDir}' -type f -print0 | xargs -0 sha256sum > /dev/null`)
        }))
    )
    rmSync(oursDir, { recursive: true, force: true })
    rmSync(tarDir, { recursive: true, force: true })
  }

  const line = (label, a, b) =>
    console.log(`${label.padEnd(38)} ours ${median(a).toFixed(0).padStart(5)} ms   baseline ${median(b).toFixed(0).padStart(5)} ms   ratio ${(median(a) / median(b)).toFixed(2)}x`)
  console.log(
    `tree: ${FILES} files, ${(TOTAL_BYTES / 1024 / 1024).toFixed(0)} MB; archive ${(bytes.length / 1024 / 1024).toFixed(1)} MB; ` +
      `in ${base}; median of ${RUNS} runs`
  )
  line("pack (vs tar czf)", packOurs, packTar)
  line("verify+unpack (vs tar xzf + sha256sum)", unpackOurs, unpackTar)
  const ratio = median(unpackOurs) / median(unpackTar)
  console.log(`install-side goal <= 1.5x: ${ratio <= 1.5 ? "met" : "NOT met"} (${ratio.toFixed(2)}x)`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
