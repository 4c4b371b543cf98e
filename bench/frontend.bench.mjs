// P6: the bridge on a panel page. 20 enabled extensions each put a component into dashboard.widgets; the
// time from DOMContentLoaded until all 20 have rendered, median of cold page loads (a fresh browser
// context each: no cache) in headless Chromium, against the same dashboard with no extension enabled
// (until its widgets container is there), measured in the same run. Goal: ≤ 50 ms added (issue 23).
// Also the size of /host/bridge.js gzipped (goal ≤ 25 KB; React is the panel's vendor script, not in it).
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { chromium } from "playwright-core"
import { report } from "./report.mjs"
import { stopServer } from "./serve.mjs"
import { benchPanelRoot } from "./trees.mjs"

const bin = fileURLToPath(new URL("../bin/host.js", import.meta.url))
const publicDir = fileURLToPath(new URL("../dist/public/host/", import.meta.url))
const count = Number(process.env.BENCH_FRONTEND_EXTENSIONS ?? 20)
const loads = Math.max(5, Number(process.env.BENCH_FRONTEND_LOADS ?? 7))
const chromiumPath = process.env.HOST_CHROMIUM_PATH ?? "/usr/bin/chromium"
const token = "host_bench_token"

const gzipKb = (file) => (gzipSync(readFileSync(file), { level: 9 }).length / 1024).toFixed(1)
const bridgeFile = join(publicDir, "bridge.js")
if (!existsSync(bridgeFile)) throw new Error("dist/public/host/bridge.js is missing: run npm run build first")
console.log(`bridge.js: ${(readFileSync(bridgeFile).length / 1024).toFixed(1)} KB, ${gzipKb(bridgeFile)} KB gzip (goal ≤ 25 KB)` +
  (existsSync(join(publicDir, "vendor.js")) ? `; the panel's React (vendor.js) is ${gzipKb(join(publicDir, "vendor.js"))} KB gzip and not part of it` : ""))

if (!existsSync(chromiumPath)) {
  console.log(`P6 skipped: no Chromium at ${chromiumPath}`)
} else {
  const { root, sources, env, host } = benchPanelRoot("host-bench-frontend", bin, token)

  const writeExtension = (index) => {
    const name = `widget-${String(index).padStart(2, "0")}`
    const dir = join(sources, name)
    mkdirSync(join(dir, "resources", "frontend", "dist"), { recursive: true })
    writeFileSync(join(dir, "extension.yaml"), `host: "1.0"\nid: bench/${name}\nname: Widget ${index}\nversion: 1.0.0\ndescription: P6 widget ${index}.\nlicense: MIT\n`)
    writeFileSync(
      join(dir, "resources", "frontend", "dist", "extension.js"),
      `(function(){var h=window.React.createElement;window.__HOST__.sdk.createExtension({id:"bench/${name}",slots:[{slot:"dashboard.widgets",order:${index},` +
        `component:function(p){return h("div",{"data-bench":"${index}"},"Widget ${index} for "+(p.context.user&&p.context.user.username))}}]})})();\n`
    )
    return dir
  }

  const serve = () =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, "--root", root, "serve", "--port", "0"], { env, stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      child.stdout.on("data", (chunk) => {
        out += chunk
        const match = /Listening on (http:\/\/\S+)/.exec(out)
        if (match !== null) resolve({ child, url: match[1] })
      })
      child.once("exit", (code) => reject(new Error(`host serve exited with ${code}`)))
    })

  const ready = async (url) => {
    for (;;) {
      const response = await fetch(`${url}/host/ready`).catch(() => undefined)
      if (response?.status === 200) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    const middle = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  /** ms from DOMContentLoaded until `selector` matches `wanted` elements, per cold load. */
  const measure = async (browser, url, selector, wanted) => {
    const login = await fetch(`${url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", token })
    })
    const cookie = /^([^=;]+)=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")
    if (cookie === null) throw new Error(`sign-in failed: ${login.status}`)
    const times = []
    for (let run = 0; run < loads + 1; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      await context.addCookies([{ name: cookie[1], value: cookie[2], url }])
      await context.addInitScript(({ selector, wanted }) => {
        const bench = (window.__bench = { dcl: undefined, done: undefined })
        document.addEventListener("DOMContentLoaded", () => (bench.dcl = performance.now()))
        new MutationObserver(() => {
          if (bench.done === undefined && document.querySelectorAll(selector).length >= wanted) bench.done = performance.now()
        }).observe(document, { childList: true, subtree: true })
      }, { selector, wanted })
      const page = await context.newPage()
      await page.goto(`${url}/`)
      await page.waitForFunction(() => window.__bench.done !== undefined && window.__bench.dcl !== undefined, undefined, { timeout: 30_000 })
      const { dcl, done } = await page.evaluate(() => window.__bench)
      // The first load warms the server (and the OS file cache); it is not counted.
      if (run > 0) times.push(Math.max(0, done - dcl))
      await context.close()
    }
    return times
  }

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
  try {
    let server = await serve()
    await ready(server.url)
    const baseline = await measure(browser, server.url, "[data-host-slot='dashboard.widgets']", 1)
    await stopServer(server.child)
    for (let index = 0; index < count; index++) host("add", writeExtension(index))
    server = await serve()
    await ready(server.url)
    const loaded = await measure(browser, server.url, "[data-bench]", count)
    await stopServer(server.child)
    const base = median(baseline)
    const withExtensions = median(loaded)
    console.log(`P6: DOMContentLoaded → dashboard shown, no extensions: median ${base.toFixed(1)} ms (${baseline.map((t) => t.toFixed(0)).join(", ")})`)
    console.log(`P6: DOMContentLoaded → all ${count} extension widgets rendered: median ${withExtensions.toFixed(1)} ms (${loaded.map((t) => t.toFixed(0)).join(", ")})`)
    const added = withExtensions - base
    console.log(`P6: added by ${count} extensions: ${added.toFixed(1)} ms, ${loads} cold loads each`)
    report({ id: "P6", measure: `embedded panel, time ${count} extensions' widgets add after DOMContentLoaded`, value: `${added.toFixed(0)} ms`, goal: "≤ 50 ms", met: added <= 50 })
  } finally {
    await browser.close()
    rmSync(root, { recursive: true, force: true })
    rmSync(sources, { recursive: true, force: true })
  }
}
