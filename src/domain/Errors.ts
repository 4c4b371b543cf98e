import { Data } from "effect"
import type { Problem } from "./Problems.js"

// Errors a caller can act on, shared across boxes. Each carries what the CLI and HTTP layers need to
// render one clear line; `problems` lists every finding when there are several.

export class ManifestInvalid extends Data.TaggedError("ManifestInvalid")<{
  readonly source: string
  readonly problems: ReadonlyArray<Problem>
}> {
  override get message() {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ""
    return `${this.source}: ${first === undefined ? "invalid manifest" : `${first.path}: ${first.message}`}${more}`
  }
}

export class ConfigInvalid extends Data.TaggedError("ConfigInvalid")<{
  readonly source: string
  readonly problems: ReadonlyArray<Problem>
}> {
  override get message() {
    return `${this.source}: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

/** `--root` (or HOST_ROOT) names no folder: never made into a new, empty panel by mistake. */
export class RootNotFound extends Data.TaggedError("RootNotFound")<{
  readonly root: string
  readonly reason: "does not exist" | "is not a folder"
}> {
  override get message() {
    return `the panel root ${this.root} ${this.reason}; pass --root (or HOST_ROOT) the folder of a panel, or create the folder first`
  }
}

export class DesiredStateInvalid extends Data.TaggedError("DesiredStateInvalid")<{
  readonly source: string
  readonly problems: ReadonlyArray<Problem>
}> {
  override get message() {
    return `${this.source}: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

export class ExtensionNotFound extends Data.TaggedError("ExtensionNotFound")<{
  readonly id: string
}> {
  override get message() {
    return `extension ${this.id} is not installed`
  }
}
