import { describe, expect, it } from "vitest"
import { safeRedirect } from "../../src/http/Login.js"

// Finding 1 of issue 16: the sign-in redirect is decided on the normalised URL the browser follows.

describe("safeRedirect", () => {
  it.each([
    "/.//evil.test",
    "/a/..//evil.test",
    "/%2e//evil.test",
    "/%2E%2E//evil.test",
    "/././/evil.test/x?y=1",
    "/a/b/../..//evil.test",
    "//evil.test",
    "/\\evil.test",
    "/\t/evil.test",
    "https://evil.test/",
    "evil.test"
  ])("%s stays on this site", (value) => {
    expect(safeRedirect(value)).toBe("/")
  })

  it.each([
    ["/servers?page=2", "/servers?page=2"],
    ["/a/./b/../c", "/a/c"],
    ["/admin/host/extensions#top", "/admin/host/extensions#top"]
  ])("%s → %s", (value, expected) => {
    expect(safeRedirect(value)).toBe(expected)
  })
})
