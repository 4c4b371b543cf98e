import { FileSystem, Path } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { accessSync, constants } from "node:fs"
import { userInfo } from "node:os"
import type { PanelPlan } from "./PanelInstall.js"

// Whether this process may write every file a panel plan changes, asked before anything is written
// (docs/decisions.md "panel:install checks it may write before it writes"): a panel folder belongs to its
// web server's user, and an install run as another user used to fail half-way with `Unknown:
// FileSystem.open`. A file is written through a temporary file and a rename in its folder, so it is the
// folder (or, for a new folder, its nearest existing ancestor) that must be writable; EROFS (a read-only
// mount) refuses root too.

export interface Unwritable {
  readonly path: string
  /** The existing folder that refuses the write. */
  readonly folder: string
  /** A read-only file system (EROFS) refuses root too: running as root does not help. */
  readonly readOnly: boolean
}

/** Who runs this, and who owns the panel's folder: the two ways out of a refusal. */
export interface WriteAdvice {
  readonly user: string
  /** The panel folder's owner by name (`#uid` when /etc/passwd does not name it). */
  readonly owner: string
}

/** The plan's files (and the folder it removes) that this process cannot write. */
export const unwritableTargets = (plan: PanelPlan) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const existingFolder = (start: string) =>
      Effect.gen(function*() {
        let folder = start
        while (!(yield* fs.exists(folder).pipe(Effect.orElseSucceed(() => false)))) {
          const parent = path.dirname(folder)
          if (parent === folder) break
          folder = parent
        }
        return folder
      })
    // Node's own access(2), for the error code: EROFS and EACCES call for different advice.
    const refusal = (folder: string) =>
      Effect.sync((): "ok" | "read-only" | "denied" => {
        try {
          accessSync(folder, constants.W_OK)
          return "ok"
        } catch (error) {
          return (error as NodeJS.ErrnoException).code === "EROFS" ? "read-only" : "denied"
        }
      })
    const targets = [
      ...plan.changes.filter((c) => c.action !== "unchanged").map((c) => c.path),
      ...(plan.removeFolder === undefined ? [] : [plan.removeFolder])
    ]
    const refused: Array<Unwritable> = []
    for (const target of targets) {
      const folder = yield* existingFolder(path.dirname(target))
      const answer = yield* refusal(folder)
      if (answer !== "ok") refused.push({ path: target, folder, readOnly: answer === "read-only" })
    }
    // A folder removed whole needs each of its own folders writable too (their entries are unlinked).
    if (plan.removeFolder !== undefined && refused.every((r) => r.path !== plan.removeFolder)) {
      const inside = yield* fs.readDirectory(plan.removeFolder, { recursive: true }).pipe(Effect.orElseSucceed(() => []))
      const folders = [plan.removeFolder]
      for (const entry of inside) {
        const full = path.join(plan.removeFolder, entry)
        const info = yield* fs.stat(full).pipe(Effect.option)
        if (Option.isSome(info) && info.value.type === "Directory") folders.push(full)
      }
      for (const folder of folders) {
        const answer = yield* refusal(folder)
        if (answer !== "ok") {
          refused.push({ path: plan.removeFolder, folder, readOnly: answer === "read-only" })
          break
        }
      }
    }
    return refused
  })

/** This process's user and the owner of `panelRoot`, by name. */
export const writeAdvice = (panelRoot: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const user = Effect.try(() => userInfo().username).pipe(Effect.orElseSucceed(() => `#${process.getuid?.() ?? "?"}`))
    const uid = yield* fs.stat(panelRoot).pipe(Effect.map((info) => Option.getOrUndefined(info.uid)), Effect.orElseSucceed(() => undefined))
    const passwd = yield* fs.readFileString("/etc/passwd").pipe(Effect.orElseSucceed(() => ""))
    const name = passwd.split("\n").map((line) => line.split(":")).find((fields) => fields.length > 2 && Number(fields[2]) === uid)?.[0]
    return { user: yield* user, owner: name ?? (uid === undefined ? "root" : `#${uid}`) } satisfies WriteAdvice
  })

/**
 * `run as root … or as the panel's owner …`, with the command line to run; for a read-only file system,
 * which refuses root too, to make it writable first.
 */
export const runAsAdvice = (advice: WriteAdvice, command: string, refused: ReadonlyArray<Unwritable> = []): string => {
  const readOnly = refused.find((r) => r.readOnly)
  if (readOnly !== undefined) return `${readOnly.folder} is on a read-only file system: mount it read-write, then run ${command} again`
  if (advice.user === "root") return `check the folder's permissions and attributes (lsattr), then run ${command} again`
  return advice.owner === "root" || advice.owner === advice.user
    ? `run it as root: sudo ${command}`
    : `run it as root or as the panel's owner: sudo ${command}, or sudo -u ${advice.owner} ${command}`
}

/** A real install or uninstall that would fail part-way: refused before anything is written. */
export class PanelNotWritable extends Data.TaggedError("PanelNotWritable")<{
  readonly refused: ReadonlyArray<Unwritable>
  readonly advice: WriteAdvice
  readonly command: string
}> {
  override get message() {
    const first = this.refused[0]!
    const more = this.refused.length > 1 ? ` (and ${this.refused.length - 1} more: ${this.refused.slice(1).map((r) => r.path).join(", ")})` : ""
    return `${first.path} is not writable by ${this.advice.user} (the folder ${first.folder} refuses it${first.readOnly ? ": read-only file system" : ""})${more}; ` +
      `nothing was written: ${runAsAdvice(this.advice, this.command, this.refused)}`
  }
}
