// Sample content for the reference panel's server pages (docs/frontend.md "Reference panel"): the
// panel is a demo, so consoles, files, schedules and the rest are made up — deterministically from the
// server's uuid, so every visit shows the same data — and every page says so. Users, servers and
// permissions are real (config/panel.yaml).

const hash = (text: string): number => {
  let value = 2166136261
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 16777619)
  return value >>> 0
}

/** A small seeded generator (mulberry32), so the numbers of one server stay put between visits. */
const random = (seed: string) => {
  let state = hash(seed)
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const games = [
  { game: "Minecraft: Java Edition", egg: "Paper 1.21.1", port: 25565, image: "ghcr.io/pterodactyl/yolks:java_21" },
  { game: "Minecraft: Java Edition", egg: "Fabric 1.20.6", port: 25566, image: "ghcr.io/pterodactyl/yolks:java_21" },
  { game: "Valheim", egg: "Valheim Plus", port: 2456, image: "ghcr.io/parkervcp/steamcmd:debian" },
  { game: "Rust", egg: "Rust (Oxide)", port: 28015, image: "ghcr.io/parkervcp/games:rust" }
] as const

export interface DemoServer {
  readonly game: string
  readonly egg: string
  readonly node: string
  readonly address: string
  readonly status: "running" | "starting" | "offline"
  readonly cpu: { readonly used: number; readonly limit: number }
  readonly memory: { readonly used: number; readonly limit: number }
  readonly disk: { readonly used: number; readonly limit: number }
  readonly uptime: string
  readonly image: string
}

export const demoServer = (uuid: string): DemoServer => {
  const next = random(uuid)
  const game = games[Math.floor(next() * games.length)]!
  const memoryLimit = [2048, 4096, 6144, 8192][Math.floor(next() * 4)]!
  const status = next() < 0.8 ? "running" : "offline"
  const running = status === "running"
  return {
    game: game.game,
    egg: game.egg,
    node: `node-${1 + Math.floor(next() * 3)}.fra`,
    address: `203.0.113.${10 + Math.floor(next() * 200)}:${game.port}`,
    status,
    cpu: { used: running ? Math.round(next() * 1200) / 10 : 0, limit: 200 },
    memory: { used: running ? Math.round(memoryLimit * (0.3 + next() * 0.5)) : 0, limit: memoryLimit },
    disk: { used: Math.round(2048 + next() * 12000), limit: 20480 },
    uptime: running ? `${1 + Math.floor(next() * 9)}d ${Math.floor(next() * 24)}h ${Math.floor(next() * 60)}m` : "—",
    image: game.image
  }
}

export const formatMegabytes = (megabytes: number): string =>
  megabytes >= 1024 ? `${(megabytes / 1024).toFixed(megabytes >= 10240 ? 0 : 1)} GiB` : `${megabytes} MiB`

/** "2.0 / 4.0 GiB": one unit when both sides share it, so a usage fits a narrow column. */
export const formatUsage = (used: number, limit: number): string => {
  const [usedValue, usedUnit] = formatMegabytes(used).split(" ")
  const [limitValue, limitUnit] = formatMegabytes(limit).split(" ")
  return usedUnit === limitUnit ? `${usedValue} / ${limitValue} ${limitUnit}` : `${formatMegabytes(used)} / ${formatMegabytes(limit)}`
}

export const consoleLines = (name: string): ReadonlyArray<string> => [
  "[10:41:02 INFO]: Starting minecraft server version 1.21.1",
  "[10:41:02 INFO]: Loading properties",
  "[10:41:03 INFO]: Default game type: SURVIVAL",
  `[10:41:03 INFO]: Starting Minecraft server on *:25565 (${name})`,
  "[10:41:04 INFO]: Preparing level \"world\"",
  "[10:41:07 INFO]: Preparing spawn area: 100%",
  "[10:41:07 INFO]: Done (4.312s)! For help, type \"help\"",
  "[10:52:19 INFO]: Steve joined the game",
  "[10:52:44 INFO]: <Steve> anyone up for the nether?",
  "[11:03:10 INFO]: Alex joined the game",
  "[11:15:00 INFO]: Saved the game",
  "[11:20:31 INFO]: Steve has made the advancement [We Need to Go Deeper]"
]

export interface DemoFile {
  readonly name: string
  readonly directory: boolean
  readonly size: number
  readonly modified: string
}

export const files: ReadonlyArray<DemoFile> = [
  { name: "config", directory: true, size: 0, modified: "2 days ago" },
  { name: "logs", directory: true, size: 0, modified: "4 minutes ago" },
  { name: "plugins", directory: true, size: 0, modified: "yesterday" },
  { name: "world", directory: true, size: 0, modified: "1 minute ago" },
  { name: "banned-players.json", directory: false, size: 2, modified: "3 weeks ago" },
  { name: "eula.txt", directory: false, size: 158, modified: "3 weeks ago" },
  { name: "ops.json", directory: false, size: 112, modified: "5 days ago" },
  { name: "server.properties", directory: false, size: 1394, modified: "2 days ago" },
  { name: "server.jar", directory: false, size: 49_201_224, modified: "3 weeks ago" }
]

export const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

export const fileContents: Readonly<Record<string, string>> = {
  "server.properties": `#Minecraft server properties
enable-command-block=false
gamemode=survival
difficulty=normal
max-players=20
motd=A Host demo server
online-mode=true
pvp=true
server-port=25565
spawn-protection=16
view-distance=10
white-list=false
`,
  "eula.txt": "#By changing the setting below to TRUE you are indicating your agreement to the EULA.\neula=true\n",
  "ops.json": "[\n  {\n    \"uuid\": \"069a79f4-44e9-4726-a5be-fca90e38aaf5\",\n    \"name\": \"Steve\",\n    \"level\": 4\n  }\n]\n",
  "banned-players.json": "[]\n"
}

export interface DemoSchedule {
  readonly id: number
  readonly name: string
  readonly cron: string
  readonly active: boolean
  readonly lastRun: string
  readonly nextRun: string
  readonly tasks: ReadonlyArray<{ readonly action: string; readonly payload: string; readonly offset: number }>
}

export const schedules: ReadonlyArray<DemoSchedule> = [
  {
    id: 1,
    name: "Nightly restart",
    cron: "0 4 * * *",
    active: true,
    lastRun: "today at 04:00",
    nextRun: "tomorrow at 04:00",
    tasks: [
      { action: "Send command", payload: "say Restarting in 60 seconds", offset: 0 },
      { action: "Create backup", payload: "—", offset: 30 },
      { action: "Send power action", payload: "restart", offset: 60 }
    ]
  },
  {
    id: 2,
    name: "Hourly save",
    cron: "0 * * * *",
    active: true,
    lastRun: "18 minutes ago",
    nextRun: "in 42 minutes",
    tasks: [{ action: "Send command", payload: "save-all", offset: 0 }]
  },
  {
    id: 3,
    name: "Weekend event announcement",
    cron: "0 18 * * 5",
    active: false,
    lastRun: "never",
    nextRun: "paused",
    tasks: [{ action: "Send command", payload: "say The weekend build contest starts now!", offset: 0 }]
  }
]

export const databases = (uuid: string) => [
  { name: `s${hash(uuid) % 90 + 10}_luckperms`, host: "db-1.fra:3306", username: `u${hash(uuid) % 90 + 10}_Kq3vLm`, connections: "from anywhere (%)" },
  { name: `s${hash(uuid) % 90 + 10}_coreprotect`, host: "db-1.fra:3306", username: `u${hash(uuid) % 90 + 10}_Zp81Rd`, connections: "from 10.0.0.0/8" }
]

export const backups = [
  { uuid: "b1d6c0de-0001", name: "Before 1.21 upgrade", size: 1_843_200_000, created: "3 days ago", locked: true },
  { uuid: "b1d6c0de-0002", name: "Nightly 2026-11-21", size: 1_902_100_000, created: "yesterday", locked: false },
  { uuid: "b1d6c0de-0003", name: "Nightly 2026-11-22", size: 1_910_400_000, created: "today at 04:00", locked: false }
] as const

export const startupVariables = [
  { name: "Server jar file", env: "SERVER_JARFILE", value: "server.jar", description: "The name of the server jar file to run." },
  { name: "Minecraft version", env: "MINECRAFT_VERSION", value: "1.21.1", description: "The version of Paper to download and run." },
  { name: "Build number", env: "BUILD_NUMBER", value: "latest", description: "The Paper build to download." }
] as const
