import { Schema } from "effect"

// Errors a caller can act on, shared across boxes. Each carries what the CLI and HTTP layers need to
// render one clear line; `problems` lists every finding when there are several. They are Schema errors
// because they leave the process (HTTP answers, the upload worker's verdict), so each has one declared
// shape on both sides.

/** One finding (domain/Problems.ts `Problem`) as a Schema. */
export const ProblemSchema = Schema.Struct({ path: Schema.String, message: Schema.String })

const problemsFields = {
  source: Schema.String,
  problems: Schema.Array(ProblemSchema)
}

export class ManifestInvalid extends Schema.TaggedError<ManifestInvalid>()("ManifestInvalid", problemsFields) {
  override get message() {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ""
    return `${this.source}: ${first === undefined ? "invalid manifest" : `${first.path}: ${first.message}`}${more}`
  }
}

export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", problemsFields) {
  override get message() {
    return `${this.source}: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

/** `--root` (or HOST_ROOT) names no folder: never made into a new, empty panel by mistake. */
export class RootNotFound extends Schema.TaggedError<RootNotFound>()("RootNotFound", {
  root: Schema.String,
  reason: Schema.Literal("does not exist", "is not a folder")
}) {
  override get message() {
    return `Host's root ${this.root} ${this.reason}; pass --root (or HOST_ROOT) the folder Host keeps its config/ and storage/ in (not the panel's folder), or create the folder first`
  }
}

export class DesiredStateInvalid extends Schema.TaggedError<DesiredStateInvalid>()("DesiredStateInvalid", problemsFields) {
  override get message() {
    return `${this.source}: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

export class ExtensionNotFound extends Schema.TaggedError<ExtensionNotFound>()("ExtensionNotFound", {
  id: Schema.String
}) {
  override get message() {
    return `extension ${this.id} is not installed`
  }
}
