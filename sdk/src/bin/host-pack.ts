import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, Effect, Exit, Option } from "effect"
import { exportExtension, renderExport } from "../../../src/archive/Authoring.js"

// `host-pack [<path>] [--output <file>] [--sign] [--secret-key <hex>] [--dry-run] [--json]`: packs an
// extension folder as a `.host` archive on an author's machine, without a panel. The packing is the
// framework's own (src/archive, bundled in), so the bytes are those `host export` writes.

const usage = `Usage: host-pack [<path>] [--output <file-or-folder/>] [--sign] [--secret-key <hex>] [--dry-run] [--json]

Packs the extension folder <path> (default: the current folder) as <vendor>-<name>-<version>.host,
with its .sha256 beside it (and a detached .sig when signing).

  --output <path>     archive file path, or a folder (existing, or ending in /); default: the current folder
  --sign              sign with the secret key in HOST_SECRET_KEY (or --secret-key)
  --secret-key <hex>  the Ed25519 secret key (64 or 128 hex); implies --sign
  --dry-run           validate and pack in memory, print what would be written, write nothing
  --json              print one JSON document
`

interface Parsed {
  readonly path: string
  readonly output: string | undefined
  readonly sign: boolean
  readonly secretKey: string | undefined
  readonly dryRun: boolean
  readonly json: boolean
}

const parse = (argv: ReadonlyArray<string>): Parsed | { readonly usageError: string } | "help" => {
  const positional: Array<string> = []
  let output: string | undefined
  let secretKey: string | undefined
  let sign = false
  let dryRun = false
  let json = false
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    const [flag, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined]
    const value = (): string | undefined => {
      if (inline !== undefined) return inline
      const next = argv[index + 1]
      if (next === undefined || next.startsWith("--")) return undefined
      index++
      return next
    }
    switch (flag) {
      case "--help":
      case "-h":
        return "help"
      case "--output":
      case "-o": {
        output = value()
        if (output === undefined) return { usageError: `${flag} needs a file or folder` }
        break
      }
      case "--secret-key": {
        secretKey = value()
        if (secretKey === undefined) return { usageError: "--secret-key needs a hex key" }
        sign = true
        break
      }
      case "--sign":
        sign = true
        break
      case "--dry-run":
        dryRun = true
        break
      case "--json":
        json = true
        break
      default:
        if (arg.startsWith("-")) return { usageError: `unknown option ${arg}` }
        positional.push(arg)
    }
  }
  if (positional.length > 1) return { usageError: `one extension folder at most (got ${positional.join(", ")})` }
  return { path: positional[0] ?? ".", output, sign, secretKey, dryRun, json }
}

const run = async (argv: ReadonlyArray<string>): Promise<number> => {
  const parsed = parse(argv)
  if (parsed === "help") {
    process.stdout.write(usage)
    return 0
  }
  if ("usageError" in parsed) {
    process.stderr.write(`error: host-pack: ${parsed.usageError}\n${usage}`)
    return 2
  }
  const fromOption = parsed.secretKey !== undefined
  const program = exportExtension({
    path: parsed.path,
    output: parsed.output,
    cwd: process.cwd(),
    sign: parsed.sign,
    secretKey: fromOption ? parsed.secretKey : process.env.HOST_SECRET_KEY,
    secretKeySource: fromOption ? "--secret-key" : "HOST_SECRET_KEY",
    dryRun: parsed.dryRun
  }).pipe(Effect.provide(NodeContext.layer))
  const exit = await Effect.runPromiseExit(program)
  if (Exit.isSuccess(exit)) {
    const result = exit.value
    for (const warning of result.warnings) process.stderr.write(`warning: extension.yaml: ${warning.path}: ${warning.message}\n`)
    if (parsed.json) {
      const { warnings: _warnings, ...view } = result
      process.stdout.write(`${JSON.stringify(view, null, 2)}\n`)
    } else {
      process.stdout.write(`${renderExport(result)}\n`)
    }
    return 0
  }
  const failure = Cause.failureOption(exit.cause)
  const message = Option.isSome(failure) ? failure.value.message : `unexpected failure: ${Cause.pretty(exit.cause)}`
  process.stderr.write(`error: host-pack: ${message}\n`)
  return 1
}

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
