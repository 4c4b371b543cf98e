import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { decodeConfig, frameworkVersion, loadHostConfig } from "../src/config/HostConfig.js"
import { tempDir } from "./support/cli.js"

const key = "ab".repeat(32)

describe("decodeConfig", () => {
  it("fills every default", () => {
    const result = decodeConfig(undefined, {}, "config/host.yaml")
    expect(result).toEqual(Either.right({
      warnings: [],
      config: {
        version: frameworkVersion,
        extensions_path: "host/extensions",
        require_signatures: false,
        registry_url: "",
        registries: [],
        registry_cache_path: "storage/host/registry-cache.json",
        registry_cache_ttl: 3600,
        public_key: "",
        trusted_keys: [],
        database: "sqlite:storage/host/host.db",
        base_url: "http://127.0.0.1:8080",
        server: { host: "127.0.0.1", port: 8080, headers_timeout: 20, connections_per_address: 256 },
        desired_state: "desired-state/extensions.yaml",
        artifacts_path: "storage/host/artifacts",
        lock_lease_seconds: 30,
        webhook_secret: "",
        limits: { archive_bytes: 52428800, unpacked_bytes: 209715200, files: 10000, event_streams: 1000 },
        panel: { driver: "embedded", url: "", root: "", cache_seconds: 30, lookups_per_second: 10, application_key: "", self_heal: true, php: "" },
        trusted_proxies: ["127.0.0.0/8", "::1"],
        webhook_legacy_signatures: false
      }
    }))
  })

  it("applies environment overrides over the file", () => {
    const result = decodeConfig(
      { registry_url: "file:///a", server: { host: "0.0.0.0", port: 1 } },
      {
        HOST_REQUIRE_SIGNATURES: "true",
        HOST_REGISTRY_URL: "https://registry.test",
        HOST_PUBLIC_KEY: key,
        HOST_DATABASE_URL: "sqlite::memory:",
        HOST_BASE_URL: "https://panel.test",
        HOST_PORT: "9090"
      },
      "config/host.yaml"
    )
    expect(Either.getOrThrow(result).config).toMatchObject({
      require_signatures: true,
      registry_url: "https://registry.test",
      public_key: key,
      database: "sqlite::memory:",
      base_url: "https://panel.test",
      server: { host: "0.0.0.0", port: 9090 }
    })
  })

  it("warns about unknown keys, nested ones too", () => {
    expect(Either.getOrThrow(decodeConfig({ registry: "x" }, {}, "config/host.yaml")).warnings)
      .toEqual([{ path: "registry", message: `unknown configuration key "registry" is ignored` }])
    expect(Either.getOrThrow(decodeConfig({ server: { hostt: "x" }, limits: { archive: 10 } }, {}, "config/host.yaml")).warnings)
      .toEqual([
        { path: "server.hostt", message: `unknown configuration key "server.hostt" is ignored` },
        { path: "limits.archive", message: `unknown configuration key "limits.archive" is ignored` }
      ])
  })

  it.each<[string, unknown, Record<string, string>, string, string]>([
    ["port out of range", { server: { port: 70000 } }, {}, "server.port", "65535"],
    ["port from the environment", {}, { HOST_PORT: "http" }, "server.port (from HOST_PORT)", "Expected"],
    ["boolean from the environment", {}, { HOST_REQUIRE_SIGNATURES: "maybe" }, "require_signatures (from HOST_REQUIRE_SIGNATURES)", "Expected boolean"],
    ["bad public key", { public_key: "xyz" }, {}, "public_key", "64 hex characters"],
    ["bad trusted key", { trusted_keys: [{ name: "ci", public_key: "00" }] }, {}, "trusted_keys[0].public_key", "64 hex characters"],
    ["negative ttl", { registry_cache_ttl: -1 }, {}, "registry_cache_ttl", "non-negative"],
    ["registry scheme", { registry_url: "ftp://x" }, {}, "registry_url", "http(s):// or file://"],
    ["extensions outside the root", { extensions_path: "../elsewhere" }, {}, "extensions_path", "inside Host's root"],
    ["database outside the root", { database: "sqlite:/var/lib/host.db" }, {}, "database", "inside Host's root"],
    ["database without a name", { database: "mysql://db" }, {}, "database", "the database name is missing"],
    ["bad framework version", { version: "one" }, {}, "version", "not a semantic version"],
    ["zero file limit", { limits: { files: 0 } }, {}, "limits.files", "positive"],
    ["unknown panel driver", { panel: { driver: "ptero" } }, {}, "panel.driver", "embedded"],
    ["panel driver from the environment", {}, { HOST_PANEL_DRIVER: "blueprint" }, "panel.driver (from HOST_PANEL_DRIVER)", "pterodactyl"],
    ["a real panel without its URL", { panel: { driver: "pterodactyl", root: "/var/www/pterodactyl" } }, {}, "panel.url", "is required"],
    ["a real panel without its folder", { panel: { driver: "pelican", url: "http://127.0.0.1" } }, {}, "panel.root", "is required"],
    ["a panel URL that is no URL", { panel: { url: "panel.local" } }, {}, "panel.url", "http(s) URL"],
    ["a bad upload policy", { admin_uploads: "some" }, {}, "admin_uploads", "signed"],
    ["a proxy that is no address", { trusted_proxies: ["proxy.local"] }, {}, "trusted_proxies[0]", "IP address or a CIDR"],
    ["a proxy range too wide", { trusted_proxies: ["10.0.0.0/33"] }, {}, "trusted_proxies[0]", "prefix length"]
  ])("%s names the key", (_, raw, env, path, message) => {
    const result = decodeConfig(raw, env, "config/host.yaml")
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.problems).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]))
      expect(result.left.message).toContain(path)
    }
  })

  it("refuses a file that is not a mapping", () => {
    expect(Either.isLeft(decodeConfig(["x"], {}, "config/host.yaml"))).toBe(true)
  })
})

describe("loadHostConfig", () => {
  it.effect("reads config/host.yaml under the root and resolves paths", () =>
    Effect.gen(function*() {
      const root = tempDir()
      mkdirSync(join(root.path, "config"))
      writeFileSync(join(root.path, "config", "host.yaml"), "extensions_path: exts\ndatabase: sqlite:data/h.db\n")
      const { paths } = yield* loadHostConfig({ root: root.path, env: {} })
      expect(paths.extensions).toBe(join(root.path, "exts"))
      expect(paths.databaseFile).toBe(join(root.path, "data", "h.db"))
      expect(paths.staging).toBe(join(root.path, "storage", "host", "staging"))
      root.cleanup()
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("reports YAML syntax errors", () =>
    Effect.gen(function*() {
      const root = tempDir()
      mkdirSync(join(root.path, "config"))
      writeFileSync(join(root.path, "config", "host.yaml"), "server: [unclosed\n")
      const error = yield* Effect.flip(loadHostConfig({ root: root.path, env: {} }))
      expect(error._tag).toBe("ConfigInvalid")
      expect(error.message).toContain("config/host.yaml: (yaml)")
      root.cleanup()
    }).pipe(Effect.provide(NodeContext.layer)))
})
