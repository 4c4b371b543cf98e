import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/cli.js"

// Comments and docs point at a place in the docs as `docs/<file>.md "Heading"` (or `docs/<file>.md, "A", "B"`,
// or `docs/<file>.md#anchor`). Each must name a heading of that file, or the bold lead of one of its list
// items or paragraphs (`**CSRF**: …`), by its whole text or the words it starts with; otherwise a newcomer
// following it finds nothing.

const scanned = ["src", "bench", "scripts", "test", "sdk/src", "docs", "README.md"]

const filesUnder = (path: string): Array<string> => {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return /\.(ts|tsx|mjs|js|md|php)$/.test(path) ? [path] : []
  return readdirSync(path).filter((name) => name !== "node_modules" && name !== "dist").flatMap((name) => filesUnder(join(path, name)))
}

const plain = (text: string) => text.replace(/`/g, "").trim().toLowerCase()

/** The places a reference may name in one doc: its headings and the bold leads of its items and paragraphs. */
const placesOf = (doc: string): ReadonlyArray<string> | undefined => {
  const file = join(repoRoot, "docs", doc)
  if (!existsSync(file)) return undefined
  return readFileSync(file, "utf8").split("\n").flatMap((line) => {
    const heading = /^#{1,6} (.+)$/.exec(line)
    if (heading !== null) return [plain(heading[1]!)]
    const lead = /^\s*(?:[-*] |\d+\. )?\*\*([^*]+)\*\*/.exec(line)
    return lead === null ? [] : [plain(lead[1]!)]
  })
}

/** GitHub's anchor of a heading. */
const anchorOf = (heading: string) => heading.replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")

const reference = /docs\/([a-z-]+\.md)(?:#([a-z0-9-]+)|(?:,[ \t]*|[ \t]+|[ \t]*\()\(?((?:"[^"\n]+"(?:,[ \t]*|[ \t]+and[ \t]+|[ \t]*\/[ \t]*)?)+))/g

export const brokenReferences = (files: ReadonlyArray<string>): Array<string> => {
  const cache = new Map<string, ReadonlyArray<string> | undefined>()
  const broken: Array<string> = []
  for (const file of files) {
    for (const match of readFileSync(file, "utf8").matchAll(reference)) {
      const doc = match[1]!
      if (!cache.has(doc)) cache.set(doc, placesOf(doc))
      const places = cache.get(doc)
      const where = relative(repoRoot, file)
      if (places === undefined) {
        broken.push(`${where}: docs/${doc} does not exist`)
        continue
      }
      if (match[2] !== undefined) {
        if (!places.some((place) => anchorOf(place) === match[2])) broken.push(`${where}: docs/${doc}#${match[2]}`)
        continue
      }
      for (const [, name] of match[3]!.matchAll(/"([^"]+)"/g)) {
        const wanted = plain(name!)
        if (!places.some((place) => place === wanted || place.startsWith(wanted))) broken.push(`${where}: docs/${doc} "${name}"`)
      }
    }
  }
  return broken
}

describe("references to the docs", () => {
  it("every `docs/<file>.md \"Heading\"` in the code, tests, benches and docs names a heading or bold lead that exists", () => {
    const files = scanned.flatMap((path) => filesUnder(join(repoRoot, path)))
    expect(files.length).toBeGreaterThan(100)
    expect(brokenReferences(files)).toEqual([])
  })
})
