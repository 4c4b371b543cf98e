import { Args, Command, Options } from "@effect/cli"
import { Path } from "@effect/platform"
import { Console, Effect, Either } from "effect"
import { inspectFile, limitsFromConfig, listedFileCount } from "../../archive/Archive.js"
import { keyringFromConfig, signaturePolicy } from "../../archive/Signing.js"
import { HostConfig } from "../../config/HostConfig.js"
import { problem } from "../../domain/Problems.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatPairs, printJson } from "../Output.js"
import { configLayer } from "../Runtime.js"

export const verifyCommand = Command.make(
  "verify",
  {
    file: Args.text({ name: "file" }).pipe(Args.withDescription("the .host archive (a <file>.sig beside it is checked too)")),
    json: Options.boolean("json").pipe(Options.withDescription("print {status, id, version, files, problems} only"))
  },
  ({ file, json }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const path = yield* Path.Path
      const { config } = yield* HostConfig.pipe(Effect.provide(configLayer(invocation)))
      const inspection = yield* inspectFile(path.resolve(file), {
        limits: limitsFromConfig(config),
        keyring: keyringFromConfig(config)
      })
      const policy = signaturePolicy(inspection.status, config.require_signatures)
      const problems = [...inspection.problems]
      if (Either.isLeft(policy) && (inspection.status === "unsigned" || inspection.status === "untrusted")) {
        problems.push(problem("require_signatures", `this panel would refuse to install it: ${policy.left}`))
      }
      const failed = inspection.status === "invalid" || inspection.status === "modified"
      if (json) {
        yield* printJson({
          status: inspection.status,
          id: inspection.manifest.id,
          version: inspection.manifest.version,
          files: listedFileCount(inspection),
          problems
        })
      } else {
        const key = inspection.signature.key
        const statusText = inspection.status === "signed"
          ? `signed (key ${key}, trusted as "${inspection.signature.trustedAs}")`
          : inspection.status === "untrusted"
          ? `untrusted (valid signature by key ${key}, which is not in the keyring)`
          : inspection.status
        const lines = [
          formatPairs([
            ["Archive", inspection.source],
            ["Status", statusText],
            ["Extension", `${inspection.manifest.id ?? "(unknown id)"} ${inspection.manifest.version ?? "(unknown version)"}`],
            ["Files", String(listedFileCount(inspection))],
            ["sha256", inspection.sha256]
          ])
        ]
        if (problems.length > 0) lines.push("Problems:", ...problems.map((p) => ` - ${p.path}: ${p.message}`))
        yield* Console.log(lines.join("\n"))
      }
      if (failed) return yield* exitWith(1)
    })
).pipe(Command.withDescription("Verify a .host archive: safety checks, checksums and signature status"))
