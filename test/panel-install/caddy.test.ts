import { it } from "vitest"
import { tempDirsPerTest } from "../support/cli.js"
import { describeWithPrograms } from "../support/programs.js"
import { startCaddy } from "../support/web-servers.js"
import { writesThrough } from "./writes-through.js"

// The Caddy snippet `host panel:install` writes, imported in a real Caddy's site (its own Caddyfile,
// storage and port, no admin endpoint) in front of `host serve` under the Pterodactyl driver
// (docs/panels.md "The web-server snippet", DESIGN §22 "CSRF and origins behind the web server").

const temp = tempDirsPerTest()

describeWithPrograms(["caddy"], "the Caddy snippet in caddy", () => {
  it("a write from the panel's origin on a non-default port gets through; another origin is refused naming X-XSRF-TOKEN; events unbuffered", async () => {
    await writesThrough("caddy", startCaddy, temp, "/server/abc")
  }, 60_000)
})
