import { describe, expect, it } from "vitest"
import { expectedBlock, scanBlock, webServerSnippet, withBlock, withoutBlock } from "../../src/panel/PanelFiles.js"

// Finding Host's marked block again (docs/panels.md, "Installing into Pterodactyl"): exactly one begin
// followed by one end, and removing it gives back the file as it was.

const present = (text: string) => {
  const scan = scanBlock(text)
  if (scan._tag !== "Present") throw new Error(`expected a block, got ${JSON.stringify(scan)}`)
  return scan
}

describe("the marked block", () => {
  it.each([
    ["empty", ""],
    ["stock", "{{-- Just here as a binder for dynamically rendered content. --}}\n"],
    ["no final newline", "<meta name=\"x\">"],
    ["several lines", "a\nb\n\nc\n"],
    ["CRLF", "line one\r\nline two\r\n"]
  ])("round-trips a %s file byte for byte", (_name, original) => {
    const installed = withBlock(original)
    const scan = present(installed)
    expect(scan.text).toBe(expectedBlock(scan.joined))
    expect(withoutBlock(installed, scan)).toBe(original)
    expect(scanBlock(original)._tag).toBe("Absent")
  })

  it("finds the block with text after it and removes only the block", () => {
    const installed = `${withBlock("before\n")}after\n`
    expect(withoutBlock(installed, present(installed))).toBe("before\nafter\n")
  })

  it.each([
    ["{{-- host:begin --}}\nx\n", 1, "host:begin without host:end"],
    ["x\n{{-- host:end --}}\n", 2, "host:end without host:begin"],
    ["{{-- host:end --}}\n{{-- host:begin --}}\n", 1, "host:end before host:begin"],
    ["{{-- host:begin --}}\n{{-- host:begin --}}\n{{-- host:end --}}\n", 2, "a second host:begin marker"],
    ["{{-- host:begin --}}\n{{-- host:end --}}\n{{-- host:end --}}\n", 3, "a second host:end marker"]
  ])("refuses %j at line %i", (text, line, reason) => {
    expect(scanBlock(text)).toEqual({ _tag: "Tampered", line, reason })
  })
})

describe("web-server snippets", () => {
  it("send the three prefixes to the upstream, events unbuffered", () => {
    const nginx = webServerSnippet("nginx", "http://127.0.0.1:8080")
    expect(nginx.match(/location \^~ /g)).toHaveLength(4)
    expect(nginx).toContain("location ^~ /api/client/host/events {\n    proxy_pass http://127.0.0.1:8080;")
    expect(nginx.split("location ^~ /api/client/host/events {")[1]!.split("}")[0]).toContain("proxy_buffering off;")
    for (const header of ["proxy_set_header Host $http_host;", "proxy_set_header X-Forwarded-Host $http_host;", "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;", "proxy_set_header X-Forwarded-Proto $scheme;", "proxy_http_version 1.1;"]) {
      expect(nginx.match(new RegExp(header.replace(/[$.]/g, "\\$&"), "g"))).toHaveLength(4)
    }
    const caddy = webServerSnippet("caddy", "http://127.0.0.1:8080")
    expect(caddy).toContain("handle /host/* {\n    reverse_proxy 127.0.0.1:8080\n}")
    const apache = webServerSnippet("apache", "http://127.0.0.1:8080")
    expect(apache).toContain("ProxyPass /api/client/host/ http://127.0.0.1:8080/api/client/host/")
    // The events rule comes before the prefix that contains it (Apache takes the first match).
    expect(apache.indexOf("ProxyPass /api/client/host/events")).toBeLessThan(apache.indexOf("ProxyPass /api/client/host/ "))
  })
})
