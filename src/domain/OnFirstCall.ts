/**
 * A function made when it is first called and kept: for decoders compiled from a Schema, which Effect
 * compiles as soon as one is asked for. At module level that compile would run on every start, for
 * commands that never decode such a value (docs/decisions.md "Decoders compile on first use"). A value
 * read once per process (a /proc field) is kept the same way, as a function returning it.
 */
export const onFirstCall = <Args extends ReadonlyArray<unknown>, Result>(make: () => (...args: Args) => Result) => {
  let made: ((...args: Args) => Result) | undefined
  return (...args: Args): Result => (made ??= make())(...args)
}
