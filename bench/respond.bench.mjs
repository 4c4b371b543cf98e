// What encoding an answer through its contract costs (http/api/Respond.ts, docs/decisions.md "Answers are
// encoded by their contract"): `respond` runs Schema.encode of the endpoint's success schema before
// JSON.stringify; before, it only serialised. Measured in this process on the admin API's largest usual
// answers — the activity log at its limit (1000 rows, `GET activity?limit=1000`), a page of 50, and the
// account answer (the smallest) — as µs per answer, encoded against serialised only. The three precomputed
// client bodies (slots, extensions, config) do not go through `respond` and are not measured here.
// `node bench/respond.bench.mjs` alone, or `npm run bench -- respond`.
import { build } from "esbuild"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const repo = fileURLToPath(new URL("..", import.meta.url))
const bundle = join(repo, "dist", "bench", "respond.mjs")
await build({
  stdin: {
    contents: [
      `export { respond } from "./src/http/api/Respond.ts"`,
      `export { ActivityBody } from "./src/http/contracts/Admin.ts"`,
      `export { ActivityPage } from "./src/usecases/Views.ts"`,
      `export { AccountBody } from "./src/http/contracts/Panel.ts"`,
      `export { HttpServerResponse } from "@effect/platform"`,
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
  conditions: ["host-source"],
  packages: "external",
  logLevel: "warning"
})
const { AccountBody, ActivityBody, ActivityPage, Effect, HttpServerResponse, respond } = await import(pathToFileURL(bundle).href)

const row = (id) => ({
  id,
  extensionId: `acme/extension-${id % 40}`,
  action: "installed",
  summary: `installed acme/extension-${id % 40} 1.${id % 9}.0 from the registry`,
  context: { operation: `op-${id}`, from: null, to: `1.${id % 9}.0`, actor: { type: "admin", user: "admin" } },
  createdAt: new Date(1_700_000_000_000 + id * 1000).toISOString()
})
const rows = (count) => Array.from({ length: count }, (_, index) => row(index + 1))

const answers = [
  ["GET activity?limit=1000 (1000 rows)", ActivityBody, { data: rows(1000) }, 200],
  ["GET activity/page (50 rows)", ActivityPage, { data: rows(50), meta: { total: 1000, limit: 50, offset: 0, extension: null, action: null } }, 2_000],
  ["GET /api/client/account", AccountBody, { data: { id: 1, username: "alice", email: "alice@example.com", admin: false } }, 50_000]
]

/** µs per answer: the best of five rounds of `iterations` answers (the least disturbed by other work on the machine). */
const timed = (make, iterations) => {
  let best = Infinity
  for (let round = 0; round < 5; round++) {
    const start = performance.now()
    for (let i = 0; i < iterations; i++) Effect.runSync(make())
    best = Math.min(best, ((performance.now() - start) * 1000) / iterations)
  }
  return best
}

console.log("answer                                   serialised only   encoded + serialised   ratio")
for (const [name, schema, body, iterations] of answers) {
  const before = timed(() => HttpServerResponse.json(body), iterations)
  const after = timed(() => respond(schema, body), iterations)
  console.log(`${name.padEnd(40)} ${before.toFixed(1).padStart(12)} µs ${after.toFixed(1).padStart(18)} µs ${(after / before).toFixed(2).padStart(9)}×`)
}
