import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { findSites, type SiteKind, siteKindOf, type SiteMatch } from "../domain/Setup.js"
import { onPath } from "../system/Programs.js"

// The panel's site in the web server's own configuration, for `host setup` (docs/panels.md "Five
// minutes"): which web server this machine runs (its program on the PATH and its enabled configuration,
// never a bare folder), the file and block that serve `<panel>/public`, and the commands that test and
// reload that configuration. `HOST_SETUP_ETC` names a folder that stands for /etc (for tests and
// packagers): the site files are looked for under it and the test and reload commands are given its files.

export type Env = Readonly<Record<string, string | undefined>>

/** The folder that stands for /etc. */
export const etcRoot = (env: Env): string => (env.HOST_SETUP_ETC ?? "") !== "" ? env.HOST_SETUP_ETC! : "/etc"

const programs: Readonly<Record<SiteKind, ReadonlyArray<string>>> = {
  nginx: ["nginx"],
  caddy: ["caddy"],
  apache: ["apache2ctl", "apachectl"]
}

/** The main configuration file of each web server under `etc`. */
export const mainConfig = (kind: SiteKind, etc: string): string =>
  kind === "nginx" ? `${etc}/nginx/nginx.conf` : kind === "caddy" ? `${etc}/caddy/Caddyfile` : `${etc}/apache2/apache2.conf`

/** Where the enabled sites are: the files and folders searched, in order. */
const siteLocations = (kind: SiteKind, etc: string): ReadonlyArray<string> =>
  kind === "nginx"
    ? [`${etc}/nginx/sites-enabled`, `${etc}/nginx/conf.d`, `${etc}/nginx/nginx.conf`]
    : kind === "caddy"
    ? [`${etc}/caddy/Caddyfile`, `${etc}/caddy/sites-enabled`]
    : [`${etc}/apache2/sites-enabled`, `${etc}/apache2/apache2.conf`]

/** The command that checks the configuration, and the one that makes the running server load it. */
export const webServerCommands = (kind: SiteKind, etc: string, env: Env) => {
  const custom = etc !== "/etc"
  const program = onPath(programs[kind], env) ?? programs[kind][0]!
  if (kind === "nginx") {
    const extra = custom ? ["-c", mainConfig("nginx", etc), "-e", "stderr"] : []
    return { test: [program, "-t", ...extra], reload: [program, "-s", "reload", ...extra], extraEnv: {} as Record<string, string> }
  }
  if (kind === "caddy") {
    const config = ["--config", mainConfig("caddy", etc), "--adapter", "caddyfile"]
    return { test: [program, "validate", ...config], reload: [program, "reload", ...config], extraEnv: {} as Record<string, string> }
  }
  // Debian's apachectl reads $APACHE_CONFDIR/envvars and passes -d $APACHE_CONFDIR to apache2.
  return { test: [program, "configtest"], reload: [program, "graceful"], extraEnv: custom ? { APACHE_CONFDIR: `${etc}/apache2` } : {} }
}

/** The web servers whose program is on the PATH and whose main configuration is there, in that order. */
export const installedWebServers = (env: Env) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const etc = etcRoot(env)
    const found: Array<SiteKind> = []
    for (const kind of ["nginx", "caddy", "apache"] as const) {
      if (onPath(programs[kind], env) === undefined) continue
      if (yield* fs.exists(mainConfig(kind, etc)).pipe(Effect.orElseSucceed(() => false))) found.push(kind)
    }
    return found
  })

/** No enabled site serves the panel's `public/` folder. */
export class SiteNotFound extends Data.TaggedError("SiteNotFound")<{ readonly publicDir: string; readonly looked: ReadonlyArray<string> }> {
  override get message() {
    return `no web-server site serves ${this.publicDir}: looked in ${this.looked.join(", ")}; name the panel's site file with --site FILE (or --web-server none to include the snippet yourself)`
  }
}

/** `--site FILE` cannot be used. */
export class SiteUnusable extends Data.TaggedError("SiteUnusable")<{ readonly file: string; readonly reason: string }> {
  override get message() {
    return `--site ${this.file}: ${this.reason}`
  }
}

export interface FoundSite {
  readonly kind: SiteKind
  /** The file itself (a symlink in sites-enabled is followed, so the link stays a link). */
  readonly file: string
  readonly text: string
  readonly match: SiteMatch
  /** Other blocks that serve the panel too (only the first gets the include; said in the output). */
  readonly others: ReadonlyArray<string>
}

const filesIn = (fs: FileSystem.FileSystem, path: Path.Path, location: string, kind: SiteKind) =>
  Effect.gen(function*() {
    const info = yield* fs.stat(location).pipe(Effect.option)
    if (Option.isNone(info)) return []
    if (info.value.type !== "Directory") return [location]
    const names = yield* fs.readDirectory(location).pipe(Effect.orElseSucceed(() => []))
    return names
      .filter((name) => !name.startsWith("."))
      .filter((name) => kind !== "nginx" || !location.endsWith("conf.d") || name.endsWith(".conf"))
      .sort()
      .map((name) => path.join(location, name))
  })

/** Finds the site of `kind` that serves `publicDir` (or reads `--site FILE`). */
export const findSite = (kind: SiteKind | undefined, publicDir: string, env: Env, site: string | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const read = (file: string) => fs.readFileString(file).pipe(Effect.option)
    if (site !== undefined) {
      const resolved = yield* fs.realPath(path.resolve(site)).pipe(
        Effect.mapError(() => new SiteUnusable({ file: site, reason: "no such file" }))
      )
      const text = yield* read(resolved)
      if (Option.isNone(text)) return yield* new SiteUnusable({ file: site, reason: "cannot be read" })
      const siteKind = kind ?? siteKindOf(text.value)
      if (siteKind === undefined) return yield* new SiteUnusable({ file: site, reason: "is not an nginx, Caddy or Apache site (pass --web-server)" })
      const matches = findSites(siteKind, text.value, publicDir)
      if (matches.length === 0) {
        return yield* new SiteUnusable({
          file: site,
          reason: `has no ${siteKind === "nginx" ? "server block with root" : siteKind === "caddy" ? "site with root" : "<VirtualHost> with DocumentRoot"} ${publicDir}`
        })
      }
      return { kind: siteKind, file: resolved, text: text.value, match: matches[0]!, others: matches.slice(1).map((m) => `${resolved}:${m.line}`) } satisfies FoundSite
    }
    const etc = etcRoot(env)
    const kinds = kind !== undefined ? [kind] : yield* installedWebServers(env)
    const looked: Array<string> = []
    for (const candidate of kinds) {
      const seen = new Set<string>()
      for (const location of siteLocations(candidate, etc)) {
        looked.push(location)
        for (const file of yield* filesIn(fs, path, location, candidate)) {
          const real = yield* fs.realPath(file).pipe(Effect.orElseSucceed(() => file))
          if (seen.has(real)) continue
          seen.add(real)
          const text = yield* read(real)
          if (Option.isNone(text)) continue
          const matches = findSites(candidate, text.value, publicDir)
          if (matches.length > 0) {
            return { kind: candidate, file: real, text: text.value, match: matches[0]!, others: matches.slice(1).map((m) => `${real}:${m.line}`) } satisfies FoundSite
          }
        }
      }
    }
    if (kinds.length === 0) {
      looked.push(`no web server here (nginx, caddy or apache2ctl on the PATH with ${mainConfig("nginx", etc)}, ${mainConfig("caddy", etc)} or ${mainConfig("apache", etc)})`)
    }
    return yield* new SiteNotFound({ publicDir, looked })
  })
