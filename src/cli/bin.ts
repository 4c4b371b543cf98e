import { main } from "./main.js"

// The bundled entry of `bin/host.js`.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`error: host: unexpected failure: ${String(error)}\n`)
    process.exitCode = 1
  }
)
