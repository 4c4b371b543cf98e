import { describe, expect, it } from "vitest"
import { normalizeHealthStatus } from "../../src/domain/Health.js"

describe("normalizeHealthStatus", () => {
  it.each([
    ["ok", "ok"], ["pass", "ok"], ["PASSED", "ok"], ["healthy", "ok"],
    ["warning", "warning"], ["warn", "warning"], ["degraded", "warning"],
    ["error", "error"], ["fail", "error"], ["failed", "error"], ["critical", "error"],
    ["unknown", "unknown"], ["banana", "unknown"], [42, "unknown"], [undefined, "unknown"]
  ])("%s → %s", (input, expected) => {
    expect(normalizeHealthStatus(input)).toBe(expected)
  })
})
