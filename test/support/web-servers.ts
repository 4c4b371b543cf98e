import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { eventually } from "./wait.js"

// Real web servers in front of `host serve` for the tests (DESIGN §22, docs/panels.md "The web-server
// snippet"): Debian's nginx, caddy and apache2, each started on its own prefix, configuration and loopback
// port chosen by binding :0, never the machine's global configuration. The site stands in for the panel's:
// Host's snippet included in it, everything else answered "the panel".

/** A free loopback port (bound on :0, then released for the web server to take). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export interface RunningWebServer {
  /** `http://127.0.0.1:<port>`: the panel's address as the browser sees it. */
  readonly url: string
  readonly port: number
  /** What the server wrote to its error log and stderr, for a failing test's message. */
  readonly log: () => string
  readonly stop: () => Promise<void>
}

export interface WebServerOptions {
  /** A folder of its own: configuration, pid, logs and temporary files go there. */
  readonly prefix: string
  /** The snippet `host panel:install` wrote, included in the site. */
  readonly snippet: string
}

const started = async (child: ChildProcess, port: number, logFile: string | undefined, what: string): Promise<RunningWebServer> => {
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const log = () => {
    let file = ""
    try {
      file = logFile === undefined ? "" : readFileSync(logFile, "utf8")
    } catch {
      file = ""
    }
    return `${output}${file}`
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    // A server still draining connections after 5 s is killed: the test's own failure is the message.
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    child.kill("SIGTERM")
    await exited
    clearTimeout(timer)
  }
  const url = `http://127.0.0.1:${port}`
  try {
    // Listening once it answers anything; an exit before that is the configuration's fault.
    await eventually(
      () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}): ${log()}`)
        return fetch(`${url}/host/ready`).then((response) => response.status, () => 0)
      },
      (status) => status !== 0,
      { what: `${what} listening on ${url}`, ms: 20_000 }
    )
  } catch (error) {
    await stop()
    throw error
  }
  return { url, port, log, stop }
}

/** nginx with the snippet included in a `server { }` shaped like the panel's (a `.php` location after it). */
export const startNginx = async (options: WebServerOptions): Promise<RunningWebServer> => {
  const { prefix } = options
  const port = await freePort()
  const conf = join(prefix, "nginx.conf")
  writeFileSync(conf, [
    "worker_processes 1;",
    `error_log ${prefix}/error.log;`,
    "events {}",
    "http {",
    "  access_log off;",
    `  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy; fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;`,
    "  server {",
    `    listen 127.0.0.1:${port};`,
    `    include ${options.snippet};`,
    "    location / { return 200 'the panel'; }",
    "    location ~ \\.php$ { return 200 'the panel php'; }",
    "  }",
    "}",
    ""
  ].join("\n"))
  const child = spawn("nginx", ["-p", prefix, "-c", conf, "-g", `daemon off; master_process off; pid ${prefix}/nginx.pid;`], { stdio: ["ignore", "pipe", "pipe"] })
  return started(child, port, join(prefix, "error.log"), "nginx")
}

/** Caddy (no admin endpoint, no automatic HTTPS, its storage in the prefix) with the snippet imported in the site. */
export const startCaddy = async (options: WebServerOptions): Promise<RunningWebServer> => {
  const { prefix } = options
  const port = await freePort()
  const conf = join(prefix, "Caddyfile")
  writeFileSync(conf, [
    "{",
    "\tadmin off",
    "\tauto_https off",
    // Without it Caddy waits for every open connection (a client's idle keep-alive) before it exits.
    "\tgrace_period 1s",
    `\tstorage file_system ${join(prefix, "data")}`,
    "}",
    "",
    `http://:${port} {`,
    `\timport ${options.snippet}`,
    "\thandle {",
    "\t\trespond \"the panel\"",
    "\t}",
    "}",
    ""
  ].join("\n"))
  const home = join(prefix, "home")
  mkdirSync(home, { recursive: true })
  const env = { ...process.env, HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") }
  // Its log goes to a file: the test reads it on failure.
  const logFile = join(prefix, "caddy.log")
  const out = openSync(logFile, "a")
  const child = spawn("caddy", ["run", "--config", conf, "--adapter", "caddyfile"], { env, stdio: ["ignore", out, out] })
  closeSync(out)
  return started(child, port, logFile, "caddy")
}

/** Where Debian's apache2 keeps its modules. */
const apacheModules = "/usr/lib/apache2/modules"

/** apache2 with a minimal configuration of its own (mod_proxy, mod_proxy_http, mod_headers) and the snippet in the `<VirtualHost>`. */
export const startApache = async (options: WebServerOptions): Promise<RunningWebServer> => {
  const { prefix } = options
  const port = await freePort()
  const documentRoot = join(prefix, "public")
  mkdirSync(documentRoot, { recursive: true })
  writeFileSync(join(documentRoot, "index.html"), "the panel")
  // A temporary folder is private to its owner; apache2's workers (another user under root) read the page.
  chmodSync(prefix, 0o755)
  const conf = join(prefix, "apache2.conf")
  const asRoot = process.getuid?.() === 0
  writeFileSync(conf, [
    `ServerRoot "${prefix}"`,
    "ServerName 127.0.0.1",
    `Listen 127.0.0.1:${port}`,
    `PidFile "${prefix}/apache2.pid"`,
    `ErrorLog "${prefix}/error.log"`,
    `DefaultRuntimeDir "${prefix}"`,
    `Mutex file:${prefix} default`,
    ...["mpm_event", "authz_core", "proxy", "proxy_http", "headers"].map((name) => `LoadModule ${name}_module ${apacheModules}/mod_${name}.so`),
    // Started as root, its workers need some user; they only talk to Host and read the stand-in page.
    ...(asRoot ? ["User nobody", "Group nogroup"] : []),
    `<VirtualHost 127.0.0.1:${port}>`,
    `  DocumentRoot "${documentRoot}"`,
    `  <Directory "${documentRoot}">`,
    "    Require all granted",
    "  </Directory>",
    `  Include ${options.snippet}`,
    "</VirtualHost>",
    ""
  ].join("\n"))
  const child = spawn("apache2", ["-d", prefix, "-f", conf, "-DFOREGROUND"], { stdio: ["ignore", "pipe", "pipe"] })
  return started(child, port, join(prefix, "error.log"), "apache2")
}
