// `bin/host.js` runs the bundle from V8's code cache and, when it had none of its own it could use, writes
// one. A short command writes it as it exits, in a file of its own when it is a built-in command; a server
// says when it has started, so the cache holds what a start compiles (docs/decisions.md "A code cache per
// kind of command", "A code cache per command"). Outside `bin/host.js` (the tests run `main()` in process)
// there is nothing to tell.

const callHook = (name: string): void => {
  const hook = (globalThis as Record<symbol, unknown>)[Symbol.for(name)]
  if (typeof hook === "function") hook()
}

/** Tells `bin/host.js` that the server has started: the moment to write its code cache, if it needs one. */
export const serverStarted = (): void => callHook("host.started")

/** Tells `bin/host.js` that this run is a built-in command, which keeps a code cache of its own. */
export const builtinCommandRuns = (): void => callHook("host.builtin")
