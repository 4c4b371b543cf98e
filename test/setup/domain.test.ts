import { describe, expect, it } from "vitest"
import {
  findSites,
  includeLine,
  publicOrigin,
  scanInclude,
  siteKindOf,
  systemdUnit,
  withInclude,
  withoutInclude,
  withSetupKeys
} from "../../src/domain/Setup.js"

// The text parts of `host setup` (src/domain/Setup.ts): config keys kept with comments, sites found in
// each web server's words, the marked include in and out byte for byte, APP_URL as an origin.

const keys = { driver: "pterodactyl", panelUrl: "http://127.0.0.1", panelRoot: "/var/www/pterodactyl", baseUrl: "https://panel.example.com", port: 8080 } as const

describe("config/host.yaml", () => {
  it("keeps every other key and every comment, and a second pass changes no byte", () => {
    const before = "# Host's settings\nregistry_url: https://registry.example.com # our registry\npanel:\n  # which panel\n  driver: embedded\n  cache_seconds: 60\n"
    const after = withSetupKeys(before, keys)
    expect(after).toContain("# Host's settings")
    expect(after).toContain("registry_url: https://registry.example.com # our registry")
    expect(after).toContain("  # which panel\n  driver: pterodactyl")
    expect(after).toContain("cache_seconds: 60")
    expect(after).toContain("base_url: https://panel.example.com")
    expect(after).toContain("server:\n  host: 127.0.0.1\n  port: 8080")
    expect(withSetupKeys(after, keys)).toBe(after)
  })

  it("writes a new file, and refuses a file that is not a mapping", () => {
    expect(withSetupKeys(undefined, keys)).toContain("panel:\n  driver: pterodactyl\n")
    expect(() => withSetupKeys("- a\n- b\n", keys)).toThrow("not a mapping")
  })
})

describe("APP_URL", () => {
  it("is the panel's origin with its path, or a reason", () => {
    expect(publicOrigin("https://panel.example.com/")).toEqual({ _tag: "Ok", url: "https://panel.example.com" })
    expect(publicOrigin("http://panel.example.com:8443")).toEqual({ _tag: "Ok", url: "http://panel.example.com:8443" })
    expect(publicOrigin(undefined)._tag).toBe("Bad")
    expect(publicOrigin("panel.example.com")._tag).toBe("Bad")
    expect(publicOrigin("ftp://panel.example.com")._tag).toBe("Bad")
  })
})

const nginxSite = `server {
    listen 80;
    return 301 https://$host$request_uri;
}
server {
    listen 443 ssl http2;
    root "/var/www/pterodactyl/public/"; # the panel
    location ~ \\.php$ { fastcgi_pass unix:/run/php/php8.3-fpm.sock; }
}
`

describe("the panel's site and the marked include", () => {
  it("nginx: the server block with that root, the include after its line, and out again byte for byte", () => {
    const [match] = findSites("nginx", nginxSite, "/var/www/pterodactyl/public")
    expect(match?.line).toBe(7)
    const added = withInclude(nginxSite, match!, "nginx", "/srv/host/storage/host/webserver/nginx.conf")
    expect(added).toContain("# the panel\n    # host:begin")
    expect(added).toContain("\n    include /srv/host/storage/host/webserver/nginx.conf;\n    # host:end\n    location")
    const scan = scanInclude(added)
    expect(scan._tag).toBe("Present")
    if (scan._tag === "Present") expect(withoutInclude(added, scan)).toBe(nginxSite)
    // A root in a location, or another folder, is not the site.
    expect(findSites("nginx", "server {\n  location / { root /var/www/pterodactyl/public; }\n}\n", "/var/www/pterodactyl/public")).toEqual([])
    expect(findSites("nginx", "server { root /var/www/other/public; }", "/var/www/pterodactyl/public")).toEqual([])
  })

  it("nginx on one line: the include goes right after the root's semicolon", () => {
    const text = "server { listen 80; root /p/public; location / { } }"
    const [match] = findSites("nginx", text, "/p/public")
    const added = withInclude(text, match!, "nginx", "/h/nginx.conf")
    const scan = scanInclude(added)
    expect(scan._tag === "Present" && withoutInclude(added, scan)).toBe(text)
  })

  it("Caddy and Apache", () => {
    const caddy = "{\n\tadmin off\n}\n\npanel.example.com {\n\troot * /var/www/pterodactyl/public\n\tfile_server\n\tphp_fastcgi unix//run/php/php8.3-fpm.sock\n}\n"
    expect(findSites("caddy", caddy, "/var/www/pterodactyl/public")[0]?.line).toBe(6)
    expect(siteKindOf(caddy)).toBe("caddy")
    const apache = "<VirtualHost *:80>\n  ServerName panel.example.com\n  DocumentRoot \"/var/www/pterodactyl/public\"\n</VirtualHost>\n"
    const [match] = findSites("apache", apache, "/var/www/pterodactyl/public")
    expect(match?.line).toBe(3)
    expect(siteKindOf(apache)).toBe("apache")
    expect(siteKindOf(nginxSite)).toBe("nginx")
    const added = withInclude(apache, match!, "apache", "/srv/host/storage/host/webserver/apache.conf")
    expect(added).toContain("  Include /srv/host/storage/host/webserver/apache.conf\n  # host:end\n</VirtualHost>")
  })

  it("markers someone broke are tampered, never guessed at", () => {
    expect(scanInclude("server {\n# host:begin\ninclude x;\n}\n")._tag).toBe("Tampered")
    expect(scanInclude("a\n# host:begin\n# host:end\n")._tag).toBe("Tampered")
    expect(includeLine("nginx", "/a b/nginx.conf")).toBe("include \"/a b/nginx.conf\";")
  })
})

describe("the systemd unit", () => {
  it("runs host serve with Host's root as the user, after the network and a local database", () => {
    const unit = systemdUnit({ user: "www-data", node: "/usr/bin/node", bin: "/opt/host/bin/host.js", root: "/srv/host", databaseUnits: ["mariadb.service"], panelName: "Pterodactyl" })
    expect(unit).toContain("User=www-data\n")
    expect(unit).toContain("ExecStart=/usr/bin/node /opt/host/bin/host.js serve --root /srv/host\n")
    expect(unit).toContain("After=network-online.target mariadb.service\n")
    expect(unit).toContain("Restart=on-failure\n")
  })
})
