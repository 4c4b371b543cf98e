import { Args, Command, Options, Prompt } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Data, Effect, Either, Layer, Option } from "effect"
import { looksLikeReference, parseReference } from "../../domain/Registry.js"
import type { OperationResult } from "../../lifecycle/Lifecycle.js"
import { formatBytes } from "../../domain/Bytes.js"
import type { UpdateOutcome } from "../../lifecycle/RegistryUpdates.js"
import { SourceSpec } from "../../lifecycle/Source.js"
import { RegistryLookupFailed } from "../../registry/RegistryErrors.js"
import {
  addExtension,
  checkUpdates as checkUpdatesUseCase,
  migrationStatus,
  pruneArtifacts,
  removeExtension,
  setEnabled,
  unlockOperation,
  updateExtension,
  updateFromRegistryAll
} from "../../usecases/ExtensionOperations.js"
import { CliInvocation } from "../Invocation.js"
import { exitWith, formatTable, printJson } from "../Output.js"
import { type Invocation, progressLayer, operationsLayer } from "../Runtime.js"

// add, update, enable, disable, remove, unlock, migrate:status, artifacts:prune: each decodes its
// arguments, runs one use case of usecases/Operations.ts and renders the result.

const actor = { type: "cli" } as const

const json = Options.boolean("json").pipe(Options.withDescription("print the result as one JSON document"))
const lockTimeout = Options.integer("lock-timeout").pipe(
  Options.withDefault(0),
  Options.withDescription("seconds to wait for another operation's lock (default 0: fail at once)")
)
const extensionId = Args.text({ name: "extension" }).pipe(Args.withDescription("the extension id, vendor/name"))

/** The store (with the registry) and progress lines on stderr: what lifecycle calls run on. */
const operationLayer = (invocation: Invocation) => progressLayer.pipe(Layer.provideMerge(operationsLayer(invocation)))

/** Runs an operation's use case with the store, the registry, progress lines on stderr, and prints its result. */
const runOperation = <E, R extends Layer.Layer.Success<ReturnType<typeof operationLayer>>>(
  operation: Effect.Effect<OperationResult, E, R>,
  asJson: boolean
) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const result = yield* operation.pipe(Effect.provide(operationLayer(invocation)))
    if (asJson) return yield* printJson(result)
    yield* Console.log(describeResult(result))
  })

const describeResult = (result: OperationResult): string => {
  switch (result.action) {
    case "installed":
      return `Installed ${result.id} v${result.version} (${result.enabled ? "enabled" : "disabled"}).${migrationsNote(result)}`
    case "updated":
      return result.fromVersion === result.version
        ? `Reinstalled ${result.id} v${result.version}.${migrationsNote(result)}`
        : `Updated ${result.id} ${result.fromVersion ?? "?"} → ${result.version}.${migrationsNote(result)}`
    case "enabled":
      return `Enabled ${result.id}.`
    case "disabled":
      return `Disabled ${result.id}.`
    case "removed":
      return `Removed ${result.id}.${result.migrations.length > 0 ? ` Rolled back ${result.migrations.length} migration(s).` : ""}`
    case "configured":
      return `Configured ${result.id}.`
    case "unchanged":
      return `${result.id} is already ${result.enabled ? "enabled" : "disabled"}.`
  }
}

const migrationsNote = (result: OperationResult) =>
  result.migrations.length > 0 ? ` Ran ${result.migrations.length} migration(s): ${result.migrations.join(", ")}.` : ""

/** A folder or a `.host` file, else a registry reference `vendor/name[@version|@range]`. */
const sourceFromArgument = (argument: string, registry?: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.resolve(argument)
    const info = yield* fs.stat(absolute).pipe(Effect.option)
    if (Option.isSome(info)) {
      return info.value.type === "Directory" ? SourceSpec.Directory({ path: absolute }) : SourceSpec.Archive({ path: absolute })
    }
    if (looksLikeReference(argument)) return SourceSpec.Registry({ ...(yield* referenceFromArgument(argument)), registry })
    return yield* new SourceNotFound({ source: argument })
  })

const referenceFromArgument = (argument: string) =>
  Either.match(parseReference(argument), {
    onLeft: (detail) => Effect.fail(new RegistryLookupFailed({ reference: argument, reason: "invalid-reference", detail })),
    onRight: (reference) => Effect.succeed(reference)
  })

/** `--registry NAME`: which configured registry a registry id resolves in (docs/registry.md "Several registries"). */
const registryOption = Options.text("registry").pipe(
  Options.optional,
  Options.withDescription("resolve the registry id in this configured registry (default: the first that lists it)")
)

class RegistryNeedsReference extends Data.TaggedError("RegistryNeedsReference")<{ readonly source: string }> {
  override get message() {
    return `--registry applies to a registry id (vendor/name[@version]); ${this.source} is a folder or a .host file`
  }
}

/** The source, with `--registry` refused for anything but a registry id. */
const sourceWithRegistry = (argument: string, registry: Option.Option<string>) =>
  Effect.flatMap(sourceFromArgument(argument, Option.getOrUndefined(registry)), (spec) =>
    Option.isSome(registry) && spec._tag !== "Registry" ? Effect.fail(new RegistryNeedsReference({ source: argument })) : Effect.succeed(spec))

class SourceNotFound extends Data.TaggedError("SourceNotFound")<{
  readonly source: string
}> {
  override get message() {
    return `${this.source} is neither an extension folder nor a .host file`
  }
}

export const addCommand = Command.make(
  "add",
  {
    source: Args.text({ name: "source" }).pipe(
      Args.withDescription("an extension folder, a .host archive, or a registry id vendor/name[@version|@range]")
    ),
    force: Options.boolean("force").pipe(Options.withDescription("reinstall, or change the version, of an installed extension")),
    noMigrate: Options.boolean("no-migrate").pipe(Options.withDescription("do not run its migrations")),
    disabled: Options.boolean("disabled").pipe(Options.withDescription("install it disabled")),
    registry: registryOption,
    json,
    lockTimeout
  },
  (options) =>
    Effect.flatMap(sourceWithRegistry(options.source, options.registry), (spec) =>
      runOperation(
        addExtension(spec, {
          actor,
          force: options.force,
          noMigrate: options.noMigrate,
          disabled: options.disabled,
          lockTimeout: options.lockTimeout
        }),
        options.json
      ))
).pipe(Command.withDescription("Install an extension from a folder, a .host file or the registry (enabled unless --disabled)"))

class UpdateNeedsId extends Data.TaggedError("UpdateNeedsId")<{}> {
  override get message() {
    return "--source needs the id of the extension to update (host update <vendor/name> --source <file|dir>)"
  }
}

/** `update --check`: `[{id, current, available}]` for the extensions with an update; exit 0 either way. */
const checkUpdates = (argument: Option.Option<string>, asJson: boolean, registry: Option.Option<string>) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const reference = yield* optionalReference(argument)
    const { targets, updates } = yield* checkUpdatesUseCase(reference, Option.getOrUndefined(registry)).pipe(Effect.provide(operationLayer(invocation)))
    if (asJson) return yield* printJson(updates)
    if (updates.length === 0) {
      return yield* Console.log(
        Option.isSome(argument)
          ? `${targets[0]?.reference.id ?? argument.value} is up to date (v${targets[0]?.current ?? "?"}).`
          : targets.length === 0
          ? "No extensions are installed from the registry."
          : `All ${targets.length} extension${targets.length === 1 ? "" : "s"} from the registry are up to date.`
      )
    }
    yield* Console.log(formatTable(["ID", "Current", "Available"], updates.map((u) => [u.id, u.current, u.available])))
  })

const optionalReference = (argument: Option.Option<string>) =>
  Option.match(argument, {
    onNone: () => Effect.succeedNone,
    onSome: (text) => Effect.map(referenceFromArgument(text), Option.some)
  })

/** `update [id]` from the registry; without an id every registry extension, one failure not stopping the rest. */
const updateFromRegistry = (
  argument: Option.Option<string>,
  options: {
    readonly force: boolean
    readonly noMigrate: boolean
    readonly lockTimeout: number
    readonly json: boolean
    readonly registry: Option.Option<string>
  }
) =>
  Effect.gen(function*() {
    const invocation = yield* CliInvocation
    const operation = { actor, force: options.force, noMigrate: options.noMigrate, lockTimeout: options.lockTimeout }
    const describe = (result: OperationResult) =>
      result.action === "unchanged" ? `${result.id} is up to date (v${result.version}).` : describeResult(result)
    const reportFailure = (id: string, error: { readonly message: string }) =>
      Effect.sync(() => process.stderr.write(`error: ${error.message.startsWith("update ") ? error.message : `update: ${id}: ${error.message}`}\n`))
    const outcomes: ReadonlyArray<UpdateOutcome> = yield* Effect.flatMap(
      optionalReference(argument),
      (reference) => updateFromRegistryAll(reference, operation, reportFailure, Option.getOrUndefined(options.registry))
    ).pipe(Effect.provide(operationLayer(invocation)))
    const failed = outcomes.filter(Either.isLeft).length
    if (options.json) {
      const documents = outcomes.map(Either.merge)
      yield* printJson(Option.isSome(argument) ? documents[0] : documents)
    } else if (Option.isNone(argument) && outcomes.length === 0) {
      yield* Console.log("No extensions are installed from the registry.")
    } else {
      for (const outcome of outcomes) if (Either.isRight(outcome)) yield* Console.log(describe(outcome.right))
      if (Option.isNone(argument) && outcomes.length > 1) {
        yield* Console.log(`${outcomes.length - failed} of ${outcomes.length} extensions updated or up to date${failed > 0 ? `, ${failed} failed` : ""}.`)
      }
    }
    if (failed > 0) return yield* exitWith(1)
  })

export const updateCommand = Command.make(
  "update",
  {
    id: Args.text({ name: "extension" }).pipe(
      Args.optional,
      Args.withDescription("vendor/name[@version|@range]; without it, every extension installed from the registry")
    ),
    source: Options.text("source").pipe(Options.optional, Options.withDescription("the new version: a folder, a .host file or a registry id")),
    check: Options.boolean("check").pipe(Options.withDescription("only report available updates: [{id, current, available}]")),
    force: Options.boolean("force").pipe(Options.withDescription("install even if enabled dependents need another version")),
    noMigrate: Options.boolean("no-migrate").pipe(Options.withDescription("do not run new migrations")),
    registry: registryOption,
    json,
    lockTimeout
  },
  (options) =>
    Effect.gen(function*() {
      if (Option.isNone(options.source)) {
        return yield* options.check ? checkUpdates(options.id, options.json, options.registry) : updateFromRegistry(options.id, options)
      }
      if (Option.isNone(options.id)) return yield* new UpdateNeedsId()
      const id = options.id.value
      const spec = yield* sourceWithRegistry(options.source.value, options.registry)
      yield* runOperation(
        updateExtension(id, spec, { actor, force: options.force, noMigrate: options.noMigrate, lockTimeout: options.lockTimeout }),
        options.json
      )
    })
).pipe(Command.withDescription("Update extensions from the registry, or one from --source (keeps it enabled or disabled; runs new migrations)"))

const toggleCommand = (name: "enable" | "disable", description: string) =>
  Command.make(
    name,
    {
      id: extensionId,
      force: Options.boolean("force").pipe(Options.withDescription("disable even while enabled extensions depend on it")),
      json,
      lockTimeout
    },
    (options) =>
      runOperation(setEnabled(name, options.id, { actor, force: options.force, lockTimeout: options.lockTimeout }), options.json)
  ).pipe(Command.withDescription(description))

export const enableCommand = toggleCommand("enable", "Enable a disabled extension")
export const disableCommand = toggleCommand("disable", "Disable an extension; its files and data are kept")

export const removeCommand = Command.make(
  "remove",
  {
    id: extensionId,
    keepData: Options.boolean("keep-data").pipe(
      Options.withDescription("remove the files but keep its tables, migration records and settings")
    ),
    force: Options.boolean("force").pipe(Options.withDescription("remove even while enabled extensions depend on it")),
    yes: Options.boolean("yes").pipe(Options.withAlias("y"), Options.withDescription("do not ask for confirmation")),
    json,
    lockTimeout
  },
  (options) =>
    Effect.gen(function*() {
      if (!options.yes && process.stdin.isTTY === true && process.stdout.isTTY === true) {
        const confirmed = yield* Prompt.confirm({
          message: `Remove ${options.id}${options.keepData ? " (keeping its data)" : ", rolling back its migrations and deleting its settings"}?`,
          initial: false
        })
        if (!confirmed) {
          yield* Console.log("Nothing removed.")
          return yield* exitWith(1)
        }
      }
      yield* runOperation(
        removeExtension(options.id, { actor, keepData: options.keepData, force: options.force, lockTimeout: options.lockTimeout }),
        options.json
      )
    })
).pipe(Command.withDescription("Remove an extension: roll back its migrations, delete its settings and files"))

export const unlockCommand = Command.make(
  "unlock",
  {
    lockId: Args.text({ name: "lock-id" }).pipe(Args.withDescription("the id `host status` shows for the lock")),
    force: Options.boolean("force").pipe(Options.withDescription("clear it even if its holder still runs on this host or keeps renewing its lease")),
    json
  },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      // Without recovery first: it would take a dead holder's lock over before it could be named here.
      const cleared = yield* unlockOperation(options.lockId, options.force).pipe(
        Effect.provide(operationsLayer(invocation, { recover: false }))
      )
      if (options.json) return yield* printJson({ unlocked: cleared })
      yield* Console.log(
        `Cleared lock ${cleared.id} (${cleared.operation} by ${cleared.holder}, pid ${cleared.pid} on ${cleared.hostname}${
          cleared.lease_expires_at === undefined ? "" : `, lease until ${cleared.lease_expires_at}`
        }).`
      )
    })
).pipe(Command.withDescription("Clear the operation lock of a process that is gone"))

export const artifactsPruneCommand = Command.make(
  "artifacts:prune",
  { json, lockTimeout },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const pruned = yield* pruneArtifacts({ actor, lockTimeout: options.lockTimeout }).pipe(
        Effect.provide(operationsLayer(invocation))
      )
      const bytes = pruned.removed.reduce((sum, artifact) => sum + artifact.bytes, 0)
      if (options.json) return yield* printJson({ removed: pruned.removed, bytes, kept: pruned.kept, temporary: pruned.temporary })
      yield* Console.log(
        `Removed ${pruned.removed.length} unreferenced artifact(s) (${formatBytes(bytes)}); kept ${pruned.kept}.` +
          (pruned.temporary > 0 ? ` Removed ${pruned.temporary} interrupted temporary file(s).` : "")
      )
    })
).pipe(Command.withDescription("Remove the archives in the artifact store that no installed extension references"))

export const migrateStatusCommand = Command.make(
  "migrate:status",
  { id: extensionId, json },
  (options) =>
    Effect.gen(function*() {
      const invocation = yield* CliInvocation
      const rows = yield* migrationStatus(options.id).pipe(Effect.provide(operationsLayer(invocation)))
      if (options.json) return yield* printJson(rows)
      if (rows.length === 0) return yield* Console.log(`${options.id} has no migrations.`)
      yield* Console.log(formatTable(
        ["Migration", "Ran", "Batch"],
        rows.map((row) => [row.migration, row.ran ? "yes" : "no", row.batch === null ? "" : String(row.batch)])
      ))
    })
).pipe(Command.withDescription("Show an extension's migrations: which ran, in which batch"))
