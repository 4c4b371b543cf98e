import { ParseResult, Schema } from "effect"
// The two functions alone, not the package's index (every semver module): this module is loaded by every
// command through config/host.yaml's `version` (docs/architecture.md, "Startup").
import validVersion from "semver/functions/valid.js"
import validRange from "semver/ranges/valid.js"

// Versions and version ranges as manifests and config/host.yaml write them.

/** A string that YAML may have read as a number (`version: 1.0`): refused with a hint to quote it. */
export const quotedString = (example: string) =>
  Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.String, {
    strict: true,
    decode: (value, _, ast) =>
      typeof value === "string"
        ? ParseResult.succeed(value)
        : ParseResult.fail(
          new ParseResult.Type(ast, value, `YAML read ${value} as a number; write it as a quoted string such as "${example}"`)
        ),
    encode: ParseResult.succeed
  })

export const SemverVersion = quotedString("1.0.0").pipe(
  Schema.filter((version) => validVersion(version) !== null || `"${version}" is not a semantic version (like 1.2.0)`)
)

export const VersionRange = quotedString("^1.2").pipe(
  Schema.filter((range) => validRange(range) !== null || `"${range}" is not a version range (like ^1.2)`)
)
