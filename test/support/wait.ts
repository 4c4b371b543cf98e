// Waiting for an event in a test: poll what the test can observe (a file, a line of output, an HTTP
// answer) until it shows the event, with a deadline that only bounds a failure. Never a fixed sleep
// standing in for "the other process is there by now".

/** Polls `read` every `every` ms until `accept` holds and returns that value; fails after `ms`. */
export const eventually = async <A>(
  read: () => A | Promise<A>,
  accept: (value: A) => boolean,
  options: { readonly ms?: number; readonly every?: number; readonly what?: string } = {}
): Promise<A> => {
  const { ms = 15_000, every = 25, what = "the condition" } = options
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (accept(value)) return value
    if (Date.now() > deadline) throw new Error(`${what} not met within ${ms} ms; last seen: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, every))
  }
}

/** Resolves once `condition` holds; fails after `ms` naming `what`. */
export const until = async (condition: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> => {
  await eventually(condition, (holds) => holds, { ms, what })
}
