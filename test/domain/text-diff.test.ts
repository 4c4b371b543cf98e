import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { diffLines, unifiedDiff } from "../../src/domain/TextDiff.js"

// The line diff adopt prints (docs/admin.md "Adopt"): kept + removed lines are the old text, kept + added
// lines the new one, and the unified form has correct hunk headers.

const lines = fc.array(fc.constantFrom("a", "b", "c", "host: \"1.0\"", "  x: 1", ""), { maxLength: 30 })
const text = (list: ReadonlyArray<string>) => (list.length === 0 ? "" : `${list.join("\n")}\n`)

describe("TextDiff", () => {
  it("rebuilds both texts from the diff", () => {
    fc.assert(fc.property(lines, lines, (before, after) => {
      const diff = diffLines(text(before), text(after))
      expect(diff.filter((line) => line.kind !== "add").map((line) => line.text)).toEqual(before)
      expect(diff.filter((line) => line.kind !== "remove").map((line) => line.text)).toEqual(after)
    }))
  })

  it("keeps every common line (a longest common subsequence)", () => {
    const diff = diffLines("a\nb\nc\nd\n", "a\nc\nd\ne\n")
    expect(diff).toEqual([
      { kind: "same", text: "a" },
      { kind: "remove", text: "b" },
      { kind: "same", text: "c" },
      { kind: "same", text: "d" },
      { kind: "add", text: "e" }
    ])
  })

  it("prints unified hunks with context, and nothing for equal texts", () => {
    const before = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"].join("\n") + "\n"
    const after = before.replace("2\n", "two\n").replace("9\n", "")
    expect(unifiedDiff(before, after, { from: "a.yaml", to: "a.yaml" }, 1)).toBe([
      "--- a.yaml",
      "+++ a.yaml",
      "@@ -1,3 +1,3 @@",
      " 1",
      "-2",
      "+two",
      " 3",
      "@@ -8,3 +8,2 @@",
      " 8",
      "-9",
      " 10",
      ""
    ].join("\n"))
    expect(unifiedDiff(before, before, { from: "a", to: "a" })).toBe("")
    expect(unifiedDiff("", "x: 1\n", { from: "/dev/null", to: "b" })).toBe("--- /dev/null\n+++ b\n@@ -0,0 +1,1 @@\n+x: 1\n")
  })
})
