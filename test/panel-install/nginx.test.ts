import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { expect, it } from "vitest"
import { startServer } from "../http/helpers.js"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { writePanelFolder } from "../support/panel-folders.js"
import { describeWithPrograms } from "../support/programs.js"
import { eventually } from "../support/wait.js"
import { startNginx } from "../support/web-servers.js"
import { writesThrough } from "./writes-through.js"

// The nginx snippet `host panel:install` writes, in a real nginx (CI installs nginx-light) inside a server
// block shaped like the panel's documented one: Host's prefixes reach `host serve`, everything else stays
// the panel's (docs/panels.md, "The web-server snippet").

const temp = tempDirsPerTest()

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

describeWithPrograms(["nginx"], "the nginx snippet in nginx", () => {
  it("sends /host/ and /api/client/host/ to host serve and leaves the panel's routes alone", async () => {
    const host = temp("host-root-")
    const panel = writePanelFolder(temp("panel-"), "pterodactyl-1.11")
    const server = await startServer(host)
    const hostPort = new URL(server.url).port
    const conf = temp("nginx-")
    let nginx: ReturnType<typeof spawn> | undefined
    try {
      const install = await runHost(["--root", host, "panel:install", "--panel-root", panel, "--web-server", "nginx"], { env: { HOST_PORT: hostPort } })
      expect(install.code, install.stderr).toBe(0)
      const port = await freePort()
      writeFileSync(join(conf, "nginx.conf"), [
        "daemon off;",
        "master_process off;",
        `pid ${conf}/nginx.pid;`,
        `error_log ${conf}/error.log;`,
        "events {}",
        "http {",
        "  access_log off;",
        `  client_body_temp_path ${conf}/body; proxy_temp_path ${conf}/proxy; fastcgi_temp_path ${conf}/fastcgi; uwsgi_temp_path ${conf}/uwsgi; scgi_temp_path ${conf}/scgi;`,
        "  server {",
        `    listen 127.0.0.1:${port};`,
        `    include ${join(host, "storage/host/webserver/nginx.conf")};`,
        "    location / { return 200 'the panel'; }",
        "    location ~ \\.php$ { return 200 'the panel php'; }",
        "  }",
        "}",
        ""
      ].join("\n"))
      nginx = spawn("nginx", ["-p", conf, "-c", join(conf, "nginx.conf")], { stdio: ["ignore", "pipe", "pipe"] })
      const base = `http://127.0.0.1:${port}`
      const ready = await eventually(() => fetch(`${base}/host/ready`).then((r) => r.status, () => 0), (status) => status !== 0, { what: "nginx listening" })
      expect(ready).toBe(200)
      // Host's answer through nginx is the one it gives directly.
      for (const path of ["/api/client/host/bootstrap", "/admin/host/", "/host/boot.js"]) {
        // Host's own answer, not where a redirect leads (`/admin/host/` sends a browser on, and a sign-in
        // page of the embedded panel is not one of the prefixes).
        const direct = await fetch(`${server.url}${path}`, { redirect: "manual" })
        const proxied = await fetch(`${base}${path}`, { redirect: "manual" })
        expect(proxied.status, path).toBe(direct.status)
        expect(proxied.headers.get("location"), path).toBe(direct.headers.get("location"))
        expect(await proxied.text(), path).toBe(await direct.text())
      }
      expect(await (await fetch(`${base}/server/abc`)).text()).toBe("the panel")
      expect(await (await fetch(`${base}/index.php`)).text()).toBe("the panel php")
    } finally {
      nginx?.kill("SIGTERM")
      await server.stop()
    }
  })

  // DESIGN §22 "CSRF and origins behind the web server": `$host` dropped the port, so every write of a
  // panel on a non-default port was refused (403 CsrfTokenMismatch naming the wrong header).
  it("passes the browser's Host with its port: a write from the panel's origin on a non-default port gets through", async () => {
    await writesThrough("nginx", startNginx, temp, "/server/abc")
  }, 60_000)
})
