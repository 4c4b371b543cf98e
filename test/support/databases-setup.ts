import { skippedServers } from "./database-servers.js"

// One line per run (not per file) saying which database suites did not run and how to run them, printed
// at the end of the run beside the line for suites skipped for want of a program (programs-setup.ts).
export default function setup() {
  return () => {
    const skipped = skippedServers()
    if (skipped.length > 0) {
      process.stdout.write(
        `database suites skipped: ${skipped.join(", ")}; set HOST_TEST_MYSQL_URL=mysql://root@127.0.0.1:3306/test and ` +
          `HOST_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test (any server, each test gets its own database) to run them\n`
      )
    }
  }
}
