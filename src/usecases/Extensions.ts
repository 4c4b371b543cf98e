import { FileSystem, Path } from "@effect/platform"
import { DateTime, Effect, Either, Option } from "effect"
import { HostConfig } from "../config/HostConfig.js"
import { dependentsOf, type InstalledExtension, installedStates, manifestOf, migrationsFolderOf } from "../domain/Installed.js"
import { routeGroups } from "../domain/Manifest.js"
import { dependencyProblems } from "../domain/Rules.js"
import { nextRuns } from "../domain/Schedules.js"
import { bundleRoutes, bundleSlotReferences } from "../domain/Slots.js"
import { removalImpact } from "../lifecycle/Impact.js"
import { discoverMigrations } from "../lifecycle/Migrations.js"
import { criticalFailures, extensionCommands, extensionHealth, runHealthChecks } from "../runtime/Backend.js"
import { readFrontendErrors } from "../runtime/FrontendErrors.js"
import { type LiveGeneration, LiveRuntime } from "../runtime/LiveState.js"
import type { LoadedExtension } from "../runtime/Runtime.js"
import { ExtensionsRepo } from "../store/ExtensionsRepo.js"
import { MigrationsRepo } from "../store/MigrationsRepo.js"
import { ExtensionNotInstalled, ExtensionNotLoaded } from "./Errors.js"
import { currentVersions, desiredEntries, installedList, newerInRegistry, registryIndexQuietly, statusReader } from "./Facts.js"
import { requiresReport } from "./Requires.js"
import type { ExtensionDetail, ExtensionHealth, ExtensionListRow, ExtensionRow, HealthOverview, Impact, MigrationRow } from "./Views.js"

// The read models of installed extensions: the list, the Extensions screen's rows, one extension's
// detail, what an operation on it would affect, and its health (docs/admin.md).

/** An installed record, or the refusal that names it. */
export const findInstalled = (id: string) =>
  Effect.flatMap(ExtensionsRepo, (repo) => repo.find(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new ExtensionNotInstalled({ extensionId: id })),
      onSome: Effect.succeed
    }))
  )

/** `GET extensions`: every installed extension with its status, source and recent render errors. */
export const listExtensions = Effect.gen(function*() {
  const installed = yield* installedList
  const statusOf = yield* statusReader
  // Recent render errors the bridge reported (docs/frontend.md "Error boundaries and diagnostics"), newest first.
  const frontendErrors = yield* readFrontendErrors
  return installed.map((extension): ExtensionListRow => {
    const { reason, status } = statusOf(extension)
    return {
      id: extension.extensionId,
      name: extension.name,
      version: extension.version,
      enabled: extension.enabled,
      status,
      quarantine: reason ?? null,
      signature: extension.signature.status,
      source: extension.source,
      updatedAt: extension.updatedAt,
      frontendErrors: frontendErrors.get(extension.extensionId) ?? []
    }
  })
})

/** `GET extensions/overview`: the Extensions screen's rows: the list plus update, dependents and desired-state facts. */
export const extensionsOverview = Effect.gen(function*() {
  const installed = yield* installedList
  const statusOf = yield* statusReader
  const index = yield* registryIndexQuietly
  const desired = yield* desiredEntries
  const frontendErrors = yield* readFrontendErrors
  return installed.map((record): ExtensionRow => {
    const { reason, status } = statusOf(record)
    return {
      id: record.extensionId,
      name: record.name,
      description: manifestOf(record)?.document.description ?? "",
      version: record.version,
      enabled: record.enabled,
      status,
      quarantine: reason ?? null,
      signature: record.signature.status,
      signatureKey: record.signature.key,
      source: record.source,
      updateAvailable: newerInRegistry(index, record),
      dependents: dependentsOf(record.extensionId, installed).map((other) => other.extensionId).sort(),
      managed: desired.has(record.extensionId),
      frontendErrors: frontendErrors.get(record.extensionId) ?? [],
      updatedAt: record.updatedAt
    }
  })
})

/** The bundle's page registrations, as far as the built text shows them (domain/Slots.ts `bundleRoutes`). */
const bundlePages = (bundle: string | undefined): ReadonlyArray<{ readonly area: string; readonly path: string }> =>
  bundle === undefined ? [] : bundleRoutes(bundle).map(({ area, path }) => ({ area, path }))

/** The migration files in the extension's tree joined with the ones recorded as run. */
const migrationRows = (id: string, folder: string) =>
  Effect.gen(function*() {
    const files = yield* discoverMigrations(folder).pipe(Effect.orElseSucceed(() => []))
    const recorded = yield* Effect.flatMap(MigrationsRepo, (repo) => repo.listFor(id))
    const ranByName = new Map(recorded.map((migration) => [migration.migration, migration]))
    return [
      ...files.map((file): MigrationRow => {
        const ran = ranByName.get(file.name)
        return { name: file.name, status: ran === undefined ? "pending" : "ran", batch: ran?.batch ?? null, ranAt: ran?.ranAt ?? null }
      }),
      ...recorded.filter((migration) => !files.some((file) => file.name === migration.migration)).map((migration): MigrationRow => ({
        name: migration.migration,
        status: "file missing",
        batch: migration.batch,
        ranAt: migration.ranAt
      }))
    ]
  })

/** What an installed extension brings, as the detail screen lists it: from the running code when it is loaded, else from its files. */
const detailCapabilities = (
  extension: InstalledExtension,
  live: LiveGeneration | undefined,
  loaded: LoadedExtension | undefined
) =>
  Effect.gen(function*() {
    const id = extension.extensionId
    const manifest = manifestOf(extension)
    const document = manifest?.document
    const { paths } = yield* HostConfig
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const directory = path.join(paths.extensions, ...id.split("/"))
    const migrations = yield* migrationRows(id, path.join(directory, migrationsFolderOf(extension)))
    const now = DateTime.toDateUtc(yield* DateTime.now)
    const schedules = (manifest?.schedules ?? []).map((task) => {
      const next = Either.getOrUndefined(Either.try(() => nextRuns(task.cron, now, 1)[0]?.toISOString() ?? null))
      return { id: task.id, label: task.label, command: task.command, cron: task.cron, withoutOverlapping: task.withoutOverlapping, nextRun: next ?? null }
    })
    const commands = live === undefined || loaded === undefined
      ? []
      : (yield* extensionCommands({ ...live.generation, extensions: new Map([[id, loaded]]) })).map((command) => ({
        name: command.name,
        description: command.description
      }))
    const routes = Object.fromEntries(routeGroups.map((group) => [
      group,
      (loaded?.routes[group] ?? []).map((route) => ({ method: route.method, path: route.path, permission: route.permission ?? null, file: route.file }))
    ]))
    const bundleText = loaded?.bundleSource ?? (yield* Effect.gen(function*() {
      const bundle = document?.frontend?.bundle
      if (bundle === undefined) return undefined
      return yield* fs.readFileString(path.join(directory, bundle)).pipe(Effect.orElseSucceed(() => undefined))
    }))
    const slots = loaded !== undefined
      ? [...new Set(loaded.slots.map((slot) => slot.slot))].sort()
      : [...new Set(bundleText === undefined ? [] : bundleSlotReferences(bundleText))].sort()
    return {
      permissions: manifest?.permissions ?? [],
      routes,
      routeFiles: document?.backend?.routes ?? {},
      slots,
      pages: bundlePages(bundleText),
      migrations,
      schedules,
      commands,
      listeners: loaded === undefined ? [] : Object.keys(loaded.listeners).sort(),
      healthChecks: document?.health?.checks ?? [],
      settings: (manifest?.settings ?? []).length
    } satisfies ExtensionDetail["capabilities"]
  })

/** `GET extensions/{vendor}/{name}`: everything the detail screen shows (docs/admin.md "Extension detail"). */
export const extensionDetail = (id: string) =>
  Effect.gen(function*() {
    const extension = yield* findInstalled(id)
    const manifest = manifestOf(extension)
    const document = manifest?.document
    const live = yield* (yield* LiveRuntime).current
    const loaded = live?.generation.extensions.get(id)
    const { reason, status } = (yield* statusReader)(extension)
    const all = yield* installedList
    const installed = installedStates(all)
    const { paths } = yield* HostConfig
    const capabilities = yield* detailCapabilities(extension, live, loaded)
    const desired = (yield* desiredEntries).get(id)
    const index = yield* registryIndexQuietly
    const frontendErrors = (yield* readFrontendErrors).get(id) ?? []
    return {
      frontendErrors,
      id,
      name: extension.name,
      version: extension.version,
      description: document?.description ?? "",
      license: document?.license ?? null,
      authors: document?.authors ?? [],
      enabled: extension.enabled,
      status,
      quarantine: reason ?? null,
      loaded: loaded !== undefined,
      signature: extension.signature,
      source: extension.source,
      installedAt: extension.createdAt,
      updatedAt: extension.updatedAt,
      updateAvailable: newerInRegistry(index, extension),
      requires: requiresReport(document?.requires, yield* currentVersions),
      dependencies: Object.entries(document?.dependencies ?? {}).map(([dependency, range]) => {
        const other = installed.get(dependency)
        return {
          id: dependency,
          range,
          installed: other?.version ?? null,
          enabled: other?.enabled ?? false,
          ok: dependencyProblems({ dependencies: { [dependency]: range } }, installed).length === 0
        }
      }),
      dependents: dependentsOf(id, all).map((other) => ({ id: other.extensionId, enabled: other.enabled })),
      capabilities,
      managed: desired === undefined
        ? null
        : {
          file: paths.desiredState,
          absent: desired._tag === "Absent",
          enabled: desired._tag === "Present" ? desired.enabled : false,
          settings: desired._tag === "Present" ? Object.keys(desired.settings ?? {}) : []
        }
    } satisfies ExtensionDetail
  })

/** `GET extensions/{vendor}/{name}/impact`: what disable/remove would affect (dependents, tables and rows). */
export const extensionImpact = (id: string): Effect.Effect<Impact, Effect.Effect.Error<ReturnType<typeof removalImpact>>, Effect.Effect.Context<ReturnType<typeof removalImpact>>> =>
  removalImpact(id)

/** `POST extensions/{vendor}/{name}/health`: runs this extension's health checks now. */
export const extensionHealthNow = (id: string) =>
  Effect.gen(function*() {
    const loaded = (yield* (yield* LiveRuntime).current)?.generation.extensions.get(id)
    if (loaded === undefined) return yield* new ExtensionNotLoaded({ extensionId: id })
    const report = yield* extensionHealth(loaded, "5 seconds")
    return { ...report, checkedAt: DateTime.formatIso(yield* DateTime.now) } satisfies ExtensionHealth
  })

/** `GET health`: the health of every booted extension, declared checks joined with reported results. */
export const healthOverview = Effect.gen(function*() {
  const live = yield* (yield* LiveRuntime).current
  const report = live === undefined ? [] : yield* runHealthChecks(live.generation)
  return { extensions: report, critical_failures: criticalFailures(report) } satisfies HealthOverview
})
