import { Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Duration, Effect, Layer, Option, Stream } from "effect"
import { HostConfig } from "../../config/HostConfig.js"
import type { Plan, PlanAction } from "../../domain/PlanFormat.js"
import { formatAction, formatFailureMarkdown, formatPlan, formatPlanMarkdown } from "../../reconcile/PlanRender.js"
import { blockedItems, formatPreflight } from "../../domain/Preflight.js"
import { Panel } from "../../panel/Panel.js"
import semver from "semver"
import type { Planner, PlanRequest } from "../../reconcile/Planner.js"
import { savePlan } from "../../reconcile/PlanFile.js"
import type { ApplyResult } from "../../reconcile/Reconciler.js"
import { CliInvocation } from "../Invocation.js"
import { CommandExit, exitWith, printJson } from "../Output.js"
import { planningLayer, progressLayer, operationsLayer } from "../Runtime.js"
import { runtimeVersions } from "../../system/RuntimeVersions.js"

// host reconcile: a thin adapter over reconcile/ (docs/architecture.md "One reconcile").
//
// A run that changes nothing (`--dry-run`, `--out`, the upgrade preflight) is made by the Planner over
// `planningLayer`; only a run that may apply, adopt or take a saved plan loads the Reconciler, the
// lifecycle under it and Adopt (imported then), so a dry run neither loads nor builds them.

/** The modules only a run that may change the panel loads. */
type ReconcilerModule = typeof import("../../reconcile/Reconciler.js")
type AdoptModule = typeof import("../../reconcile/Adopt.js")
type UseCaseModule = typeof import("../../usecases/Reconcile.js")

const changeCount = (plan: Pick<Plan, "actions">) => plan.actions.length

const describeApply = (result: ApplyResult): string => {
  const list = (actions: ReadonlyArray<PlanAction>) => actions.map((action) => `  ${formatAction(action)}`)
  if (result.failed === null) {
    return result.applied.length === 0 ? "" : `\nApply complete: ${result.applied.length} action(s) applied.`
  }
  return [
    "",
    `Apply stopped: ${result.failed.action.type} ${result.failed.action.id} failed: ${result.failed.error.message}`,
    `Applied (${result.applied.length}):`,
    ...list(result.applied),
    `Not applied (${result.notApplied.length + 1}):`,
    ...list([result.failed.action, ...result.notApplied]),
    "Fix the cause and run host reconcile again: it continues from the panel's current state."
  ].join("\n")
}

const flags = {
    file: Options.text("file").pipe(Options.optional, Options.withDescription("the desired-state file (default: desired_state of config/host.yaml)")),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("only print the plan")),
    json: Options.boolean("json").pipe(Options.withDescription("print the plan object (and the apply result) only (= --format json)")),
    format: Options.choice("format", ["text", "json", "markdown"]).pipe(
      Options.optional,
      Options.withDescription("text (default), json (= --json) or markdown (a pull request comment, docs/gitops.md)")
    ),
    detailedExitcode: Options.boolean("detailed-exitcode").pipe(
      Options.withDescription("with --dry-run: exit 0 when nothing would change, 2 when changes are pending")
    ),
    out: Options.text("out").pipe(Options.optional, Options.withDescription("save the plan to this file instead of applying it")),
    plan: Options.text("plan").pipe(Options.optional, Options.withDescription("apply exactly this saved plan (refused when stale)")),
    prune: Options.boolean("prune").pipe(Options.withDescription("remove installed extensions that are not listed")),
    allowDestroy: Options.boolean("allow-destroy").pipe(Options.withDescription("allow removing protected extensions")),
    watch: Options.boolean("watch").pipe(Options.withDescription("re-plan and apply whenever the file changes")),
    adopt: Options.boolean("adopt").pipe(
      Options.withDescription("rewrite the file to describe the panel as it is (keeps comments; with --dry-run: only print the diff)")
    ),
    lockTimeout: Options.integer("lock-timeout").pipe(
      Options.withDefault(0),
      Options.withDescription("seconds to wait for another operation's lock (default 0: fail at once)")
    ),
    panelVersion: Options.text("panel-version").pipe(
      Options.optional,
      Options.withDescription("with --dry-run: upgrade preflight, check every desired extension against this panel version")
    ),
    hostVersion: Options.text("host-version").pipe(
      Options.optional,
      Options.withDescription("with --dry-run: upgrade preflight against this framework version (default: this one)")
    ),
    noHealthGates: Options.boolean("no-health-gates").pipe(
      Options.withDescription("do not run the critical health checks an install or update brings before going on")
    )
  }

type Flags = Command.Command.ParseConfig<typeof flags>
type Format = "text" | "json" | "markdown"

/** What every mode of the command works with: the flags, the file, the plan request and how to print. */
interface Run {
  readonly options: Flags
  readonly file: string
  readonly request: PlanRequest
  readonly format: Format
  readonly env: Readonly<Record<string, string | undefined>>
}

const printPlanAs = (format: Format) => (plan: Plan) =>
  Effect.suspend(() =>
    format === "json"
      ? printJson(plan)
      : format === "markdown"
      ? Console.log(formatPlanMarkdown({ plan }).trimEnd())
      : Console.log(formatPlan(plan))
  ).pipe(Effect.withSpan("Reconcile.printPlan", { attributes: { format } }))

/** The outcome on stdout, and a stopped apply as the usual `error:` line on stderr too. */
const printResultAs = (format: Format, { applyReport }: ReconcilerModule) => (plan: Plan, result: ApplyResult) =>
  Effect.zipRight(
    format === "json"
      ? printJson({ ...plan, apply: applyReport(result) })
      : format === "markdown"
      ? Console.log(formatPlanMarkdown({ plan, apply: result }).trimEnd())
      : describeApply(result) === "" ? Effect.void : Console.log(describeApply(result).replace(/^\n/, "")),
    result.failed === null
      ? Effect.void
      : Console.error(`error: reconcile: ${result.failed.action.type} ${result.failed.action.id} failed: ${result.failed.error.message}`)
  )

/**
 * The use case's request for this run: the CLI is its door (actor and lock wait follow from it, with
 * `--lock-timeout`). Text: the plan is shown before its first action runs, the outcome after. JSON and
 * markdown: one document at the end, holding both.
 */
const useCaseRequestOf = ({ env, file, format, options }: Run) => ({
  door: { _tag: "Cli", lockTimeout: options.lockTimeout } as const,
  file,
  prune: options.prune,
  allowDestroy: options.allowDestroy,
  env,
  healthGates: !options.noHealthGates,
  onPlan: format === "text" ? (plan: Plan) => Console.log(formatPlan(plan)) : undefined
})

/** `--adopt` (docs/admin.md "Adopt"): the same operation as the admin screen's Adopt button. */
const runAdopt = ({ env, file, options }: Run, { adopt }: AdoptModule) =>
  Effect.gen(function*() {
    if (Option.isSome(options.plan) || Option.isSome(options.out) || options.watch) {
      yield* Console.error("error: reconcile: --adopt rewrites the desired-state file; it does not go with --plan, --out or --watch")
      return yield* exitWith(2)
    }
    const adopted = yield* adopt(file, { write: !options.dryRun, env })
    if (options.json) return yield* printJson(adopted)
    const lines = [
      ...(adopted.diff === "" ? [] : [adopted.diff.trimEnd(), ""]),
      ...adopted.changes.map((change) => `~ ${change}`),
      !adopted.changed
        ? `No changes. ${adopted.file} already describes the panel.`
        : adopted.written
        ? `Adopted: wrote ${adopted.file}.`
        : `Would write ${adopted.file} (dry run).`
    ]
    yield* Console.log(lines.join("\n"))
    for (const note of adopted.notes) yield* Console.error(`warning: ${note}`)
    return
  })

/** `--plan`: applies exactly a saved plan. */
const runSavedPlan = (run: Run, planFile: string, applying: ReconcilerModule, useCase: UseCaseModule) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const saved = yield* applying.loadPlan(path.resolve(planFile))
    const result = yield* useCase.applySavedPlan(saved, useCaseRequestOf(run))
    yield* printResultAs(run.format, applying)(saved, result)
    return result.failed === null ? undefined : yield* exitWith(1)
  })

/** Upgrade preflight (docs/operations.md#upgrade-preflight): the plan, checked against other versions. */
const runPreflight = ({ format, options, request }: Run, planner: Planner) =>
  Effect.gen(function*() {
    if (!options.dryRun || Option.isSome(options.out) || options.watch) {
      yield* Console.error("error: reconcile: --panel-version and --host-version go with --dry-run only (an upgrade preflight changes nothing)")
      return yield* exitWith(2)
    }
    for (const [flag, value] of [["--panel-version", options.panelVersion], ["--host-version", options.hostVersion]] as const) {
      if (Option.isSome(value) && semver.coerce(value.value) === null) {
        yield* Console.error(`error: reconcile: ${flag} "${value.value}" is not a version (like 2.1.0)`)
        return yield* exitWith(2)
      }
    }
    const { config } = yield* HostConfig
    const panel = yield* Panel
    const versions = runtimeVersions(Option.getOrElse(options.hostVersion, () => config.version), {
      version: Option.getOrElse(options.panelVersion, () => panel.info.version),
      php: panel.info.php
    })
    const plan = yield* planner.plan(request)
    const report = yield* planner.preflight(request, versions)
    yield* format === "json"
      ? printJson({ ...plan, preflight: report })
      : format === "markdown"
      ? Console.log(formatPlanMarkdown({ plan: { ...plan, blocked: blockedItems(report) } }).trimEnd())
      : Console.log(`${formatPreflight(report)}\n\n${formatPlan(plan)}`)
    if (report.summary.blocked > 0) {
      if (format !== "json") yield* Console.error(`error: reconcile: ${report.summary.blocked} extension(s) blocked on panel ${versions.panel ?? "(unknown)"} / host ${versions.host}`)
      return yield* exitWith(1)
    }
    return options.detailedExitcode && changeCount(plan) > 0 ? yield* exitWith(2) : undefined
  })

/** `--dry-run` or `--out`: the plan only, printed or saved. */
const runPlanOnly = ({ format, options, request }: Run, planner: Planner) =>
  Effect.gen(function*() {
    const plan = yield* planner.plan(request)
    if (Option.isSome(options.out)) {
      const saved = yield* savePlan(plan, options.out.value)
      const applyHint = `Saved ${plan.id} to ${saved}; apply it with: host reconcile --plan ${saved}`
      // JSON and markdown keep stdout one document (`> plan.md`); the hint goes to stderr there.
      yield* format === "text"
        ? Console.log(`${formatPlan(plan)}\n\n${applyHint}`)
        : Effect.zipRight(printPlanAs(format)(plan), format === "markdown" ? Console.error(applyHint) : Effect.void)
    } else {
      yield* printPlanAs(format)(plan)
    }
    return options.detailedExitcode && changeCount(plan) > 0 ? yield* exitWith(2) : undefined
  })

/** Plans and applies once, or with `--watch` once now and once per burst of changes to the file. */
const runReconcile = (run: Run, applying: ReconcilerModule, useCase: UseCaseModule) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const file = run.file
    const once = Effect.flatMap(useCase.applyDesiredState(useCaseRequestOf(run)), ({ plan, result }) =>
      Effect.as(printResultAs(run.format, applying)(plan, result), result))
    if (!run.options.watch) {
      const result = yield* once
      return result.failed === null ? undefined : yield* exitWith(1)
    }
    // --watch: one run now, then one per burst of changes to the file, never two at a time.
    const fs = yield* FileSystem.FileSystem
    const runLogged = once.pipe(
      Effect.catchAll((error) => Console.error(`error: reconcile: ${error.message}`)),
      Effect.zipRight(Effect.sync(() => process.stderr.write(`watching ${file} for changes (Ctrl-C to stop)\n`)))
    )
    // The watcher starts with the first run (merged), so a change made while it runs is not missed.
    const changes = fs.watch(path.dirname(file)).pipe(
      Stream.filter((event) => path.resolve(path.dirname(file), event.path) === file || event.path === file)
    )
    yield* Stream.merge(Stream.make("start"), changes).pipe(
      Stream.debounce(Duration.millis(300)),
      Stream.runForEach(() => runLogged)
    )
  })

/**
 * Whether this run only plans: the upgrade preflight, `--dry-run` and `--out` — the runs the handler
 * routes to runPreflight and runPlanOnly, decided from the flags alone, before any layer is built.
 */
const changesNothing = (options: Flags) =>
  !options.adopt && Option.isNone(options.plan) &&
  (Option.isSome(options.panelVersion) || Option.isSome(options.hostVersion) || options.dryRun || Option.isSome(options.out))

/** The file, the request and the output format of this run, and the check every mode makes first. */
const prepare = (options: Flags) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const path = yield* Path.Path
    const { paths } = yield* HostConfig
    const file = Option.match(options.file, { onNone: () => paths.desiredState, onSome: (given) => path.resolve(given) })
    const request = { file, prune: options.prune, allowDestroy: options.allowDestroy, env: invocation.env }
    if (options.json && Option.isSome(options.format) && options.format.value !== "json") {
      yield* Console.error(`error: reconcile: --json means --format json; it does not go with --format ${options.format.value}`)
      return yield* exitWith(2)
    }
    const format = options.json ? "json" : Option.getOrElse(options.format, () => "text" as const)
    return { options, file, request, format, env: invocation.env } satisfies Run
  })

/** A plan only, printed, saved or checked against other versions, over the planning layer. */
const planOnly = (options: Flags) =>
  Effect.gen(function*() {
    const { Planner } = yield* Effect.promise(() => import("../../reconcile/Planner.js"))
    const run = yield* prepare(options)
    const planner = yield* Planner
    if (Option.isSome(options.panelVersion) || Option.isSome(options.hostVersion)) return yield* runPreflight(run, planner)
    return yield* runPlanOnly(run, planner)
  }).pipe(Effect.provide(Layer.unwrapEffect(Effect.map(CliInvocation, planningLayer))))

/** Adopt, a saved plan, or a plan applied (once or with --watch), over the lifecycle. */
const mayChange = (options: Flags) =>
  Effect.flatMap(
    Effect.promise(() =>
      Promise.all([import("../../reconcile/Reconciler.js"), import("../../reconcile/Adopt.js"), import("../../usecases/Reconcile.js")])
    ),
    ([applying, adopting, useCase]) =>
      Effect.gen(function*() {
        const run = yield* prepare(options)
        if (options.adopt) return yield* runAdopt(run, adopting)
        if (Option.isSome(options.plan) && (options.dryRun || Option.isSome(options.out) || options.watch)) {
          yield* Console.error("error: reconcile: --plan applies a saved plan; it does not go with --dry-run, --out or --watch")
          return yield* exitWith(2)
        }
        if (Option.isSome(options.plan)) return yield* runSavedPlan(run, options.plan.value, applying, useCase)
        return yield* runReconcile(run, applying, useCase)
      }).pipe(
        Effect.provide(
          Layer.unwrapEffect(Effect.map(CliInvocation, (invocation) =>
            applying.Reconciler.Default.pipe(
              Layer.provideMerge(progressLayer),
              Layer.provideMerge(operationsLayer(invocation))
            )))
        )
      )
  )

export const reconcileCommand = Command.make(
  "reconcile",
  flags,
  (options) =>
    Effect.if(changesNothing(options), { onTrue: () => planOnly(options), onFalse: () => mayChange(options) }).pipe(
      // Markdown goes to a pull request: a failure is a document there too (and the usual error on stderr).
      Effect.tapError((error) =>
        options.format._tag === "Some" && options.format.value === "markdown" && !options.json && !(error instanceof CommandExit)
          ? Console.log(formatFailureMarkdown(error.message, "problems" in error ? error.problems : []).trimEnd())
          : Effect.void
      )
    )
).pipe(Command.withDescription("Converge the panel to the desired-state file: plan, then apply (or --dry-run, --out, --plan)"))
