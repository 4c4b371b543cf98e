import { Schema } from "effect"
import { Document, isMap, parseDocument } from "yaml"

// `host setup` (docs/panels.md "Five minutes", DESIGN §22), the parts that are only text: the steps and
// their record, the panel's public origin, the keys setup writes into config/host.yaml, finding the site
// that serves the panel in a web server's configuration and adding or taking out Host's marked include,
// and the systemd unit. The use case (usecases/Setup.ts) reads and writes the files.

export const setupStepIds = ["panel", "config", "include", "webserver", "service", "check"] as const
export type SetupStepId = (typeof setupStepIds)[number]

/** What a step did: setup's five words, plus `remove` for `host setup --remove`. */
export type SetupAction = "create" | "update" | "unchanged" | "skipped" | "failed" | "remove"

export interface SetupStep {
  readonly id: SetupStepId
  readonly action: SetupAction
  readonly path?: string
  readonly command?: string
  readonly output?: string
}

export type SiteKind = "nginx" | "caddy" | "apache"

// ---- the record setup keeps under Host's root (storage/host/setup.json) ----------------------------------

/** A file as it was before setup first changed it (null: it did not exist). */
const FileBefore = Schema.Struct({ path: Schema.String, before: Schema.NullOr(Schema.String) })

/**
 * What `host setup` changed, so `--remove` undoes exactly that, in reverse. Each entry keeps the state
 * before setup's FIRST change: a second run that changes a file again does not overwrite it.
 */
export const SetupRecord = Schema.Struct({
  version: Schema.Literal(1),
  panel_root: Schema.String,
  /** The panel's include (block or plugin) was added by setup. */
  include: Schema.optional(Schema.Struct({ panel_root: Schema.String })),
  /** The web-server file the marked include was added to, and the folder that stood for /etc then. */
  webserver: Schema.optional(Schema.Struct({ kind: Schema.Literal("nginx", "caddy", "apache"), path: Schema.String, etc: Schema.String })),
  /** The systemd unit written, and whether systemd was running (then it was enabled and started). */
  service: Schema.optional(Schema.Struct({
    path: Schema.String,
    before: Schema.NullOr(Schema.String),
    systemd: Schema.Boolean,
    /** Folders setup created for the unit (a machine without /etc/systemd/system), removed again when empty. */
    created_folders: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
  })),
  /** config/host.yaml before setup (kept: --remove leaves Host's root and config in place). */
  config: Schema.optional(FileBefore)
})
export type SetupRecord = typeof SetupRecord.Type

// ---- the panel's public origin -----------------------------------------------------------------------------

/** `APP_URL` as an origin with its path (no trailing slash), or why it is not one. */
export const publicOrigin = (value: string | undefined): { readonly _tag: "Ok"; readonly url: string } | { readonly _tag: "Bad"; readonly reason: string } => {
  if (value === undefined || value.trim() === "") return { _tag: "Bad", reason: "has no APP_URL" }
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return { _tag: "Bad", reason: `has APP_URL=${value}, which is not a URL` }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { _tag: "Bad", reason: `has APP_URL=${value}, which is not an http(s) URL` }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    return { _tag: "Bad", reason: `has APP_URL=${value}, which carries more than a scheme, host, port and path` }
  }
  return { _tag: "Ok", url: `${url.origin}${url.pathname.replace(/\/+$/, "")}` }
}

/** A panel URL given on the command line (`--panel-url`). */
export const isHttpUrl = (value: string): boolean => publicOrigin(value)._tag === "Ok"

// ---- config/host.yaml ---------------------------------------------------------------------------------------

export interface SetupConfigKeys {
  readonly driver: "pterodactyl" | "pelican"
  readonly panelUrl: string
  readonly panelRoot: string
  readonly baseUrl: string
  readonly port: number
}

/**
 * config/host.yaml with setup's keys set, every other key and comment kept (the `yaml` package's Document
 * API). A key already holding the value is left as written, so a second run changes no byte.
 */
export const withSetupKeys = (text: string | undefined, keys: SetupConfigKeys): string => {
  const blank = text === undefined || text.trim() === "" || parseDocument(text).contents === null
  const document: Document = blank ? new Document({}) : parseDocument(text)
  if (document.errors.length > 0) throw new Error(document.errors[0]!.message)
  if (!isMap(document.contents)) throw new Error("the file's top level is not a mapping of keys")
  if (blank && text !== undefined && text !== "") {
    // A file of only comments keeps them above the keys.
    document.commentBefore = parseDocument(text).commentBefore ?? null
  }
  const entries: ReadonlyArray<readonly [ReadonlyArray<string>, string | number]> = [
    [["panel", "driver"], keys.driver],
    [["panel", "url"], keys.panelUrl],
    [["panel", "root"], keys.panelRoot],
    [["base_url"], keys.baseUrl],
    [["server", "host"], "127.0.0.1"],
    [["server", "port"], keys.port]
  ]
  for (const [path, value] of entries) {
    if (document.getIn(path) !== value) document.setIn(path, value)
  }
  const after = document.toString()
  return text !== undefined && after === text ? text : after
}

// ---- the marked include in a web server's site -----------------------------------------------------------

export const includeBegin = "# host:begin: added by `host setup`; `host setup --remove` removes it"
export const includeEnd = "# host:end"
/** The end marker when the directive had more on its line: setup added the line break after it, and removes it. */
export const includeEndJoined = "# host:end (with the line break after it)"

const quoteIfNeeded = (path: string) => (/[\s;"'{}#]/.test(path) ? `"${path.replace(/(["\\])/g, "\\$1")}"` : path)

/** The line that includes Host's snippet, in the web server's own words. */
export const includeLine = (kind: SiteKind, snippet: string): string =>
  kind === "nginx" ? `include ${quoteIfNeeded(snippet)};` : kind === "caddy" ? `import ${quoteIfNeeded(snippet)}` : `Include ${quoteIfNeeded(snippet)}`

/** Where the include goes in a site file: right after the directive naming the panel's `public/`. */
export interface SiteMatch {
  /** Character offset the include is inserted at (the end of the directive's line, or after its `;`). */
  readonly at: number
  /** The indentation of the directive's line, repeated for the include. */
  readonly indent: string
  /** More of the line follows the directive (a one-line block): the include ends with a line break of its own. */
  readonly midLine: boolean
  /** 1-based line of the directive, for messages. */
  readonly line: number
}

interface Token {
  readonly text: string
  readonly start: number
  readonly end: number
  /** `{`, `}`, `;` or a newline (Caddy ends directives at line ends). */
  readonly punct: boolean
}

/** nginx and Caddyfile tokens: words (quotes kept as one word), braces, `;`, newlines; `#` comments dropped. */
const tokenize = (text: string, newlines: boolean): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "\n") {
      if (newlines) tokens.push({ text: "\n", start: i, end: i + 1, punct: true })
      i++
    } else if (/\s/.test(c)) i++
    else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "{" || c === "}" || c === ";") {
      tokens.push({ text: c, start: i, end: i + 1, punct: true })
      i++
    } else {
      const start = i
      let word = ""
      while (i < text.length && !/[\s{};]/.test(text[i]!)) {
        const q = text[i]!
        if (q === "\"" || q === "'" || q === "`") {
          i++
          while (i < text.length && text[i] !== q) {
            if (text[i] === "\\" && i + 1 < text.length) i++
            word += text[i]
            i++
          }
          i++
        } else {
          word += q
          i++
        }
      }
      tokens.push({ text: word, start, end: i, punct: false })
    }
  }
  return tokens
}

const samePath = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "")

const lineStart = (text: string, offset: number) => text.lastIndexOf("\n", offset - 1) + 1

const matchAt = (text: string, directiveStart: number, directiveEnd: number): SiteMatch => {
  const start = lineStart(text, directiveStart)
  const indent = /^[ \t]*/.exec(text.slice(start))![0]
  const newline = text.indexOf("\n", directiveEnd)
  const lineEnd = newline < 0 ? text.length : newline
  // The rest of the line after the directive: blank or a comment, so the include goes after the line.
  const rest = text.slice(directiveEnd, lineEnd)
  const midLine = !/^\s*(#.*)?$/.test(rest)
  return { at: midLine ? directiveEnd : lineEnd, indent, midLine, line: text.slice(0, directiveStart).split("\n").length }
}

/** nginx: every `server { }` block whose `root` is `publicDir`. */
const nginxSites = (text: string, publicDir: string): ReadonlyArray<SiteMatch> => {
  const tokens = tokenize(text, false)
  const stack: Array<string> = []
  const found: Array<SiteMatch> = []
  let statement: Array<Token> = []
  for (const token of tokens) {
    if (token.text === "{" && token.punct) {
      stack.push(statement[0]?.text ?? "")
      statement = []
    } else if (token.text === "}" && token.punct) {
      stack.pop()
      statement = []
    } else if (token.text === ";" && token.punct) {
      if (stack.at(-1) === "server" && statement[0]?.text === "root" && statement.length === 2 && samePath(statement[1]!.text, publicDir)) {
        found.push(matchAt(text, statement[0].start, token.end))
      }
      statement = []
    } else statement.push(token)
  }
  return found
}

/** Caddy: a site block (or a Caddyfile of one site without braces) whose `root` is `publicDir`. */
const caddySites = (text: string, publicDir: string): ReadonlyArray<SiteMatch> => {
  const tokens = tokenize(text, true)
  const found: Array<SiteMatch> = []
  let depth = 0
  let line: Array<Token> = []
  const endLine = (end: number) => {
    const first = line[0]
    const last = line.at(-1)
    if (first !== undefined && last !== undefined && first.text === "root" && (depth === 1 || depth === 0) && line.length >= 2 &&
      samePath(last.text, publicDir)) {
      found.push(matchAt(text, first.start, Math.min(end, last.end)))
    }
    line = []
  }
  for (const token of tokens) {
    if (token.punct && token.text === "\n") endLine(token.start)
    else if (token.punct && token.text === "{") {
      line = []
      depth++
    } else if (token.punct && token.text === "}") {
      endLine(token.start)
      depth = Math.max(0, depth - 1)
    } else line.push(token)
  }
  endLine(text.length)
  return found
}

/** Apache: a `<VirtualHost>` whose `DocumentRoot` is `publicDir`. */
const apacheSites = (text: string, publicDir: string): ReadonlyArray<SiteMatch> => {
  const found: Array<SiteMatch> = []
  let inHost = false
  let offset = 0
  for (const raw of text.split("\n")) {
    const lineText = raw.trim()
    if (/^<VirtualHost\b/i.test(lineText)) inHost = true
    else if (/^<\/VirtualHost>/i.test(lineText)) inHost = false
    else if (inHost) {
      const root = /^DocumentRoot\s+("([^"]*)"|'([^']*)'|(\S+))/i.exec(lineText)
      if (root !== null && samePath(root[2] ?? root[3] ?? root[4] ?? "", publicDir)) {
        const start = offset + raw.indexOf(root[0])
        found.push(matchAt(text, start, start + root[0].length))
      }
    }
    offset += raw.length + 1
  }
  return found
}

/** Where in `text` (a site file of `kind`) the panel at `publicDir` is served; several when several blocks do. */
export const findSites = (kind: SiteKind, text: string, publicDir: string): ReadonlyArray<SiteMatch> =>
  kind === "nginx" ? nginxSites(text, publicDir) : kind === "caddy" ? caddySites(text, publicDir) : apacheSites(text, publicDir)

/** What kind of web server a site file given with `--site` is written for. */
export const siteKindOf = (text: string): SiteKind | undefined =>
  /<VirtualHost\b/i.test(text)
    ? "apache"
    : /(^|[\s;}])server\s*\{/.test(text) && /;\s*($|#|\n|\})/m.test(text)
    ? "nginx"
    : /(^|\n)\s*root\s/.test(text) || /php_fastcgi|reverse_proxy|file_server/.test(text)
    ? "caddy"
    : undefined

/** The file with Host's marked include inserted at `match`. */
export const withInclude = (text: string, match: SiteMatch, kind: SiteKind, snippet: string): string =>
  `${text.slice(0, match.at)}\n${match.indent}${includeBegin}\n${match.indent}${includeLine(kind, snippet)}\n${match.indent}${
    match.midLine ? `${includeEndJoined}\n` : includeEnd
  }${text.slice(match.at)}`

export type IncludeScan =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Present"; readonly start: number; readonly end: number; readonly body: string }
  | { readonly _tag: "Tampered"; readonly line: number; readonly reason: string }

/** Finds setup's one marked include (start: the newline before the begin line; end: the end of the end line). */
export const scanInclude = (text: string): IncludeScan => {
  const lines = text.split("\n")
  const begins = lines.flatMap((l, i) => (/^\s*# host:begin\b/.test(l) ? [i] : []))
  const ends = lines.flatMap((l, i) => (/^\s*# host:end\b/.test(l) ? [i] : []))
  if (begins.length === 0 && ends.length === 0) return { _tag: "Absent" }
  if (begins.length !== 1) return { _tag: "Tampered", line: (begins[1] ?? ends[0]!) + 1, reason: begins.length === 0 ? "host:end without host:begin" : "a second host:begin marker" }
  if (ends.length !== 1) return { _tag: "Tampered", line: (ends[1] ?? begins[0]!) + 1, reason: ends.length === 0 ? "host:begin without host:end" : "a second host:end marker" }
  const [begin, end] = [begins[0]!, ends[0]!]
  if (end !== begin + 2) return { _tag: "Tampered", line: end + 1, reason: "the marked include is not one line between host:begin and host:end" }
  if (begin === 0) return { _tag: "Tampered", line: 1, reason: "host:begin on the first line (setup puts it after the site's root)" }
  const offset = (line: number) => lines.slice(0, line).reduce((sum, l) => sum + l.length + 1, 0)
  const start = offset(begin) - 1
  const joined = lines[end]!.includes("(with the line break after it)") && end < lines.length - 1
  const stop = offset(end) + lines[end]!.length + (joined ? 1 : 0)
  return { _tag: "Present", start, end: stop, body: lines[begin + 1]!.trim() }
}

/** The file without setup's include: byte-identical to what it was before setup. */
export const withoutInclude = (text: string, scan: Extract<IncludeScan, { _tag: "Present" }>): string =>
  text.slice(0, scan.start) + text.slice(scan.end)

// ---- the systemd unit ---------------------------------------------------------------------------------------

const systemdQuote = (word: string) => (/[\s"'\\]/.test(word) ? `"${word.replace(/(["\\])/g, "\\$1")}"` : word)

export interface UnitOptions {
  readonly user: string
  /** The node binary running setup. */
  readonly node: string
  /** Host's `bin/host.js`. */
  readonly bin: string
  readonly root: string
  /** The database's units when it runs on this machine (`mariadb.service`, `postgresql.service`). */
  readonly databaseUnits: ReadonlyArray<string>
  readonly panelName: string
}

/** `/etc/systemd/system/host.service`: `host serve` with Host's root, restarted when it fails. */
export const systemdUnit = (options: UnitOptions): string => {
  const after = ["network-online.target", ...options.databaseUnits].join(" ")
  return [
    "# Written by `host setup`; `host setup --remove` stops, disables and removes it (docs/panels.md \"Five minutes\").",
    "[Unit]",
    `Description=Host: extensions for the ${options.panelName.replace(/[\n\r%]/g, " ")} panel`,
    `After=${after}`,
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `User=${options.user}`,
    `WorkingDirectory=${systemdQuote(options.root)}`,
    `ExecStart=${[options.node, options.bin, "serve", "--root", options.root].map(systemdQuote).join(" ")}`,
    "Restart=on-failure",
    "RestartSec=2",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    ""
  ].join("\n")
}

/** The units a database URL on this machine runs as (none for SQLite or a database elsewhere). */
export const databaseUnits = (database: string): ReadonlyArray<string> => {
  if (database.startsWith("sqlite:")) return []
  let url: URL
  try {
    url = new URL(database)
  } catch {
    return []
  }
  const local = ["localhost", "127.0.0.1", "[::1]", "::1", ""].includes(url.hostname)
  if (!local) return []
  if (url.protocol === "mysql:" || url.protocol === "mariadb:") return ["mariadb.service", "mysql.service"]
  if (url.protocol === "postgres:" || url.protocol === "postgresql:") return ["postgresql.service"]
  return []
}
