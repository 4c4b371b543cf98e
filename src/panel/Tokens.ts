import { Data, Effect } from "effect"
import { randomHex } from "../system/Ids.js"
import { isMap, isSeq } from "yaml"
import { editPanelFile, hashToken } from "./Panel.js"

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

/** A new API token: `host_` and 24 random bytes in hex (system/Ids.ts, so tests can fix it). */
export const generateToken: Effect.Effect<string> = Effect.map(randomHex(24), (hex) => `host_${hex}`)

export const issueToken = (username: string) =>
  editPanelFile((document, panel) =>
    Effect.gen(function*() {
      const notFound = new PanelUserNotFound({ username, known: panel.users.map((entry) => entry.username) })
      const user = panel.users.find((entry) => entry.username === username)
      const users = document.get("users")
      const index = isSeq(users) ? users.items.findIndex((item) => isMap(item) && String(item.get("username")) === username) : -1
      if (user === undefined || index < 0) return yield* notFound
      const token = yield* generateToken
      document.setIn(["users", index, "token_sha256"], hashToken(token))
      return { username, userId: user.id, token }
    })
  ).pipe(Effect.withSpan("Tokens.issue"))
