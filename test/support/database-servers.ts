// The database servers the suites can run on (no vitest import: the global setup reads this too).

export const servers: ReadonlyArray<{ readonly dialect: "mysql" | "pg"; readonly env: string; readonly name: string }> = [
  { dialect: "mysql", env: "HOST_TEST_MYSQL_URL", name: "MariaDB/MySQL" },
  { dialect: "pg", env: "HOST_TEST_PG_URL", name: "PostgreSQL" }
]

/** The server suites left out because their variable is unset (empty when all run). */
export const skippedServers = (): ReadonlyArray<string> =>
  servers.filter((server) => (process.env[server.env] ?? "") === "").map((server) => `${server.name} (${server.env})`)
