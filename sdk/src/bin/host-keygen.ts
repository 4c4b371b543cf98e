import { Effect } from "effect"
import { renderKeyPair } from "../../../src/archive/Authoring.js"
import { generateKeyPair } from "../../../src/archive/Signing.js"

// `host-keygen [--json]`: an Ed25519 key pair for signing `.host` archives, on an author's machine.

const argv = process.argv.slice(2)
const unknown = argv.filter((arg) => arg !== "--json")
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write("Usage: host-keygen [--json]\n\nPrints a new Ed25519 key pair and how to use it.\n")
} else if (unknown.length > 0) {
  process.stderr.write(`error: host-keygen: unknown argument ${unknown[0]}\nUsage: host-keygen [--json]\n`)
  process.exitCode = 2
} else {
  Effect.runPromise(generateKeyPair).then((pair) => {
    process.stdout.write(
      argv.includes("--json")
        ? `${JSON.stringify({ public_key: pair.public_key, secret_key: pair.secret_key }, null, 2)}\n`
        : `${renderKeyPair(pair, "host-pack --sign")}\n`
    )
  })
}
