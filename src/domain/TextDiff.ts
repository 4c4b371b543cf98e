// A unified line diff (as `diff -u` prints it) of two texts, for showing what adopt writes
// (docs/admin.md). The desired-state files it compares are small, so the plain LCS table is enough.

export interface DiffLine {
  readonly kind: "same" | "add" | "remove"
  readonly text: string
}

const splitLines = (text: string): ReadonlyArray<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  return lines[lines.length - 1] === "" ? lines.slice(0, -1) : lines
}

/** The lines of `after` against `before`: kept, added and removed, in order. */
export const diffLines = (before: string, after: string): ReadonlyArray<DiffLine> => {
  const a = splitLines(before)
  const b = splitLines(after)
  const n = a.length
  const m = b.length
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs: Array<Uint32Array> = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  const out: Array<DiffLine> = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", text: a[i]! })
      i++
      j++
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) {
      out.push({ kind: "remove", text: a[i++]! })
    } else {
      out.push({ kind: "add", text: b[j++]! })
    }
  }
  while (i < n) out.push({ kind: "remove", text: a[i++]! })
  while (j < m) out.push({ kind: "add", text: b[j++]! })
  return out
}

/** `--- a` / `+++ b` and `@@` hunks with `context` lines around each change; "" when nothing differs. */
export const unifiedDiff = (before: string, after: string, names: { readonly from: string; readonly to: string }, context = 3): string => {
  const lines = diffLines(before, after)
  if (lines.every((line) => line.kind === "same")) return ""
  const changed = lines.flatMap((line, index) => (line.kind === "same" ? [] : [index]))
  // Group changes whose context windows touch into one hunk.
  const hunks: Array<{ start: number; end: number }> = []
  for (const index of changed) {
    const start = Math.max(0, index - context)
    const end = Math.min(lines.length, index + context + 1)
    const last = hunks[hunks.length - 1]
    if (last !== undefined && start <= last.end) last.end = Math.max(last.end, end)
    else hunks.push({ start, end })
  }
  const out = [`--- ${names.from}`, `+++ ${names.to}`]
  for (const hunk of hunks) {
    let oldStart = 1
    let newStart = 1
    for (const line of lines.slice(0, hunk.start)) {
      if (line.kind !== "add") oldStart++
      if (line.kind !== "remove") newStart++
    }
    const body = lines.slice(hunk.start, hunk.end)
    const oldCount = body.filter((line) => line.kind !== "add").length
    const newCount = body.filter((line) => line.kind !== "remove").length
    out.push(`@@ -${oldCount === 0 ? oldStart - 1 : oldStart},${oldCount} +${newCount === 0 ? newStart - 1 : newStart},${newCount} @@`)
    for (const line of body) out.push(`${line.kind === "same" ? " " : line.kind === "add" ? "+" : "-"}${line.text}`)
  }
  return `${out.join("\n")}\n`
}
