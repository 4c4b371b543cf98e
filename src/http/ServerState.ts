import { Context, Effect, Layer } from "effect"

// What one `host serve` keeps between requests besides its runtime, sessions and limiter: built with the
// server (a layer in its scope), not module state, so two servers in one process share nothing and a
// closed server leaves nothing behind (docs/decisions.md "Live state").

export interface StaticFile {
  readonly stamp: string
  readonly etag: string
  readonly bytes: Uint8Array
}

export interface ServerStateService {
  /** Static files by path with their ETag, while their size and mtime stay the same (bounded: cleared past 2,000). */
  readonly staticFiles: Map<string, StaticFile>
  /** Diagnostics reports are read-modify-written into one file: one write at a time. */
  readonly diagnosticsWrites: Effect.Semaphore
}

export class ServerState extends Context.Tag("host/http/ServerState")<ServerState, ServerStateService>() {}

export const layer: Layer.Layer<ServerState> = Layer.effect(
  ServerState,
  Effect.map(Effect.makeSemaphore(1), (diagnosticsWrites) => ({ staticFiles: new Map<string, StaticFile>(), diagnosticsWrites }))
)
