import { Schema } from "effect"

// The use cases' own refusals: facts about the panel a front door turns into its answer (docs/http.md
// gives each its status). Schema classes, so they keep their type across any boundary they cross.

/** The extension the request names is not installed. */
export class ExtensionNotInstalled extends Schema.TaggedError<ExtensionNotInstalled>()("ExtensionNotInstalled", {
  extensionId: Schema.String
}) {
  override get message() {
    return `extension ${this.extensionId} is not installed`
  }
}

/** The extension is installed but the current runtime generation did not boot it. */
export class ExtensionNotLoaded extends Schema.TaggedError<ExtensionNotLoaded>()("ExtensionNotLoaded", {
  extensionId: Schema.String
}) {
  override get message() {
    return `${this.extensionId} is not running (disabled, quarantined or not installed), so its checks cannot run`
  }
}

/** The server's first runtime generation is still being built. */
export class RuntimeNotReady extends Schema.TaggedError<RuntimeNotReady>()("RuntimeNotReady", {}) {
  override get message() {
    return "the runtime is still booting"
  }
}

/** A registry search was asked for and no registry is configured (the admin's words, not the registry service's). */
export class RegistryUnset extends Schema.TaggedError<RegistryUnset>()("RegistryUnset", {}) {
  override get message() {
    return "no registry is configured (registry_url in config/host.yaml)"
  }
}
