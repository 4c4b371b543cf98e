import { SqlClient } from "@effect/sql"
import { Clock, Context, Data, DateTime, Duration, Effect, Option, Ref } from "effect"
import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import { Faults, type FaultsService } from "../config/Debug.js"
import { leaseLapsed, leaseMillis, leaseRenewMillis, OperationLock } from "../domain/Lock.js"
import { CoreKeys, type CoreKeyFamily, CoreRows, decodeCoreValue, member } from "./CoreRows.js"
import { dialectOf } from "./Dialect.js"
import { uuid } from "../system/Ids.js"
import { onFirstCall } from "../domain/OnFirstCall.js"

// One writer per database (docs/architecture.md "Store", docs/operations.md): a `host/core` row in host_settings. Taking it is an INSERT
// that the UNIQUE(extension_id, key) constraint lets only one process win; releasing deletes only our
// own row. The row is a lease the holder renews every 5 s: a lock whose 30 s lease (config lock_lease_seconds) lapsed is dead wherever
// its holder ran (another replica, another host), and a holder on this host whose process is gone is dead
// at once. A dead holder's lock is taken over.

export class LockHeld extends Data.TaggedError("LockHeld")<{
  readonly lock: OperationLock
  readonly waitedSeconds: number
}> {
  override get message() {
    const lock = this.lock
    return `another operation holds the lock: ${lock.operation} by ${lock.holder} (pid ${lock.pid} on ${lock.hostname}, since ${lock.acquired_at}${
      lock.lease_expires_at === undefined ? "" : `, lease until ${lock.lease_expires_at}`
    })` +
      `${this.waitedSeconds > 0 ? `, waited ${this.waitedSeconds}s` : ""}; retry later, raise --lock-timeout, or if that process is gone: host unlock ${lock.id}`
  }
}

export class LockNotFound extends Data.TaggedError("LockNotFound")<{
  readonly lockId: string
  readonly current: OperationLock | null
}> {
  override get message() {
    return this.current === null
      ? `no operation lock is held (nothing to unlock for ${this.lockId})`
      : `the lock is ${this.current.id}, not ${this.lockId} (held by ${this.current.holder}, ${this.current.operation})`
  }
}

export class LockHolderAlive extends Data.TaggedError("LockHolderAlive")<{
  readonly lock: OperationLock
}> {
  override get message() {
    return this.lock.hostname === thisHost
      ? `the holder of lock ${this.lock.id} (pid ${this.lock.pid}, ${this.lock.operation}) is still running on this host; use --force to clear it anyway`
      : `the holder of lock ${this.lock.id} (pid ${this.lock.pid} on ${this.lock.hostname}, ${this.lock.operation}) keeps renewing its lease (until ${this.lock.lease_expires_at}); use --force to clear it anyway`
  }
}

const thisHost = hostname()

/** The fields of /proc/<pid>/stat after the command name, or undefined where there is no /proc. */
const procStat = (pid: number): ReadonlyArray<string> | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8")
    return text.slice(text.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** When `pid` started (clock ticks after boot), or undefined where /proc cannot tell. */
export const processStarted = (pid: number): string | undefined => procStat(pid)?.[19]

// Read on first use, not at load: a command that takes no lock never reads /proc for it.
const thisProcessStarted = onFirstCall(() => {
  const started = processStarted(process.pid)
  return () => started
})
const startedField = () => {
  const started = thisProcessStarted()
  return started === undefined ? {} : { process_started: started }
}

/**
 * Whether `pid` runs on this machine (EPERM means it exists but is not ours). A zombie — dead, not yet
 * reaped, common in containers whose init does not reap — counts as gone.
 */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  const state = procStat(pid)?.[0]
  return state !== "Z" && state !== "X"
}

/**
 * Whether the process that took `lock` still runs. A lapsed lease means no, wherever it ran. On this
 * host (the fast path, no waiting for the lease): its pid is alive and, when the lock recorded it,
 * started at the same time (else the pid was reused). On other hosts: its lease is being renewed.
 */
export const holderAlive = (lock: OperationLock, now: number, leases = true): boolean => {
  if (leases && leaseLapsed(lock, now)) return false
  if (lock.hostname !== thisHost) return true
  if (lock.pid === process.pid) return lock.process_started === undefined || lock.process_started === thisProcessStarted()
  if (!processAlive(lock.pid)) return false
  return lock.process_started === undefined || lock.process_started === processStarted(lock.pid)
}

/** A lock whose holder is gone at `now` (epoch ms): its lease lapsed, or it ran on this host and its process ended. */
export const isDeadHolder = (lock: OperationLock, now: number, leases = true): boolean => !holderAlive(lock, now, leases)

const decodeLock = onFirstCall(() => decodeCoreValue(CoreKeys.operationLock))

/**
 * How long the leases this process writes last (config `lock_lease_seconds`, docs/operations.md): others
 * judge a lock only by the expiry it carries, so each process may use its own length.
 */
export class LeaseLength extends Context.Reference<LeaseLength>()("host/store/LeaseLength", {
  defaultValue: () => ({ millis: leaseMillis })
}) {}

/**
 * What every step of the lock service works on: the host/core rows, whether this database judges holders
 * by leases, the length of the leases this process writes, and the R3 suite's lock log.
 */
interface LockRows {
  readonly rows: CoreRows
  readonly leases: boolean
  readonly lease: number
  // The R3 suite's lock log (docs/operations.md, "The debug variable"): a line when a lock is taken and
  // just before it is given back, so concurrent processes can prove that no two held it at once.
  readonly traceLock: FaultsService["lockTraced"]
}

type AcquireOptions = { readonly operation: string; readonly holder: string; readonly timeout: Duration.DurationInput }

const leaseFrom = ({ lease }: LockRows, now: number) => new Date(now + lease).toISOString()

// Every lock is a host/core row (store/CoreRows.ts): the operation lock under `lock`, others (scheduled
// tasks that must not overlap, the panel file) under their own name. Taking, renewing and releasing
// compare the row's stored text, which is what two processes agree on.
const readRow = ({ rows }: LockRows, name: string) => rows.getText(CoreKeys.namedLock(name))

/** Inserts the lock row; its stored text when this process took it. */
const insert = ({ rows }: LockRows, name: string, lock: OperationLock) => rows.insertNew(CoreKeys.namedLock(name), lock)

/** Deletes the lock row only while it still holds exactly `json` (compare-and-delete). */
const deleteIfUnchanged = ({ rows }: LockRows, json: string, name: string = CoreKeys.operationLock.key) =>
  rows.remove(CoreKeys.namedLock(name), json)

/**
 * Replaces the lock row's value only while it still holds exactly `json` (compare-and-swap): the new
 * stored text, or none when another process changed or took it meanwhile.
 */
const replaceIfUnchanged = ({ rows }: LockRows, name: string, json: string, next: OperationLock) =>
  rows.replaceIfUnchanged(CoreKeys.namedLock(name), json, next)

/**
 * Renews the lease every 5 s while the scope lasts, keeping `current` (the row's JSON) up to date for
 * the release. A renewal that finds the row changed means the lock was taken over: warned about once.
 */
const renewing = (store: LockRows, name: string, current: Ref.Ref<string>) =>
  Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(Duration.millis(leaseRenewMillis(store.lease)))
      const json = yield* Ref.get(current)
      const lock = Option.getOrThrow(decodeLock(json))
      const renewed = yield* replaceIfUnchanged(store, name, json, { ...lock, lease_expires_at: leaseFrom(store, yield* Clock.currentTimeMillis) }).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logWarning(`could not renew the lease of lock ${name}: ${error.message}`), Option.some(json)))
      )
      if (Option.isNone(renewed)) {
        return yield* Effect.logWarning(`the lock ${name} (${lock.operation}) was taken over by another process; its lease is no longer renewed`)
      }
      yield* Ref.set(current, renewed.value)
    }
  })

/** The row this process writes when it takes a lock at `now`, its lease starting then. */
const newLock = (store: LockRows, options: AcquireOptions, now: number) =>
  Effect.map(uuid, (id): OperationLock => ({
    id,
    holder: options.holder,
    pid: process.pid,
    hostname: thisHost,
    ...startedField(),
    operation: options.operation,
    acquired_at: new Date(now).toISOString(),
    lease_expires_at: leaseFrom(store, now)
  }))

/** Takes over a dead holder's (or an unreadable) lock row: warns who it was and deletes exactly that row. */
const stealDead = (store: LockRows, name: string, row: string, held: Option.Option<OperationLock>, now: number) =>
  Effect.zipRight(
    Effect.logWarning(
      Option.match(held, {
        onNone: () => "clearing an unreadable operation lock",
        onSome: (dead) =>
          store.leases && leaseLapsed(dead, now)
            ? `taking over the lock of ${dead.operation} (pid ${dead.pid} on ${dead.hostname}; its lease lapsed at ${dead.lease_expires_at})`
            : `taking over the lock of ${dead.operation} (pid ${dead.pid} is gone)`
      })
    ),
    deleteIfUnchanged(store, row, name)
  )

/** Gives the lock back when its scope closes: the log line first, then the row if it is still ours. */
const release = (store: LockRows, name: string, current: Ref.Ref<string>) =>
  Effect.zipRight(store.traceLock("end", name), Effect.ignore(Effect.flatMap(Ref.get(current), (json) => deleteIfUnchanged(store, json, name))))

/**
 * Takes the lock `name` for the scope, waiting up to `timeout` for a live holder, and renews its lease
 * until the scope closes. A dead holder's lock is taken over (its interrupted operation is then
 * recovered by the caller).
 */
const acquireNamed = Effect.fn("OperationLocks.acquire")(
  function*(store: LockRows, name: string, options: AcquireOptions) {
    const started = yield* Clock.currentTimeMillis
    const deadline = started + Duration.toMillis(options.timeout)
    for (;;) {
      // Read before writing: while the holder runs a migration batch it also holds SQLite's write
      // lock, and an INSERT would wait for that instead of reporting the holder at once.
      const row = yield* readRow(store, name)
      const now = yield* Clock.currentTimeMillis
      if (Option.isNone(row)) {
        const lock = yield* newLock(store, options, now)
        const taken = yield* insert(store, name, lock)
        if (Option.isSome(taken)) {
          yield* store.traceLock("begin", name)
          return [name, lock, yield* Ref.make(taken.value)] as const
        }
        continue
      }
      const held = decodeLock(row.value)
      if (Option.isNone(held) || isDeadHolder(held.value, now, store.leases)) {
        yield* stealDead(store, name, row.value, held, now)
        continue
      }
      if (now >= deadline) {
        return yield* new LockHeld({ lock: held.value, waitedSeconds: Math.round((now - started) / 1000) })
      }
      yield* Effect.sleep(Duration.millis(Math.min(200, Math.max(10, deadline - now))))
    }
  },
  (taking, store) => Effect.acquireRelease(taking, ([name, , current]) => release(store, name, current)),
  (held, store) => Effect.tap(held, ([name, , current]) => Effect.forkScoped(renewing(store, name, current))),
  Effect.map(([, lock]) => lock)
)

/** `host unlock <lock-id>`: clears the lock if it has that id and its holder is gone (or with force). */
const unlock = Effect.fn("OperationLocks.unlock")(function*(store: LockRows, lockId: string, force: boolean) {
  const row = yield* readRow(store, CoreKeys.operationLock.key)
  const held = Option.flatMap(row, decodeLock)
  if (Option.isNone(row) || Option.isNone(held) || held.value.id !== lockId) {
    return yield* new LockNotFound({ lockId, current: Option.getOrNull(held) })
  }
  if (
    !force && holderAlive(held.value, yield* Clock.currentTimeMillis, store.leases) &&
    (held.value.hostname === thisHost || (store.leases && held.value.lease_expires_at !== undefined))
  ) {
    return yield* new LockHolderAlive({ lock: held.value })
  }
  yield* deleteIfUnchanged(store, row.value)
  return held.value
})

/**
 * Claims `name` of a family once for good (a row that stays): true for the one process that inserted
 * it. The family's other claims are deleted then (the scheduler claims each minute once).
 */
const claimOnce = Effect.fn("OperationLocks.claimOnce")(
  function*<I>({ rows }: LockRows, of: CoreKeyFamily<OperationLock, I>, name: string, holder: string) {
    const row = member(of, name)
    const at = DateTime.formatIso(yield* DateTime.now)
    const claimed = yield* rows.insertNew(row, {
      id: yield* uuid,
      holder,
      pid: process.pid,
      hostname: thisHost,
      ...startedField(),
      operation: row.key,
      acquired_at: at
    })
    if (Option.isSome(claimed)) yield* rows.removeFamily(of, { except: name })
    return Option.isSome(claimed)
  }
)

/** Whether the lock's holder is gone now, by this database's rules (leases on servers, pids everywhere). */
const isDead = ({ leases }: LockRows, lock: OperationLock) => Effect.map(Clock.currentTimeMillis, (now) => isDeadHolder(lock, now, leases))

/** What OperationLocks is made of: the store's services are built together (store/Services.ts). */
export const makeOperationLocks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store: LockRows = {
    rows: yield* CoreRows,
    // A SQLite database lives on one host, where the pid says all; and its one connection is busy for
    // the whole of a long migration batch, so a renewal could not get through in time.
    leases: dialectOf(sql) !== "sqlite",
    lease: (yield* LeaseLength).millis,
    traceLock: (yield* Faults).lockTraced
  }
  return {
    current: store.rows.get(CoreKeys.operationLock),
    /** Takes the operation lock for the scope (see acquireNamed). */
    acquire: (options: AcquireOptions) => acquireNamed(store, CoreKeys.operationLock.key, options),
    acquireNamed: (name: string, options: AcquireOptions) => acquireNamed(store, name, options),
    claimOnce: <I>(of: CoreKeyFamily<OperationLock, I>, name: string, holder: string) => claimOnce(store, of, name, holder),
    isDead: (lock: OperationLock) => isDead(store, lock),
    unlock: (lockId: string, force: boolean) => unlock(store, lockId, force)
  } as const
})

export class OperationLocks extends Effect.Service<OperationLocks>()("host/OperationLocks", { effect: makeOperationLocks }) {}
