import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { hostBin } from "../support/cli.js"
import { eventually } from "../support/wait.js"
import { freePort } from "../support/web-servers.js"

// What the `host setup` suites share: a folder standing for /etc (HOST_SETUP_ETC) holding a real nginx's
// configuration with the panel's site in sites-available (linked from sites-enabled, as Debian does), that
// nginx started on its own loopback port, a tree hash for byte-identity, and `host serve` started by the test
// (systemd does not run here).

/** sha256 of every file and link under `root` (path → digest), for "byte-identical" comparisons. */
export const treeHash = (root: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name)
      const info = lstatSync(full)
      const key = relative(root, full)
      if (info.isSymbolicLink()) out[key] = `link:${readlinkSync(full)}`
      else if (info.isDirectory()) {
        out[`${key}/`] = `dir:${(info.mode & 0o7777).toString(8)}`
        walk(full)
      } else out[key] = `${(info.mode & 0o7777).toString(8)}:${createHash("sha256").update(readFileSync(full)).digest("hex")}`
    }
  }
  walk(root)
  return out
}

/** The panel's nginx site as its documentation shapes it: `root <panel>/public`, PHP after; here `/` goes to the stand-in panel. */
export const panelSite = (port: number, panel: string, upstream: string, extra = ""): string =>
  [
    "server {",
    `    listen 127.0.0.1:${port};`,
    "    server_name _;",
    `    root ${panel}/public;`,
    "    index index.html index.htm index.php;",
    "    charset utf-8;",
    extra,
    "    location / {",
    `        proxy_pass ${upstream};`,
    "    }",
    "    location ~ \\.php$ {",
    "        return 200 'the panel php';",
    "    }",
    "}",
    ""
  ].join("\n")

/** Writes `<etc>/nginx/nginx.conf` and the panel's site (sites-available, linked from sites-enabled). */
export const writeNginxEtc = (etc: string, site: string): { readonly conf: string; readonly site: string } => {
  const nginx = join(etc, "nginx")
  for (const folder of ["sites-available", "sites-enabled", "conf.d", "run"]) mkdirSync(join(nginx, folder), { recursive: true })
  const conf = join(nginx, "nginx.conf")
  writeFileSync(conf, [
    "daemon off;",
    "worker_processes 1;",
    `pid ${nginx}/run/nginx.pid;`,
    `error_log ${nginx}/run/error.log;`,
    "events {}",
    "http {",
    "  access_log off;",
    `  client_body_temp_path ${nginx}/run/body; proxy_temp_path ${nginx}/run/proxy; fastcgi_temp_path ${nginx}/run/fastcgi; uwsgi_temp_path ${nginx}/run/uwsgi; scgi_temp_path ${nginx}/run/scgi;`,
    `  include ${nginx}/conf.d/*.conf;`,
    `  include ${nginx}/sites-enabled/*;`,
    "}",
    ""
  ].join("\n"))
  const available = join(nginx, "sites-available", "pterodactyl.conf")
  writeFileSync(available, site)
  symlinkSync(available, join(nginx, "sites-enabled", "pterodactyl.conf"))
  return { conf, site: available }
}

export interface Running {
  readonly url: string
  readonly log: () => string
  readonly stop: () => Promise<void>
}

const track = (child: ChildProcess) => {
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    log: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}

/** nginx with the configuration of `conf` (master process on, so `nginx -s reload` works). */
export const startNginxAt = async (conf: string, port: number): Promise<Running> => {
  const child = spawn("nginx", ["-c", conf, "-e", "stderr"], { stdio: ["ignore", "pipe", "pipe"] })
  const { log, stop } = track(child)
  const url = `http://127.0.0.1:${port}`
  await eventually(() => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${log()}`)
    return fetch(`${url}/`).then((r) => r.status, () => 0)
  }, (status) => status !== 0, { what: "nginx listening", ms: 20_000 })
  return { url, log, stop }
}

/** `host serve` for `root`, answering /host/ready on `port`. */
export const startHostServe = async (root: string, port: number, env: Readonly<Record<string, string>> = {}): Promise<Running> => {
  const clean: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("HOST_")) clean[key] = value
  const child = spawn(process.execPath, [hostBin, "--root", root, "serve"], { env: { ...clean, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const { log, stop } = track(child)
  const url = `http://127.0.0.1:${port}`
  await eventually(() => {
    if (child.exitCode !== null) throw new Error(`host serve exited: ${log()}`)
    return fetch(`${url}/host/ready`).then((r) => r.status, () => 0)
  }, (status) => status === 200, { what: "host serve ready", ms: 30_000 })
  return { url, log, stop }
}

export { freePort }

/** `<etc>/caddy/Caddyfile` with the panel's site (`root * <panel>/public`), its admin endpoint on a loopback port of its own. */
export const writeCaddyEtc = (etc: string, port: number, adminPort: number, panel: string, upstream: string): { readonly conf: string } => {
  const caddy = join(etc, "caddy")
  mkdirSync(join(caddy, "data"), { recursive: true })
  const conf = join(caddy, "Caddyfile")
  writeFileSync(conf, [
    "{",
    `\tadmin 127.0.0.1:${adminPort}`,
    "\tauto_https off",
    `\tstorage file_system ${join(caddy, "data")}`,
    "}",
    "",
    `http://127.0.0.1:${port} {`,
    `\troot * ${panel}/public`,
    `\treverse_proxy ${upstream.replace(/^http:\/\//, "")}`,
    "}",
    ""
  ].join("\n"))
  return { conf }
}

export const caddyEnv = (etc: string): Record<string, string> => ({ HOME: join(etc, "caddy", "home"), XDG_DATA_HOME: join(etc, "caddy", "home"), XDG_CONFIG_HOME: join(etc, "caddy", "home") })

export const startCaddyAt = async (conf: string, port: number, env: Record<string, string>): Promise<Running> => {
  const child = spawn("caddy", ["run", "--config", conf, "--adapter", "caddyfile"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  return waitListening(child, port, "caddy")
}

/**
 * `<etc>/apache2`: apache2.conf (mod_proxy, mod_proxy_http, mod_headers), the envvars Debian's apachectl
 * reads (its run and lock folders under `etc`), and the panel's `<VirtualHost>` in sites-enabled.
 */
export const writeApacheEtc = (etc: string, port: number, panel: string, upstream: string): { readonly conf: string; readonly site: string } => {
  const apache = join(etc, "apache2")
  for (const folder of ["sites-enabled", "run", "lock"]) mkdirSync(join(apache, folder), { recursive: true })
  chmodSync(etc, 0o755)
  const asRoot = process.getuid?.() === 0
  writeFileSync(join(apache, "envvars"), [
    `export APACHE_RUN_DIR=${apache}/run`,
    `export APACHE_LOCK_DIR=${apache}/lock`,
    `export APACHE_PID_FILE=${apache}/run/apache2.pid`,
    `export APACHE_RUN_USER=${asRoot ? "nobody" : process.env.USER ?? "nobody"}`,
    `export APACHE_RUN_GROUP=${asRoot ? "nogroup" : "nogroup"}`,
    `export APACHE_LOG_DIR=${apache}/run`,
    ""
  ].join("\n"))
  const conf = join(apache, "apache2.conf")
  writeFileSync(conf, [
    `ServerRoot "${apache}"`,
    "ServerName 127.0.0.1",
    `Listen 127.0.0.1:${port}`,
    `PidFile "${apache}/run/apache2.pid"`,
    `ErrorLog "${apache}/run/error.log"`,
    `DefaultRuntimeDir "${apache}/run"`,
    `Mutex file:${apache}/lock default`,
    ...["mpm_event", "authz_core", "proxy", "proxy_http", "headers"].map((name) => `LoadModule ${name}_module /usr/lib/apache2/modules/mod_${name}.so`),
    ...(asRoot ? ["User nobody", "Group nogroup"] : []),
    `IncludeOptional ${apache}/sites-enabled/*.conf`,
    ""
  ].join("\n"))
  const site = join(apache, "sites-enabled", "pterodactyl.conf")
  writeFileSync(site, [
    `<VirtualHost 127.0.0.1:${port}>`,
    "    ServerName panel.test",
    `    DocumentRoot "${panel}/public"`,
    `    ProxyPass / ${upstream}/`,
    "</VirtualHost>",
    ""
  ].join("\n"))
  return { conf, site }
}

export const startApacheAt = async (etc: string, port: number): Promise<Running> => {
  const apache = join(etc, "apache2")
  const child = spawn("apache2", ["-d", apache, "-f", join(apache, "apache2.conf"), "-DFOREGROUND"], { stdio: ["ignore", "pipe", "pipe"] })
  return waitListening(child, port, "apache2")
}

const waitListening = async (child: ChildProcess, port: number, what: string): Promise<Running> => {
  const { log, stop } = track(child)
  const url = `http://127.0.0.1:${port}`
  try {
    await eventually(() => {
      if (child.exitCode !== null) throw new Error(`${what} exited: ${log()}`)
      return fetch(`${url}/`).then((r) => r.status, () => 0)
    }, (status) => status !== 0, { what: `${what} listening`, ms: 20_000 })
  } catch (error) {
    await stop()
    throw error
  }
  return { url, log, stop }
}
