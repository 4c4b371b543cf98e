// The goals of `npm run bench` (docs/operations.md "Benchmarks"): each bench states, for each figure it
// measures against a goal, the figure, the goal and whether it is met; run.mjs prints them as one table
// with a summary line after the benches ran (or after the one bench asked for).

const results = []

/**
 * Records one figure against its goal and prints it as a line of the bench's own output.
 * `id` is the figure's name in the goals table (P1, P3, R4 …), `value` and `goal` are shown as written,
 * `met` says whether the goal is reached.
 * @param {{ id: string, measure: string, value: string, goal: string, met: boolean }} figure
 */
export const report = (figure) => {
  results.push(figure)
  console.log(`  [${figure.id}] ${figure.measure}: ${figure.value} (goal ${figure.goal}) — ${figure.met ? "met" : "NOT met"}`)
}

/** Every figure recorded so far, in the order the benches recorded them. */
export const reported = () => [...results]
