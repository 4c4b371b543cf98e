import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { limitsFromConfig } from "../../archive/Archive.js"
import { keyringFromConfig } from "../../archive/Signing.js"
import { HostConfig } from "../../config/HostConfig.js"
import { buildRegistry } from "../../usecases/RegistryBuild.js"
import { CliInvocation } from "../Invocation.js"
import { formatPairs, printJson } from "../Output.js"
import { configLayer } from "../Runtime.js"

// `host registry:build <dir>` (DESIGN §25, docs/registry.md "Publishing"): a folder of exported archives
// becomes a registry that static hosting can serve.

/** Progress is worth a line only for a long run; a short one stays quiet. */
const progressFrom = 20

export const registryBuildCommand = Command.make(
  "registry:build",
  {
    dir: Args.text({ name: "dir" }).pipe(
      Args.withDescription("the folder of .host archives; registry.json (and registry.json.sig) are written into it")
    ),
    url: Options.text("url").pipe(
      Options.optional,
      Options.withDescription("the URL the folder will be served at; archive URLs are relative to registry.json without it")
    ),
    sign: Options.boolean("sign").pipe(
      Options.withDescription("sign registry.json with the Ed25519 secret key in HOST_SECRET_KEY (writes registry.json.sig)")
    ),
    expiresDays: Options.integer("expires-days").pipe(
      Options.withDefault(30),
      Options.withDescription("days until the index expires and panels refuse it (default 30); rebuild before then")
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print {path, serial, expires_at, extensions, versions, signed} only"))
  },
  ({ dir, expiresDays, json, sign, url }) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const { config } = yield* HostConfig.pipe(Effect.provide(configLayer(invocation)))
      const result = yield* buildRegistry({
        dir,
        url: Option.getOrUndefined(url),
        sign,
        secretKey: invocation.env.HOST_SECRET_KEY,
        secretKeySource: "HOST_SECRET_KEY",
        expiresDays,
        now: new Date(),
        limits: limitsFromConfig(config),
        keyring: keyringFromConfig(config),
        onProgress: (done, total) =>
          total >= progressFrom && (done % 10 === 0 || done === total)
            ? Effect.sync(() => void process.stderr.write(`  - verified ${done} of ${total} archives\n`))
            : Effect.void
      })
      if (json) {
        const { signaturePath: _signaturePath, ...view } = result
        return yield* printJson(view)
      }
      yield* Console.log(formatPairs([
        ["Index", result.path],
        ["Serial", String(result.serial)],
        ["Expires", result.expires_at],
        ["Extensions", `${result.extensions} (${result.versions} versions)`],
        ["Signature", result.signaturePath ?? "none (unsigned; --sign with HOST_SECRET_KEY signs it)"]
      ]))
    })
).pipe(Command.withDescription("Build registry.json from a folder of .host archives (verified first; --sign signs the index)"))
