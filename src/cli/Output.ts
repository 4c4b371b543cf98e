import { Console, Data, Effect } from "effect"

// How commands print: one JSON document for --json, aligned tables for people, errors on stderr.

/** The command has printed what it had to say and ends with this exit code. */
export class CommandExit extends Data.TaggedError("CommandExit")<{ readonly code: number }> {}

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** Columns padded to their widest cell; the last column is not padded. */
export const formatTable = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd()
  return [line(headers), ...rows.map(line)].join("\n")
}

/** `label:` columns aligned, for key-value summaries. */
export const formatPairs = (pairs: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 1
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`).join("\n")
}

export const exitWith = (code: number) => Effect.fail(new CommandExit({ code }))
