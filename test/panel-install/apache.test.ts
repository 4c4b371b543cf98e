import { it } from "vitest"
import { tempDirsPerTest } from "../support/cli.js"
import { describeWithPrograms } from "../support/programs.js"
import { startApache } from "../support/web-servers.js"
import { writesThrough } from "./writes-through.js"

// The Apache snippet `host panel:install` writes, included in the <VirtualHost> of a real apache2 (a
// minimal configuration of its own loading mod_proxy, mod_proxy_http and mod_headers; its own pid, logs
// and port) in front of `host serve` under the Pterodactyl driver (docs/panels.md "The web-server snippet",
// DESIGN §22 "CSRF and origins behind the web server").

const temp = tempDirsPerTest()

describeWithPrograms(["apache2"], "the Apache snippet in apache2", () => {
  it("a write from the panel's origin on a non-default port gets through; another origin is refused naming X-XSRF-TOKEN; events unbuffered", async () => {
    await writesThrough("apache", startApache, temp, "/index.html")
  }, 60_000)
})
