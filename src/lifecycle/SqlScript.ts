import type { DialectName } from "../store/Dialect.js"

// Splits the text of a `.sql` migration into the statements the driver runs one by one. A `;` ends a
// statement only where the database's own parser would end it: not inside a string, a quoted name, a
// comment or a PostgreSQL dollar-quoted body, and not inside the BEGIN … END body of a trigger, procedure,
// function or event (SQLite and MySQL triggers, MySQL routines, PostgreSQL `BEGIN ATOMIC`). MySQL files may
// also set their own terminator with the client's `DELIMITER` line. Why this is written here rather than
// taken from a package: docs/decisions.md, "SQL migrations split by each database's rules (issue 22)".

const routineKinds: ReadonlySet<string> = new Set(["TRIGGER", "PROCEDURE", "FUNCTION", "EVENT"])
/** Words that may stand between CREATE and the routine's kind. */
const createModifiers: ReadonlySet<string> = new Set(["OR", "REPLACE", "TEMP", "TEMPORARY", "AGGREGATE", "CONSTRAINT"])
/** `END IF`, `END LOOP`, … close blocks that were never counted (IF is also a function, so none of them is). */
const uncountedEnds: ReadonlySet<string> = new Set(["IF", "LOOP", "WHILE", "REPEAT"])

const wordPattern = /[\p{L}_][\p{L}\p{N}_$]*/uy
const numberPattern = /[0-9][\p{L}\p{N}_.]*/uy
const dollarTagPattern = /\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/uy
const delimiterLinePattern = /DELIMITER[ \t]+(\S+)[^\n]*(?:\n|$)/iy

const matchAt = (pattern: RegExp, text: string, position: number): string | undefined => {
  pattern.lastIndex = position
  return pattern.exec(text)?.[0]
}

/** The end of the whitespace and comments starting at `position` (itself when there are none). */
const skipTrivia = (text: string, position: number, dialect: DialectName): number => {
  let at = position
  for (;;) {
    const char = text[at]
    if (char === undefined) return at
    if (/\s/.test(char)) {
      at++
    } else if (text.startsWith("--", at) || (char === "#" && dialect === "mysql")) {
      const newline = text.indexOf("\n", at)
      at = newline < 0 ? text.length : newline + 1
    } else if (text.startsWith("/*", at)) {
      // PostgreSQL nests block comments; the others end at the first `*/`
      let depth = 0
      do {
        if (text.startsWith("/*", at)) {
          depth += dialect === "pg" || depth === 0 ? 1 : 0
          at += 2
        } else if (text.startsWith("*/", at)) {
          depth--
          at += 2
        } else {
          at++
        }
      } while (depth > 0 && at < text.length)
    } else {
      return at
    }
  }
}

/** The end of the quoted text opening at `position` (a missing close runs to the end: the database says what is wrong). */
const skipQuoted = (text: string, position: number, close: string, backslash: boolean): number => {
  let at = position + 1
  while (at < text.length) {
    const char = text[at]!
    if (backslash && char === "\\") {
      at += 2
    } else if (char === close) {
      if (text[at + 1] === close && close !== "]") at += 2
      else return at + 1
    } else {
      at++
    }
  }
  return text.length
}

/** A CREATE of a trigger, procedure, function or event, judged by its leading words. */
const isRoutine = (leading: ReadonlyArray<string>): boolean => {
  if (leading[0] !== "CREATE") return false
  let index = 1
  while (createModifiers.has(leading[index] ?? "")) index++
  if (leading[index] === "DEFINER") {
    // DEFINER = 'user'@'host' | user@host | CURRENT_USER[()]: skip to the next known word
    const next = leading.findIndex((word, at) => at > index && (routineKinds.has(word) || word === "AGGREGATE"))
    if (next < 0) return false
    index = next
    while (createModifiers.has(leading[index] ?? "")) index++
  }
  return routineKinds.has(leading[index] ?? "")
}

/** The statements of a script, in order, each without its terminator; comment-only pieces are dropped. */
export const splitSqlScript = (text: string, dialect: DialectName): ReadonlyArray<string> => {
  const statements: Array<string> = []
  let delimiter = ";"
  let start = -1
  let leading: Array<string> = []
  let blocks = 0
  let position = 0
  const finish = (end: number) => {
    if (start >= 0) statements.push(text.slice(start, end).trim())
    start = -1
    leading = []
    blocks = 0
  }
  while (position < text.length) {
    const afterTrivia = skipTrivia(text, position, dialect)
    if (afterTrivia > position) {
      position = afterTrivia
      continue
    }
    if (start < 0 && dialect === "mysql") {
      const line = matchAt(delimiterLinePattern, text, position)
      if (line !== undefined) {
        delimiter = line.replace(/^DELIMITER[ \t]+/i, "").split(/\s/)[0]!
        position += line.length
        continue
      }
    }
    const ends = delimiter === ";" ? text[position] === ";" && blocks === 0 : text.startsWith(delimiter, position)
    if (ends) {
      finish(position)
      position += delimiter.length
      continue
    }
    if (start < 0) start = position
    const char = text[position]!
    const word = matchAt(wordPattern, text, position)
    if (word !== undefined) {
      position += word.length
      const upper = word.toUpperCase()
      if (leading.length < 16) leading.push(upper)
      if ((upper === "BEGIN" || upper === "CASE") && leading.length > 1 && isRoutine(leading)) {
        blocks++
      } else if (upper === "END" && blocks > 0) {
        const nextAt = skipTrivia(text, position, dialect)
        const next = matchAt(wordPattern, text, nextAt)?.toUpperCase()
        if (next === undefined || !uncountedEnds.has(next)) blocks--
        if (next === "CASE") position = nextAt + next.length
      }
      continue
    }
    if (char === "'") {
      const escapeString = dialect === "pg" && /[eE]/.test(text[position - 1] ?? "") && !/[\p{L}\p{N}_$]/u.test(text[position - 2] ?? "")
      position = skipQuoted(text, position, "'", dialect === "mysql" || escapeString)
    } else if (char === "\"") {
      position = skipQuoted(text, position, "\"", dialect === "mysql")
    } else if (char === "`" && dialect !== "pg") {
      position = skipQuoted(text, position, "`", false)
    } else if (char === "[" && dialect === "sqlite") {
      position = skipQuoted(text, position, "]", false)
    } else if (char === "$" && dialect === "pg" && matchAt(dollarTagPattern, text, position) !== undefined) {
      const tag = matchAt(dollarTagPattern, text, position)!
      const close = text.indexOf(tag, position + tag.length)
      position = close < 0 ? text.length : close + tag.length
    } else {
      position += matchAt(numberPattern, text, position)?.length ?? 1
    }
  }
  finish(text.length)
  return statements
}
