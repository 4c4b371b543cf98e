import { Either } from "effect"
import {
  type CST,
  Composer,
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  type Node,
  Parser,
  YAMLParseError
} from "yaml"
import { problem, type Problem } from "./Problems.js"

// Reading YAML that someone else wrote (manifests, desired-state files), bounded and linear in the
// input (docs/decisions.md, "YAML from outside is read within limits, in linear time"):
//  - the text's size is checked before parsing;
//  - the nesting depth is checked while the text is tokenised, before the package builds nodes from it:
//    building recurses once per level, and on a few thousand levels it reached the stack's end, where
//    V8 sometimes aborts the whole process instead of throwing (a regular expression compiled there);
//  - the `yaml` package parses without its duplicate-key check (it compares each key with every key
//    before it: quadratic, 40,000 keys took 11 s), and one walk of the parsed nodes then counts the
//    entries against a limit and finds duplicate keys with a Set per mapping, before anything is
//    converted or decoded;
//  - conversion to plain values keeps the package's alias-expansion limit, and its failures (an
//    undefined alias, too many aliases) are problems like any other, never exceptions.

export interface YamlLimits {
  /** Largest text, in UTF-8 bytes. */
  readonly maxBytes: number
  /** Most entries: mapping keys plus sequence items, at every depth. */
  readonly maxEntries: number
  /** Deepest nesting of mappings and sequences (the document's top-level collection is level 1). */
  readonly maxDepth: number
}

/**
 * No manifest or desired-state file written by hand nests more than a handful of levels; 64 leaves room
 * for generated ones and stays far from the stack's end (docs/decisions.md "YAML nests at most 64 levels").
 */
const maxYamlDepth = 64

/** extension.yaml: far above any real manifest (a few KiB, a few hundred entries). */
export const manifestYamlLimits: YamlLimits = { maxBytes: 256 * 1024, maxEntries: 5_000, maxDepth: maxYamlDepth }

/** A desired-state file lists many extensions with their settings. */
export const desiredStateYamlLimits: YamlLimits = { maxBytes: 1024 * 1024, maxEntries: 50_000, maxDepth: maxYamlDepth }

/** Aliases expanded while converting (the `yaml` package's own default, stated here on purpose). */
const maxAliasCount = 100

const formatSize = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`)

/** UTF-8 length without encoding the text when it is clearly small enough. */
const utf8Length = (text: string, limit: number): number =>
  text.length * 3 <= limit ? text.length : new TextEncoder().encode(text).length

/** A scalar key's identity for the duplicate check (`1` and `"1"` differ, as in the YAML data model). */
const keyIdentity = (key: unknown): string | undefined => {
  if (!isScalar(key)) return undefined
  const value = key.value
  return `${typeof value}:${String(value)}`
}

const isCollection = (token: CST.Token | undefined): token is CST.BlockMap | CST.BlockSequence | CST.FlowCollection =>
  token !== undefined && (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection")

/** How deeply the collections of `tokens` nest, walked with an explicit stack (no recursion). */
const nestingDepth = (tokens: ReadonlyArray<CST.Token>): number => {
  let deepest = 0
  const pending: Array<readonly [CST.Token | undefined, number]> = tokens.map((token) => [token, 0] as const)
  while (pending.length > 0) {
    const [token, depth] = pending.pop()!
    if (token?.type === "document") pending.push([token.value, depth])
    else if (isCollection(token)) {
      deepest = Math.max(deepest, depth + 1)
      for (const item of token.items) pending.push([item.key ?? undefined, depth + 1], [item.value, depth + 1])
    }
  }
  return deepest
}

const tooDeep = (limits: YamlLimits) =>
  problem("(yaml)", `the document nests mappings and lists more than ${limits.maxDepth} levels deep; that is the limit`)

/**
 * The first document of `text` as the package's `parseDocument` builds it, unless its collections nest
 * deeper than the limit. The tokeniser and parser keep their own stacks; only building the nodes recurses,
 * so the depth is known before that starts, and a hostile text is refused as soon as its parser's stack of
 * open tokens (the document, its open collections, at most one scalar) shows more levels than allowed.
 */
const parseWithinDepth = (text: string, limits: YamlLimits, lineCounter: LineCounter): Either.Either<Document.Parsed, Problem> => {
  const parser = new Parser(lineCounter.addNewLine)
  lineCounter.addNewLine(0)
  const tokens: Array<CST.Token> = []
  const collect = (produced: Iterable<CST.Token>) => {
    for (const token of produced) tokens.push(token)
  }
  for (const lexeme of new Lexer().lex(text)) {
    collect(parser.next(lexeme))
    if (parser.stack.length - 2 > limits.maxDepth) return Either.left(tooDeep(limits))
  }
  collect(parser.end())
  if (nestingDepth(tokens) > limits.maxDepth) return Either.left(tooDeep(limits))
  let document: Document.Parsed | undefined
  for (const composed of new Composer({ uniqueKeys: false, logLevel: "error" }).compose(tokens, true, text.length)) {
    if (document === undefined) document = composed
    else {
      document.errors.push(new YAMLParseError(composed.range.slice(0, 2) as [number, number], "MULTIPLE_DOCS", "the file holds more than one YAML document (a second `---`); it must hold one"))
      break
    }
  }
  // compose(…, true) always ends with a document, an empty one for an empty text.
  return Either.right(document!)
}

/**
 * Parses `text` as one YAML document within `limits`: the plain value, or every problem found, each
 * with its position (`(yaml line L, column C)`) when it has one.
 */
export const readYaml = (text: string, limits: YamlLimits): Either.Either<unknown, ReadonlyArray<Problem>> => {
  const size = utf8Length(text, limits.maxBytes)
  if (size > limits.maxBytes) {
    return Either.left([problem("(yaml)", `the file is ${formatSize(size)}; the limit is ${formatSize(limits.maxBytes)}`)])
  }
  const lineCounter = new LineCounter()
  const parsed = parseWithinDepth(text, limits, lineCounter)
  if (Either.isLeft(parsed)) return Either.left([parsed.left])
  const document = parsed.right
  const where = (offset: number | undefined) => {
    if (offset === undefined) return "(yaml)"
    const { col, line } = lineCounter.linePos(offset)
    return `(yaml line ${line}, column ${col})`
  }
  if (document.errors.length > 0) {
    return Either.left(document.errors.map((error) =>
      problem(where(error.pos[0]), error.message.split("\n")[0]!)
    ))
  }
  // One walk, with an explicit stack (no recursion however deep the nesting).
  let entries = 0
  const stack: Array<unknown> = [document.contents]
  while (stack.length > 0) {
    const node = stack.pop()
    if (isMap(node)) {
      entries += node.items.length
      if (entries > limits.maxEntries) break
      const seen = new Set<string>()
      for (const pair of node.items) {
        if (!isPair(pair)) continue
        const identity = keyIdentity(pair.key)
        // `<<` merge keys may repeat.
        if (identity !== undefined && identity !== "string:<<") {
          if (seen.has(identity)) {
            const key = pair.key as Node
            return Either.left([problem(where(key.range?.[0]), `Map keys must be unique: ${JSON.stringify(String((pair.key as { value: unknown }).value))} appears more than once`)])
          }
          seen.add(identity)
        }
        if (!isAlias(pair.key)) stack.push(pair.key)
        stack.push(pair.value)
      }
    } else if (isSeq(node)) {
      entries += node.items.length
      if (entries > limits.maxEntries) break
      for (const item of node.items) stack.push(item)
    }
  }
  if (entries > limits.maxEntries) {
    return Either.left([problem("(yaml)", `the document has more than ${limits.maxEntries} entries (keys and list items); that is the limit`)])
  }
  try {
    return Either.right(document.toJS({ maxAliasCount }) as unknown)
  } catch (error) {
    // The package throws for an alias without its anchor and for an alias expansion past the limit.
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error)
    const text = /resource exhaustion/i.test(message)
      ? `aliases expand to too many nodes (more than ${maxAliasCount} alias expansions): ${message}`
      : message
    return Either.left([problem("(yaml)", text)])
  }
}

/** The problems as one line: `(yaml line 3, column 1): Map keys must be unique…; …`. */
export const describeYamlProblems = (problems: ReadonlyArray<Problem>): string =>
  problems.map((p) => `${p.path}: ${p.message}`).join("; ")
