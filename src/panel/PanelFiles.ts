import { bootScriptTag } from "./pelican-plugin/templates.js"

// What `host panel:install` writes, as text, and how it finds its own block again (docs/panels.md,
// "Installing into Pterodactyl"). Pure: the service in PanelInstall.ts reads and writes the files.

/** The panel file Host appends its block to (included in `<head>` of every Pterodactyl page). */
export const pterodactylInclude = "resources/views/layouts/scripts.blade.php"

export const beginMarker = "{{-- host:begin: added by `host panel:install`; `host panel:uninstall` removes it --}}"
/** The begin marker when the file did not end with a newline: install added one, uninstall takes it away. */
export const beginMarkerJoined = "{{-- host:begin: added by `host panel:install` (with the newline before it); `host panel:uninstall` removes it --}}"
export const endMarker = "{{-- host:end --}}"

const blockBody = (joined: boolean) => `${joined ? beginMarkerJoined : beginMarker}\n${bootScriptTag}\n${endMarker}\n`

/** Where a file's marked block is, or why it cannot be trusted. */
export type BlockScan =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Present"; readonly start: number; readonly end: number; readonly joined: boolean; readonly text: string }
  | { readonly _tag: "Tampered"; readonly line: number; readonly reason: string }

const isBegin = (line: string) => /\{\{--\s*host:begin\b/.test(line)
const isEnd = (line: string) => /\{\{--\s*host:end\b/.test(line)

/** Finds the one `host:begin` … `host:end` block (character offsets, end exclusive, with its last newline). */
export const scanBlock = (text: string): BlockScan => {
  const lines = text.split("\n")
  const begins: Array<number> = []
  const ends: Array<number> = []
  lines.forEach((line, index) => {
    if (isBegin(line)) begins.push(index)
    if (isEnd(line)) ends.push(index)
  })
  if (begins.length === 0 && ends.length === 0) return { _tag: "Absent" }
  if (begins.length > 1) return { _tag: "Tampered", line: begins[1]! + 1, reason: "a second host:begin marker" }
  if (ends.length > 1) return { _tag: "Tampered", line: ends[1]! + 1, reason: "a second host:end marker" }
  if (begins.length === 0) return { _tag: "Tampered", line: ends[0]! + 1, reason: "host:end without host:begin" }
  if (ends.length === 0) return { _tag: "Tampered", line: begins[0]! + 1, reason: "host:begin without host:end" }
  const [begin, end] = [begins[0]!, ends[0]!]
  if (end < begin) return { _tag: "Tampered", line: end + 1, reason: "host:end before host:begin" }
  const offset = (line: number) => lines.slice(0, line).reduce((sum, l) => sum + l.length + 1, 0)
  const joined = lines[begin]!.includes("(with the newline before it)")
  const start = offset(begin) - (joined && begin > 0 ? 1 : 0)
  const stop = Math.min(text.length, offset(end) + lines[end]!.length + 1)
  return { _tag: "Present", start, end: stop, joined, text: text.slice(start, stop) }
}

/** The file with Host's block appended; a file without a final newline gets one, and uninstall removes it. */
export const withBlock = (text: string): string => {
  const joined = text !== "" && !text.endsWith("\n")
  return joined ? `${text}\n${blockBody(true)}` : `${text}${blockBody(false)}`
}

/** The block exactly as install writes it for that join (for "intact" checks). */
export const expectedBlock = (joined: boolean): string => (joined ? `\n${blockBody(true)}` : blockBody(false))

/** The file without the block: byte-identical to what it was before install. */
export const withoutBlock = (text: string, scan: Extract<BlockScan, { _tag: "Present" }>): string =>
  text.slice(0, scan.start) + text.slice(scan.end)

/** The web servers Host writes a snippet for (docs/panels.md, "The web-server snippet"). */
export type WebServer = "nginx" | "caddy" | "apache"
export const webServers: ReadonlyArray<WebServer> = ["nginx", "caddy", "apache"]

/** The three prefixes the panel's web server sends to Host. */
export const proxiedPrefixes = ["/host/", "/api/client/host/", "/admin/host/"] as const

/**
 * The admin screens' address as people type it, without the final slash: Host redirects it to the first screen.
 * nginx's `location ^~ /admin/host/` answers it with a redirect to `/admin/host/` by itself; Caddy and Apache
 * match it only when told (docs/panels.md "Finding Host's admin screens").
 */
const adminAddress = "/admin/host"

/**
 * The snippet for `kind`, proxying to `upstream` (`http://127.0.0.1:8080`). Each passes the browser's
 * `Host` with its port and `X-Forwarded-Host`/`-Proto`/`-For`: Host's CSRF check compares a request's
 * `Origin` with the panel's origin as scheme, host and port (docs/panels.md "CSRF"), and nginx's `$host`
 * would drop a non-default port (`:8443`) and refuse every write.
 */
export const webServerSnippet = (kind: WebServer, upstream: string): string => {
  const header = "Written by `host panel:install`: sends Host's three prefixes to `host serve` (docs/panels.md)."
  if (kind === "nginx") {
    const headers = [
      "proxy_http_version 1.1;",
      "proxy_set_header Host $http_host;",
      "proxy_set_header X-Forwarded-Host $http_host;",
      "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
      "proxy_set_header X-Forwarded-Proto $scheme;"
    ]
    const block = (location: string, extra: ReadonlyArray<string> = []) =>
      [`location ^~ ${location} {`, `    proxy_pass ${upstream};`, ...[...headers, ...extra].map((line) => `    ${line}`), "}"].join("\n")
    return `# ${header}
# Include it inside the panel's server { } block, before the \`location ~ \\.php$\` block.
${block("/api/client/host/events", ["proxy_buffering off;", "proxy_cache off;", "proxy_read_timeout 1h;"])}
${proxiedPrefixes.map((prefix) => block(prefix)).join("\n")}
`
  }
  if (kind === "caddy") {
    const handle = (matcher: string, extra = "") =>
      `handle ${matcher} {\n    reverse_proxy ${upstream.replace(/^http:\/\//, "")}${extra}\n}`
    return `# ${header}
# Import it inside the panel's site block, before php_fastcgi: import ${"<this file>"}
# reverse_proxy passes the browser's Host as is and sets X-Forwarded-Host, -Proto and -For itself.
${handle("/api/client/host/events", " {\n        flush_interval -1\n    }")}
${proxiedPrefixes.map((prefix) => handle(`${prefix}*`)).join("\n")}
${handle(adminAddress)}
`
  }
  return `# ${header}
# Include it inside the panel's <VirtualHost>; needs mod_proxy, mod_proxy_http and mod_headers (a2enmod proxy proxy_http headers).
# The browser's Host as is; mod_proxy adds X-Forwarded-Host and X-Forwarded-For (ProxyAddHeaders).
ProxyPreserveHost On
ProxyAddHeaders On
RequestHeader set X-Forwarded-Proto expr=%{REQUEST_SCHEME}
ProxyPass /api/client/host/events ${upstream}/api/client/host/events flushpackets=on timeout=3600
ProxyPassReverse /api/client/host/events ${upstream}/api/client/host/events
${proxiedPrefixes.map((prefix) => `ProxyPass ${prefix} ${upstream}${prefix}\nProxyPassReverse ${prefix} ${upstream}${prefix}`).join("\n")}
ProxyPassMatch ^(${adminAddress})$ ${upstream}$1
`
}

/** How to include the snippet at `path`, for the operator. */
export const includeHint = (kind: WebServer, path: string): string => {
  if (kind === "nginx") return `add \`include ${path};\` inside the panel's server { } block, then run \`nginx -t && systemctl reload nginx\``
  if (kind === "caddy") return `add \`import ${path}\` inside the panel's site block (before php_fastcgi), then run \`systemctl reload caddy\``
  return `add \`Include ${path}\` inside the panel's <VirtualHost>, enable mod_proxy and mod_proxy_http (\`a2enmod proxy proxy_http headers\`), then run \`apachectl configtest && systemctl reload apache2\``
}
