import { Schema } from "effect"

// Errors a caller can act on, shared across boxes. Each carries what the CLI and HTTP layers need to
// render one clear line; `problems` lists every finding when there are several.

const ProblemSchema = Schema.Struct({ path: Schema.String, message: Schema.String })

export class ManifestInvalid extends Schema.TaggedError<ManifestInvalid>()("ManifestInvalid", {
  source: Schema.String,
  problems: Schema.Array(ProblemSchema)
}) {
  override get message() {
    const first = this.problems[0]
    const more = this.problems.length > 1 ? ` (and ${this.problems.length - 1} more)` : ""
    return `${this.source}: ${first === undefined ? "invalid manifest" : `${first.path}: ${first.message}`}${more}`
  }
}

export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", {
  source: Schema.String,
  problems: Schema.Array(ProblemSchema)
}) {
  override get message() {
    return `${this.source}: ${this.problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`
  }
}

export class DesiredStateInvalid extends Schema.TaggedError<DesiredStateInvalid>()("DesiredStateInvalid", {
  source: Schema.String,
  problems: Schema.Array(ProblemSchema)
}) {
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

export class NotAvailableYet extends Schema.TaggedError<NotAvailableYet>()("NotAvailableYet", {
  command: Schema.String
}) {
  override get message() {
    return `${this.command} is not available yet`
  }
}
