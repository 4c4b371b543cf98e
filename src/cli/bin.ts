import { join } from "node:path"
import { main } from "./main.js"

// The bundled entry of `bin/host.js`.

// @effect/cli renders help and usage errors with ANSI styles; drop them for pipes, files and NO_COLOR.
const ANSI = /\u001b\[[0-9;]*m/g
for (const stream of [process.stdout, process.stderr]) {
  if (stream.isTTY && process.env.NO_COLOR === undefined) continue
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: Array<unknown>) => boolean
  stream.write = ((chunk: string | Uint8Array, ...rest: Array<unknown>) =>
    write(typeof chunk === "string" ? chunk.replace(ANSI, "") : chunk, ...rest)) as typeof stream.write
}

// This entry is bundled as CommonJS into dist/host.cjs: the framework's folder is the one above it.
main(process.argv.slice(2), join(__dirname, "..")).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`error: host: unexpected failure: ${String(error)}\n`)
    process.exitCode = 1
  }
)
