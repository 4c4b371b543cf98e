import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/cli.js"

// The layer rule of docs/architecture.md "Layers", checked over the real import graph: a module imports
// from its own box or from a box further down this list, never from one above it or beside it. The order
// is declared here once and the page draws the same picture.

/** Server boxes, top to bottom; boxes on one row sit side by side and may not import each other. */
const layers: ReadonlyArray<ReadonlyArray<string>> = [
  ["cli"],
  // the composition root: stacks every box below into layers; only cli/ (and tests) import it
  ["CompositionRoot"],
  ["http"],
  ["usecases"],
  ["reconcile"],
  ["lifecycle"],
  ["runtime"],
  ["archive", "registry", "panel"],
  ["kernel"],
  ["store"],
  ["config"],
  // what every box asks of the machine, once: atomic file writes, ids, runtime versions, sha256
  ["system"],
  ["domain"]
]

/**
 * The code bundled for the browser: each folder names the boxes it may import besides itself. None of
 * them reaches a server box other than the pure domain/, and no server box imports them.
 */
const browser: Readonly<Record<string, ReadonlyArray<string>>> = {
  "bridge": ["domain"],
  "panel-app": ["domain"],
  // the admin app draws with the panel app's components, so both look alike
  "admin-app": ["domain", "panel-app"]
}

interface Edge {
  readonly from: string
  readonly to: string
  readonly specifier: string
  /** `import type … from` / `export type … from`: erased from the output, so no code crosses with it. */
  readonly typeOnly?: boolean
}

const sourceRoot = join(repoRoot, "src")

/** The box of a path relative to src/: its first folder, or the name of a file at the top (without its extension). */
const boxOf = (path: string): string => path.split(sep)[0]!.replace(/\.[jt]sx?$/, "")

const levelOf = (box: string): number => layers.findIndex((row) => row.includes(box))

/** Every problem of one import, in words; empty when the import keeps the rule. */
const problemsOf = (edge: Edge): ReadonlyArray<string> => {
  if (edge.to.startsWith("..")) {
    // outside src/: only the packages' own package.json files (the version Host reports)
    return edge.to.endsWith("package.json") ? [] : [`${edge.from} imports ${edge.specifier}, outside src/`]
  }
  const from = boxOf(edge.from)
  const to = boxOf(edge.to)
  if (from === to) return []
  const where = `${edge.from} imports ${edge.specifier}`
  if (from in browser) {
    // A server module's types may be shared with the browser (one declaration of each HTTP shape): an
    // `import type` is erased, so no server code reaches the bundle through it.
    if (edge.typeOnly === true && !(to in browser)) return []
    return browser[from]!.includes(to) ? [] : [`${where}: browser code may import only ${browser[from]!.join(", ")} (and types from anywhere)`]
  }
  if (to in browser) return [`${where}: server code never imports browser code`]
  const [above, below] = [levelOf(from), levelOf(to)]
  if (above < 0) return [`${where}: ${from} is in no layer of test/layering/imports.test.ts`]
  if (below < 0) return [`${where}: ${to} is in no layer of test/layering/imports.test.ts`]
  if (above === below) return [`${where}: ${from} and ${to} sit side by side`]
  if (above > below) return [`${where}: ${to} is above ${from}`]
  return []
}

const sourceFiles = (directory: string): ReadonlyArray<string> =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(directory, entry.name))
      : /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")
      ? [join(directory, entry.name)]
      : []
  )

/** `import … from "x"`, `import "x"`, `export … from "x"`, `import("x")`, `import type … from "x"`. */
const importPattern = /(?:^|[\s;])(?:import|export)\s[^;'"]*?\bfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g

const importsOf = (file: string, text: string): ReadonlyArray<Edge> =>
  [...text.matchAll(importPattern)]
    .map((match) => ({ specifier: match[1] ?? match[2] ?? match[3]!, typeOnly: /^[\s;]*(?:import|export)\s+type\s/.test(match[0]) }))
    .filter(({ specifier }) => specifier.startsWith("."))
    .map(({ specifier, typeOnly }) => ({
      from: relative(sourceRoot, file),
      to: relative(sourceRoot, resolve(dirname(file), specifier)),
      specifier,
      typeOnly
    }))

const graph = (): ReadonlyArray<Edge> => sourceFiles(sourceRoot).flatMap((file) => importsOf(file, readFileSync(file, "utf8")))

/** Every import circle among the files of src/, each as its files in a ring (strongly connected components). */
const circlesOf = (edges: ReadonlyArray<Edge>): ReadonlyArray<string> => {
  const file = (path: string) => path.replace(/\.[jt]sx?$/, "")
  const next = new Map<string, Array<string>>()
  for (const edge of edges) next.set(file(edge.from), [...(next.get(file(edge.from)) ?? []), file(edge.to)])
  // Tarjan's algorithm: one pass, each component found once.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const circles: Array<string> = []
  const visit = (node: string) => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) circles.push(component.sort().join(" <-> "))
    }
  }
  for (const node of next.keys()) if (!index.has(node)) visit(node)
  return circles.sort()
}

describe("the import graph keeps the layer rule (docs/architecture.md, Layers)", () => {
  it("no module imports upward, sideways, or across the browser/server line", () => {
    const edges = graph()
    expect(edges.length).toBeGreaterThan(500)
    expect(edges.flatMap(problemsOf)).toEqual([])
  })

  it("no file reaches itself again through its imports (no import circles, type imports included)", () => {
    expect(circlesOf(graph())).toEqual([])
    // …and the check finds a circle: http/Errors importing the contracts that import it (as it once did).
    const edge = (from: string, to: string): Edge => ({ from, to, specifier: to, typeOnly: true })
    expect(circlesOf([edge("http/Errors.ts", "http/contracts/Errors.js"), edge("http/contracts/Errors.ts", "http/Errors.js")]))
      .toEqual(["http/Errors <-> http/contracts/Errors"])
  })

  it("every folder and top-level file of src/ has a place in the order", () => {
    const boxes = readdirSync(sourceRoot).filter((name) => !name.startsWith(".")).map(boxOf)
    expect(boxes.filter((box) => levelOf(box) < 0 && !(box in browser))).toEqual([])
  })

  it("browser code loads no Node built-in", () => {
    const found = Object.keys(browser).flatMap((folder) =>
      sourceFiles(join(sourceRoot, folder)).filter((file) => /from\s*["']node:|import\(\s*["']node:/.test(readFileSync(file, "utf8")))
    )
    expect(found).toEqual([])
  })

  it("the check itself fails on an upward, a sideways and a browser-to-server import", () => {
    const file = join(sourceRoot, "store", "Bad.ts")
    const text = [
      `import { Lifecycle } from "../lifecycle/Lifecycle.js"`,
      `import type { X } from "../store/Fine.js"`,
      `const m = () => import("../http/Server.js")`
    ].join("\n")
    expect(importsOf(file, text).flatMap(problemsOf)).toEqual([
      `store${sep}Bad.ts imports ../lifecycle/Lifecycle.js: lifecycle is above store`,
      `store${sep}Bad.ts imports ../http/Server.js: http is above store`
    ])
    expect(problemsOf({ from: join("panel", "A.ts"), to: join("archive", "Tree.ts"), specifier: "../archive/Tree.js" }))
      .toEqual([`${join("panel", "A.ts")} imports ../archive/Tree.js: panel and archive sit side by side`])
    expect(problemsOf({ from: join("panel-app", "A.tsx"), to: join("store", "Database.ts"), specifier: "../store/Database.js" }))
      .toEqual([`${join("panel-app", "A.tsx")} imports ../store/Database.js: browser code may import only domain (and types from anywhere)`])
    // Types only cross: `import { type X }` is not one (it still loads the module).
    const browserFile = join(sourceRoot, "bridge", "Bad.ts")
    expect(importsOf(browserFile, `import type { Shape } from "../http/contracts/Client.js"\nimport { type Other } from "../store/Database.js"`).flatMap(problemsOf))
      .toEqual([`bridge${sep}Bad.ts imports ../store/Database.js: browser code may import only domain (and types from anywhere)`])
    expect(problemsOf({ from: join("http", "A.ts"), to: join("bridge", "main.ts"), specifier: "../bridge/main.js" }))
      .toEqual([`${join("http", "A.ts")} imports ../bridge/main.js: server code never imports browser code`])
  })
})
