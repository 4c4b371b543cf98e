import { Data } from "effect"

// Framework events (docs/backend.md "Event listeners"), dispatched after an operation commits.

export class ExtensionInstalled extends Data.TaggedClass("ExtensionInstalled")<{
  readonly extensionId: string
  readonly version: string
}> {}

export class ExtensionUpdated extends Data.TaggedClass("ExtensionUpdated")<{
  readonly extensionId: string
  readonly fromVersion: string
  readonly toVersion: string
}> {}

export class ExtensionEnabled extends Data.TaggedClass("ExtensionEnabled")<{ readonly extensionId: string }> {}

export class ExtensionDisabled extends Data.TaggedClass("ExtensionDisabled")<{ readonly extensionId: string }> {}

export class ExtensionRemoved extends Data.TaggedClass("ExtensionRemoved")<{ readonly extensionId: string }> {}

export type LifecycleEvent =
  | ExtensionInstalled
  | ExtensionUpdated
  | ExtensionEnabled
  | ExtensionDisabled
  | ExtensionRemoved

/** Every event a listener can hear: the lifecycle events and the panel's. */
export const eventNames: ReadonlyArray<string> = [
  "ExtensionInstalled",
  "ExtensionUpdated",
  "ExtensionEnabled",
  "ExtensionDisabled",
  "ExtensionRemoved",
  "ServerCreated",
  "ServerDeleted"
]

/**
 * The event a `getEventListeners()` key names: the bare name, or the class name in the `Host\Events`
 * namespace (`Host\Events\ExtensionInstalled`, also written with `/` or `.`); undefined for no known event.
 */
export const eventNameOf = (key: string): string | undefined => {
  const name = key.replace(/^\\?Host[\\/.]Events[\\/.]/, "")
  return eventNames.includes(name) ? name : undefined
}
