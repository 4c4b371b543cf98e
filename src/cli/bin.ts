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
// Once the command has finished, whatever is still open must not keep the process: a database server that
// accepted the connection and then went silent leaves the driver's socket behind after the connect timeout
// failed the command (docs/decisions.md "A finished command exits"). The timer is unref'd, so a process with
// nothing left open exits at once as before; one with a stray handle exits a second later.
const finish = (code: number) => {
  process.exitCode = code
  setTimeout(() => process.exit(code), 1000).unref()
}

main(process.argv.slice(2), join(__dirname, "..")).then(
  finish,
  (error: unknown) => {
    process.stderr.write(`error: host: unexpected failure: ${String(error)}\n`)
    finish(1)
  }
)
