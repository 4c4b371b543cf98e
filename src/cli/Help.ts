/**
 * The page `host`, `host --help` and `host help` print: the commands grouped by what an operator is doing,
 * one line each, then the global flags. @effect/cli's own page (flags of the library first, every usage
 * padded to the widest) stays behind `host <command> --help`, which keeps each command's details
 * (docs/decisions.md, "A hand-written `host --help`").
 *
 * Plain data, no imports: printing it must not load any command module (docs/architecture.md, "Startup").
 */

export interface HelpLine {
  readonly command: string
  readonly summary: string
}

export interface HelpGroup {
  readonly title: string
  readonly lines: ReadonlyArray<HelpLine>
}

/** Every line of the page stays within this width (a terminal of 100 columns shows it unwrapped). */
export const helpWidth = 100

export const helpGroups: ReadonlyArray<HelpGroup> = [
  {
    title: "Extensions",
    lines: [
      { command: "list", summary: "installed extensions with version, status and signature" },
      { command: "add <source>", summary: "install from an archive, a folder or the registry (vendor/name)" },
      { command: "update [<id>]", summary: "update one or all; --check lists what is newer" },
      { command: "enable <id>", summary: "enable an installed extension" },
      { command: "disable <id>", summary: "disable it (files and data stay)" },
      { command: "remove <id>", summary: "remove it and its data (--keep-data keeps the tables)" },
      { command: "doctor [<id>]", summary: "why an extension does not load, show or answer; each check with a fix" },
      { command: "migrate:status <id>", summary: "which migrations of an extension ran, in which batch" },
      { command: "permissions:list", summary: "permissions extensions declare and who holds them" },
      { command: "permissions:grant", summary: "grant an extension permission" },
      { command: "permissions:revoke", summary: "revoke an extension permission" },
      { command: "schedule:list", summary: "scheduled tasks of the enabled extensions" },
      { command: "schedule:run", summary: "run the tasks that are due (call it every minute from cron)" },
      { command: "commands", summary: "the commands extensions add (host vendor:thing)" }
    ]
  },
  {
    title: "Desired state",
    lines: [
      { command: "reconcile", summary: "converge to desired-state/extensions.yaml (--dry-run plans, --adopt writes)" }
    ]
  },
  {
    title: "Archives and registry",
    lines: [
      { command: "export [<path>]", summary: "pack an extension folder into a .host archive (--sign signs it)" },
      { command: "verify <file>", summary: "check an archive's checksums and signature" },
      { command: "keygen", summary: "make a signing key pair" },
      { command: "registry:sync", summary: "refresh the registry cache" },
      { command: "registry:status", summary: "the registry cache: age, entries, last error" },
      { command: "registry:build <dir>", summary: "write registry.json for a folder of archives (--url, --sign)" },
      { command: "artifacts:prune", summary: "delete stored archives no installed version needs" }
    ]
  },
  {
    title: "Server and panel",
    lines: [
      { command: "setup", summary: "config, include, web server, service and check in one go; --remove undoes it" },
      { command: "serve", summary: "run the HTTP server (panel pages, client and admin APIs)" },
      { command: "status", summary: "framework, database, lock, drift; --health runs health checks" },
      { command: "panel:install", summary: "put Host's include into the panel (Pterodactyl view or Pelican plugin)" },
      { command: "panel:uninstall", summary: "take Host's include out of the panel" },
      { command: "panel:status", summary: "whether the panel carries the include and routes /host/ to Host" },
      { command: "panel:token <user>", summary: "make a panel API token for a user" },
      { command: "unlock <lock-id>", summary: "release an operation lock left by a crashed run" },
      { command: "framework:uninstall", summary: "remove every extension and Host's tables (--confirm)" }
    ]
  },
  {
    title: "Authoring",
    lines: [
      { command: "new <vendor/name>", summary: "scaffold an extension" },
      { command: "build [<path>]", summary: "bundle an extension's frontend (--watch rebuilds)" },
      { command: "validate [<path>]", summary: "check an extension folder or archive (--strict: warnings fail)" },
      { command: "dev <path>", summary: "link a folder into the panel and reload on change" }
    ]
  }
]

const globalFlags: ReadonlyArray<HelpLine> = [
  { command: "--root DIR", summary: "Host's root, not the panel's folder (else HOST_ROOT, else the current one)" },
  { command: "--json", summary: "one JSON document on stdout, for commands with machine output" },
  { command: "--verbose", summary: "stack traces and details of failures" },
  { command: "--version", summary: "print Host's version" },
  { command: "-h, --help", summary: "this page; host <command> --help shows a command's options" }
]

/** The command word of a help line (`update [<id>]` → `update`). */
export const commandWord = (line: HelpLine): string => line.command.split(" ")[0]!

const column = Math.max(...[...helpGroups.flatMap((group) => group.lines), ...globalFlags].map((line) => line.command.length)) + 2

const row = (line: HelpLine) => `  ${line.command.padEnd(column)}${line.summary}`

export const helpPage = (version: string): string =>
  [
    `Host ${version}: extensions for game-server panels`,
    "",
    "Usage: host <command> [options]",
    "",
    ...helpGroups.flatMap((group) => [`${group.title}:`, ...group.lines.map(row), ""]),
    "Global flags:",
    ...globalFlags.map(row),
    "",
    "Any other vendor:name command runs a command an extension adds. Docs: README.md and docs/."
  ].join("\n") + "\n"
