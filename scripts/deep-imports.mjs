// An esbuild plugin for the CLI bundle: rewrites `import { Effect, Schema } from "effect"` (and the same
// for @effect/platform, @effect/cli, @effect/sql) into imports of the modules themselves
// (`import * as Effect from "effect/Effect"`).
//
// Why: the CLI loads each command's code lazily (src/cli/main.ts), which makes esbuild wrap modules in
// lazy initialisers; a wrapped package index then initialises every module it re-exports — all of
// @effect/platform's HTTP API, MsgPack with its native addon, every Effect module — on every start.
// Importing the modules directly keeps each command's start to what it uses (docs/architecture.md,
// "Startup"). The source keeps the ordinary package imports, which tests and editors resolve as usual.
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"

const packages = ["effect", "@effect/platform", "@effect/cli", "@effect/sql"]
const require = createRequire(import.meta.url)

/** name → { module, namespace } for what a package's index re-exports. */
const exportsOf = async (pkg) => {
  const index = await readFile(require.resolve(`${pkg}/package.json`).replace(/package\.json$/, "dist/esm/index.js"), "utf8")
  const table = new Map()
  for (const [, name, file] of index.matchAll(/export \* as (\w+) from "\.\/(\w+)\.js"/g)) {
    table.set(name, { module: `${pkg}/${file}`, namespace: true })
  }
  for (const [, names, file] of index.matchAll(/export \{([^}]*)\} from "\.\/(\w+)\.js"/g)) {
    for (const name of names.split(",").map((part) => part.trim()).filter(Boolean)) {
      table.set(name, { module: `${pkg}/${file}`, namespace: false })
    }
  }
  return table
}

const importPattern = new RegExp(
  String.raw`import\s*\{([^}]*)\}\s*from\s*"(${packages.map((pkg) => pkg.replace("/", "\\/")).join("|")})"`,
  "g"
)

export const deepImports = {
  name: "deep-imports",
  setup(build) {
    const tables = new Map()
    const tableOf = async (pkg) => {
      if (!tables.has(pkg)) tables.set(pkg, await exportsOf(pkg))
      return tables.get(pkg)
    }
    build.onLoad({ filter: /\/(src|sdk\/src)\/.*\.tsx?$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      const found = [...source.matchAll(importPattern)]
      if (found.length === 0) return undefined
      let contents = source
      for (const [statement, specifiers, pkg] of found) {
        const table = await tableOf(pkg)
        const lines = []
        const types = []
        for (const raw of specifiers.split(",").map((part) => part.trim()).filter(Boolean)) {
          if (raw.startsWith("type ")) {
            types.push(raw)
            continue
          }
          const [name, local = name] = raw.split(/\s+as\s+/)
          const entry = table.get(name)
          if (entry === undefined) {
            lines.push(`import { ${raw} } from "${pkg}"`)
          } else if (entry.namespace) {
            lines.push(`import * as ${local} from "${entry.module}"`)
          } else {
            lines.push(`import { ${name} as ${local} } from "${entry.module}"`)
          }
        }
        if (types.length > 0) lines.push(`import { ${types.join(", ")} } from "${pkg}"`)
        contents = contents.replace(statement, lines.join("; "))
      }
      return { contents, loader: args.path.endsWith(".tsx") ? "tsx" : "ts" }
    })
  }
}
