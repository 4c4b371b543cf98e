// `bin/host.js` runs the bundle from V8's code cache and, when it had none it could use, writes one. A
// short command writes it as it exits; a server says when it has started, so the cache holds what a start
// compiles (docs/decisions.md "A code cache per kind of command"). Outside `bin/host.js` (the tests run
// `main()` in process) there is nothing to tell.

/** Tells `bin/host.js` that the server has started: the moment to write its code cache, if it needs one. */
export const serverStarted = (): void => {
  const hook = (globalThis as Record<symbol, unknown>)[Symbol.for("host.started")]
  if (typeof hook === "function") hook()
}
