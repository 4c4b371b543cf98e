import { Data, Effect } from "effect"
import { randomBytes } from "node:crypto"
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

export const generateToken = (): string => `host_${randomBytes(24).toString("hex")}`

export const issueToken = (username: string) =>
  editPanelFile((document, panel) =>
    Effect.gen(function*() {
      const notFound = new PanelUserNotFound({ username, known: panel.users.map((entry) => entry.username) })
      const user = panel.users.find((entry) => entry.username === username)
      const users = document.get("users")
      const index = isSeq(users) ? users.items.findIndex((item) => isMap(item) && String(item.get("username")) === username) : -1
      if (user === undefined || index < 0) return yield* notFound
      const token = generateToken()
      document.setIn(["users", index, "token_sha256"], hashToken(token))
      return { username, userId: user.id, token }
    })
  ).pipe(Effect.withSpan("Tokens.issue"))
