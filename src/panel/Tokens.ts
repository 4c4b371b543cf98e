import { FileSystem, Path } from "@effect/platform"
import { Data, Effect } from "effect"
import { randomBytes } from "node:crypto"
import { isMap, isSeq, parseDocument } from "yaml"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem } from "../domain/Problems.js"
import { hashToken, readPanelFile } from "./Panel.js"

// `host panel:token <username>`: a new random API token for a panel user. Only its sha256 is written
// to config/panel.yaml (comments and layout kept); the token itself is shown once.

export class PanelUserNotFound extends Data.TaggedError("PanelUserNotFound")<{
  readonly username: string
  readonly known: ReadonlyArray<string>
}> {
  override get message() {
    return `no panel user "${this.username}" in config/panel.yaml (users: ${this.known.join(", ") || "none"})`
  }
}

export const generateToken = (): string => `host_${randomBytes(24).toString("hex")}`

export const issueToken = Effect.fn("Tokens.issue")(function*(username: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const panel = yield* readPanelFile
  const user = panel.users.find((entry) => entry.username === username)
  if (user === undefined) return yield* new PanelUserNotFound({ username, known: panel.users.map((entry) => entry.username) })
  const file = path.join(paths.root, "config", "panel.yaml")
  const fail = (message: string) => new ConfigInvalid({ source: "config/panel.yaml", problems: [problem("(file)", message)] })
  const text = yield* fs.readFileString(file).pipe(Effect.mapError((error) => fail(error.message)))
  const document = parseDocument(text)
  const users = document.get("users")
  if (!isSeq(users)) return yield* fail("users is not a list")
  const index = users.items.findIndex((item) => isMap(item) && String(item.get("username")) === username)
  if (index < 0) return yield* new PanelUserNotFound({ username, known: panel.users.map((entry) => entry.username) })
  const token = generateToken()
  document.setIn(["users", index, "token_sha256"], hashToken(token))
  const temporary = `${file}.${process.pid}.tmp`
  yield* fs.writeFileString(temporary, document.toString()).pipe(Effect.mapError((error) => fail(error.message)))
  yield* fs.rename(temporary, file).pipe(Effect.mapError((error) => fail(error.message)))
  return { username, userId: user.id, token }
})
