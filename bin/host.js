#!/usr/bin/env node
// `host`: runs the esbuild bundle made by `npm run build` (run by `npm install`). The bundle is compiled
// with V8's code cache (dist/host.cjs.<command>.cache, below), written after a run so it holds every
// function that run compiled: about 80 ms less per start than a plain import. A stale or foreign cache is
// rejected by V8 and rewritten; an unwritable dist/ only costs the speed-up.
//
// This file is CommonJS (bin/package.json): an ES module entry costs every command the start of Node's
// ES module loader, several milliseconds of its cold start (docs/architecture.md, "Startup").
const { closeSync, fstatSync, openSync, readSync, renameSync, statSync, writeFileSync } = require("node:fs")
const { createRequire } = require("node:module")
const { dirname, join } = require("node:path")
const { Script } = require("node:vm")
const { setFlagsFromString } = require("node:v8")

// Most commands live for well under a second: V8's optimising compiler and its parallel garbage
// collector would spend more CPU on other threads than they save before the process exits (measured in
// bench/startup.bench.mjs and bench/reconcile.bench.mjs; docs/architecture.md, "Startup"). Nor does the
// young generation grow: nearly everything a command allocates while it starts lives to its end, so a
// larger young generation only means more fresh memory to touch and copy through (docs/decisions.md
// "The young generation of a short command stays small"). The servers and watchers run for hours and
// keep V8's defaults.
const longRunning = process.argv.slice(2).some((arg) => ["serve", "host:serve", "dev", "host:dev", "--watch"].includes(arg))
if (!longRunning) setFlagsFromString("--no-opt --no-parallel-scavenge --semi-space-growth-factor=1")

// A command prints stack traces only with --verbose (or HOST_DEBUG set). Otherwise none are recorded:
// Effect records one for every traced call and service, which costs a short command about a seventh of
// its CPU time (docs/decisions.md, "Short commands record no stack traces").
const wantsStacks = process.argv.includes("--verbose") || (process.env.HOST_DEBUG ?? "") !== ""
if (!longRunning && !wantsStacks) Error.stackTraceLimit = 0

const bundle = join(__dirname, "..", "dist", "host.cjs")

/**
 * The command this run names (`host:list` is `list`), found as src/cli/main.ts finds it: the first argument
 * that is neither a flag nor the folder of `--root`. Undefined for `host`, `--help` and `--version`.
 */
const commandName = () => {
  const args = process.argv.slice(2)
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]
    if (arg === "--") return undefined
    if (arg === "--root") index++
    else if (!arg.startsWith("-")) return arg.startsWith("host:") ? arg.slice("host:".length) : arg
  }
  return undefined
}

// V8 rejects a code cache made under other flags, and the long-running commands run with other flags
// than the short ones (above): with one file, `host serve` started after any command compiled the whole
// bundle again, and so did the first command after the server stopped, each rewriting the file for the
// other to reject. So each kind has its own (docs/decisions.md "A code cache per kind of command").
// A cache holds what the run that wrote it compiled, and every start deserialises all of it. One shared by
// the short commands held `host list`'s functions (the build writes it), so `reconcile` or `add` compiled
// the rest of theirs on every run. So each built-in command keeps its own, first written by its first run
// (docs/decisions.md "A code cache per command"); `host`, `--help`, `--version`, extension commands and
// mistyped names share the plain file.
const plainCache = `${bundle}.cache`
const named = longRunning ? undefined : commandName()
const ownCache = longRunning
  ? `${bundle}.server.cache`
  : named !== undefined && /^[a-z][a-z0-9-]*(:[a-z0-9-]+)*$/.test(named)
  ? `${bundle}.${named.replaceAll(":", "-")}.cache`
  : plainCache
const bundleStats = statSync(bundle, { throwIfNoEntry: false })
if (bundleStats === undefined) {
  process.stderr.write("error: host: the CLI is not built; run `npm run build` (or `npm install`) first\n")
  process.exit(1)
}

// Code compiled from V8's cache loses its dynamic-import hook, so the bundle imports extension modules
// (ES modules compiled on load) through this function, compiled by Node's own loader.
globalThis[Symbol.for("host.import")] = (url) => import(url)

// V8 checks a cache only against the length of the source it was made from: a rebuilt bundle of the same
// length would run the previous build's functions. So a cache older than the bundle is not used (and a
// new one is written); the build also removes the old ones (docs/architecture.md "Startup").
const usable = (file) => {
  const stats = statSync(file, { throwIfNoEntry: false })
  return stats !== undefined && stats.mtimeMs >= bundleStats.mtimeMs ? stats : undefined
}
// Until a command has its own cache it runs from the plain one, if there is one.
const ownStats = usable(ownCache)
const plainStats = ownStats === undefined && !longRunning ? usable(plainCache) : undefined
const loadedCache = ownStats !== undefined ? ownCache : plainStats !== undefined ? plainCache : undefined
const cacheSize = (ownStats ?? plainStats)?.size ?? 0

/** Reads the whole of `file` into `buffer` (a larger one when it does not fit); returns the bytes read. */
const readWhole = (file, buffer) => {
  const fd = openSync(file, "r")
  try {
    const size = fstatSync(fd).size
    const bytes = size <= buffer.length ? buffer.subarray(0, size) : Buffer.allocUnsafeSlow(size)
    let read = 0
    for (let got; read < size && (got = readSync(fd, bytes, read, size - read, null)) > 0; ) read += got
    return bytes.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}
// The bundle and its code cache are read through one buffer, as large as the larger of the two: the
// bundle's text is copied out of it into a string (Node copies a string this large into memory of its own),
// then the cache is read into the same pages, so it costs no fresh memory (on this machine a page touched
// for the first time costs more than the copy into it; docs/decisions.md "P1 floor: the bundle is read once").
// The build makes the bundle pure ASCII (scripts/build.mjs), so latin1 reads the same text as UTF-8
// without decoding its 2 MB: a few milliseconds of every start
// (docs/decisions.md "The bundle is read as latin1"). The build also writes the bundle already wrapped
// as Node wraps a CommonJS module (scripts/cli-bundle.mjs), so V8 compiles the string Node made as it is:
// joining Module.wrap's text around it made V8 copy all of it into its heap once more.
const buffer = readWhole(bundle, Buffer.allocUnsafeSlow(Math.max(bundleStats.size, cacheSize)))
const source = buffer.toString("latin1")
// The first line of the bundle, as the build writes it (scripts/cli-bundle.mjs, its `banner`). A bundle of
// an older build (not wrapped, as after a `git pull` before `npm run build`) would fail deep inside: say so
// instead.
if (!source.startsWith("(function (exports, require, module, __filename, __dirname) { ")) {
  process.stderr.write("error: host: dist/host.cjs was built for another version of bin/host.js; run `npm run build` (or `npm install`)\n")
  process.exit(1)
}
const cachedData = loadedCache === undefined ? undefined : readWhole(loadedCache, buffer)
const script = new Script(source, { filename: bundle, cachedData })
const rejected = cachedData === undefined || script.cachedDataRejected
if (rejected || loadedCache !== ownCache) {
  // The bundle says when a run is a built-in command (cli/CodeCache.ts): only then is a file of its name
  // made. Any other run keeps the plain file, unless it was a usage error (exit 2): a mistyped command
  // loads every command to say so, and that cache would make every command's first one as large.
  let builtin = false
  globalThis[Symbol.for("host.builtin")] = () => {
    builtin = true
  }
  let written = false
  const writeCache = (exitCode) => {
    const file = longRunning || builtin ? ownCache : exitCode !== 2 && (rejected || loadedCache !== plainCache) ? plainCache : undefined
    if (written || file === undefined) return
    written = true
    try {
      const temporary = `${file}.${process.pid}`
      writeFileSync(temporary, script.createCachedData())
      renameSync(temporary, file)
    } catch {
      // Read-only install: run without the cache.
    }
  }
  // A command writes the cache as it exits. `host serve` calls this once its first generation is up
  // (cli/CodeCache.ts): what it compiled to start is what the next start needs, while at exit the cache
  // would hold whatever hours of requests compiled, or nothing at all after a kill.
  globalThis[Symbol.for("host.started")] = () => writeCache(undefined)
  process.once("exit", writeCache)
}
const bundleModule = { exports: {} }
script.runInThisContext()(bundleModule.exports, createRequire(bundle), bundleModule, bundle, dirname(bundle))
