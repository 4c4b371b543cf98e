// Archives: pack, and verify+unpack, of a 20 MB / 2,000-file tree, against `tar czf` and against
// `tar xzf` + `sha256sum` of every file, measured in the same run (median of several runs each,
// interleaved). Ours runs in-process (as `host add` and the server do), through an esbuild bundle
// of src/archive; the baselines are spawned. Goals (P2): verify+unpack <= 1.1x, pack <= 1.0x, of wall
// time; CPU time (all threads of ours, all processes of the baseline) is printed beside them, as it
// varies less on a machine shared with other work.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"
import { report } from "./report.mjs"

const repo = fileURLToPath(new URL("..", import.meta.url))
const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const FILES = 2000
const TOTAL_BYTES = 20 * 1024 * 1024

const missing = ["tar", "sha256sum", "find", "xargs"].find((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0)
if (missing !== undefined) console.log(`skipped: ${missing} is not available`)
else await measure()

async function measure() {
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

    /** Wall and CPU time of ours, in-process: process.cpuUsage counts every thread (zlib and fs run on the pool). */
    const time = async (fn) => {
      const start = process.hrtime.bigint()
      const cpu = process.cpuUsage()
      await fn()
      const used = process.cpuUsage(cpu)
      return { wall: Number(process.hrtime.bigint() - start) / 1e6, cpu: (used.user + used.system) / 1000 }
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
    /** Wall and CPU time of a baseline: the shell's `times` gives the user and system time of its children. */
    const sh = (script) => {
      const start = process.hrtime.bigint()
      const out = execFileSync("sh", ["-c", `${script}\ntimes`], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })
      const wall = Number(process.hrtime.bigint() - start) / 1e6
      const children = out.trim().split("\n").at(-1).match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/)
      if (children === null) throw new Error(`cannot read the CPU time of the baseline from ${JSON.stringify(out)}`)
      const seconds = (minutes, rest) => Number(minutes) * 60 + Number(rest)
      return { wall, cpu: (seconds(children[1], children[2]) + seconds(children[3], children[4])) * 1000 }
    }
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
        async () => packTar.push(sh(`tar czf '${theirs}' -C '${tree}' .`))
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
        async () => {
          mkdirSync(tarDir)
          unpackTar.push(sh(`tar xzf '${ours}' -C '${tarDir}' && find '${tarDir}' -type f -print0 | xargs -0 sha256sum > /dev/null`))
        }
      )
      rmSync(oursDir, { recursive: true, force: true })
      rmSync(tarDir, { recursive: true, force: true })
    }

    const ms = (value) => `${value.toFixed(0).padStart(5)} ms`
    const compare = (label, ours, theirs) => {
      const wall = median(ours.map((run) => run.wall)) / median(theirs.map((run) => run.wall))
      const cpu = median(ours.map((run) => run.cpu)) / median(theirs.map((run) => run.cpu))
      console.log(
        `${label.padEnd(38)} ours ${ms(median(ours.map((run) => run.wall)))}   baseline ${ms(median(theirs.map((run) => run.wall)))}   ratio ${wall.toFixed(2)}x` +
          `   (CPU ours ${ms(median(ours.map((run) => run.cpu)))}, baseline ${ms(median(theirs.map((run) => run.cpu)))}, ${cpu.toFixed(2)}x)`
      )
      return wall
    }
    console.log(
      `tree: ${FILES} files, ${(TOTAL_BYTES / 1024 / 1024).toFixed(0)} MB; archive ${(bytes.length / 1024 / 1024).toFixed(1)} MB; ` +
        `in ${base}; median of ${RUNS} runs`
    )
    const pack = compare("pack (vs tar czf)", packOurs, packTar)
    const unpack = compare("verify+unpack (vs tar xzf + sha256sum)", unpackOurs, unpackTar)
    report({ id: "P2", measure: "verify+unpack 20 MB / 2,000 files vs tar xzf + sha256sum", value: `${unpack.toFixed(2)}x`, goal: "<= 1.1x", met: unpack <= 1.1 })
    report({ id: "P2", measure: "pack 20 MB / 2,000 files vs tar czf", value: `${pack.toFixed(2)}x`, goal: "<= 1.0x", met: pack <= 1.0 })
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
