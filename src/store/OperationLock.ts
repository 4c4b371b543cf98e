import { SqlClient } from "@effect/sql"
import { Data, Duration, Effect, Option, Ref, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { appendFileSync, readFileSync } from "node:fs"
import { hostname } from "node:os"
import { coreExtensionId } from "../domain/Installed.js"
import { leaseLapsed, leaseMillis, leaseRenewMillis, lockSettingKey, OperationLock } from "../domain/Lock.js"
import { dialectOf } from "./Dialect.js"
import { isUniqueViolation, storeError } from "./StoreError.js"

// One writer per database (docs/architecture.md "Store", docs/operations.md): a `host/core` row in host_settings. Taking it is an INSERT
// that the UNIQUE(extension_id, key) constraint lets only one process win; releasing deletes only our
// own row. The row is a lease the holder renews every 5 s: a lock whose 30 s lease lapsed is dead wherever
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

const thisProcessStarted = processStarted(process.pid)
const startedField = thisProcessStarted === undefined ? {} : { process_started: thisProcessStarted }

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
export const holderAlive = (lock: OperationLock, leases = true): boolean => {
  if (leases && leaseLapsed(lock)) return false
  if (lock.hostname !== thisHost) return true
  if (lock.pid === process.pid) return lock.process_started === undefined || lock.process_started === thisProcessStarted
  if (!processAlive(lock.pid)) return false
  return lock.process_started === undefined || lock.process_started === processStarted(lock.pid)
}

/** A lock whose holder is gone: its lease lapsed, or it ran on this host and its process ended. */
export const isDeadHolder = (lock: OperationLock, leases = true): boolean => !holderAlive(lock, leases)

const decodeLock = Schema.decodeUnknownOption(Schema.parseJson(OperationLock))

const leaseFrom = (now: number) => new Date(now + leaseMillis).toISOString()

export class OperationLocks extends Effect.Service<OperationLocks>()("host/OperationLocks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = sql("key")
    // A SQLite database lives on one host, where the pid says all; and its one connection is busy for
    // the whole of a long migration batch, so a renewal could not get through in time.
    const leases = dialectOf(sql) !== "sqlite"

    // Every lock is a host/core row: the operation lock under `lock`, others (scheduled tasks that must
    // not overlap) under their own name.
    const readRow = (name: string) =>
      sql<{ value: string }>`SELECT value FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} = ${name}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.value)),
        Effect.mapError(storeError(`reading the lock ${name}`))
      )

    const current = Effect.map(readRow(lockSettingKey), Option.flatMap(decodeLock))

    const insert = (name: string, lock: OperationLock) => {
      const now = new Date().toISOString()
      return sql`INSERT INTO host_settings ${
        sql.insert({ extension_id: coreExtensionId, key: name, value: JSON.stringify(lock), created_at: now, updated_at: now })
      }`.pipe(Effect.as(true), Effect.catchIf(isUniqueViolation, () => Effect.succeed(false)), Effect.mapError(storeError(`taking the lock ${name}`)))
    }

    /** Deletes the lock row only while it still holds exactly `json` (compare-and-delete). */
    const deleteIfUnchanged = (json: string, name: string = lockSettingKey) =>
      sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} = ${name} AND value = ${json}`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("releasing the operation lock"))
      )

    /**
     * Test hook (the R3 suite, docs/operations.md#reliability-suites): with `HOST_TEST_LOCK_LOG=<file>`,
     * a line is appended when the lock is taken and just before it is given back, so concurrent
     * processes can prove that no two held it at once.
     */
    const traceLock = (mark: "begin" | "end", name: string) =>
      Effect.sync(() => {
        const file = process.env.HOST_TEST_LOCK_LOG
        if (file !== undefined && file !== "") appendFileSync(file, `${mark} ${process.pid} ${name}\n`)
      })

    /**
     * Replaces the lock row's value only while it still holds exactly `json` (compare-and-swap); false
     * when another process changed or took it meanwhile.
     */
    const replaceIfUnchanged = (name: string, json: string, next: string) =>
      sql`UPDATE host_settings SET value = ${next}, updated_at = ${new Date().toISOString()}
          WHERE extension_id = ${coreExtensionId} AND ${key} = ${name} AND value = ${json}`.pipe(
        Effect.zipRight(readRow(name)),
        Effect.map((row) => Option.getOrNull(row) === next),
        Effect.mapError(storeError(`renewing the lock ${name}`))
      )

    /**
     * Renews the lease every 5 s while the scope lasts, keeping `current` (the row's JSON) up to date for
     * the release. A renewal that finds the row changed means the lock was taken over: warned about once.
     */
    const renewing = (name: string, current: Ref.Ref<string>) =>
      Effect.gen(function*() {
        for (;;) {
          yield* Effect.sleep(Duration.millis(leaseRenewMillis))
          const json = yield* Ref.get(current)
          const lock = Option.getOrThrow(decodeLock(json))
          const next = JSON.stringify({ ...lock, lease_expires_at: leaseFrom(Date.now()) })
          const renewed = yield* replaceIfUnchanged(name, json, next).pipe(
            Effect.catchAll((error) => Effect.as(Effect.logWarning(`could not renew the lease of lock ${name}: ${error.message}`), true))
          )
          if (!renewed) {
            return yield* Effect.logWarning(`the lock ${name} (${lock.operation}) was taken over by another process; its lease is no longer renewed`)
          }
          yield* Ref.set(current, next)
        }
      })

    /**
     * Takes the lock `name` for the scope, waiting up to `timeout` for a live holder, and renews its lease
     * until the scope closes. A dead holder's lock is taken over (its interrupted operation is then
     * recovered by the caller).
     */
    const acquireNamed = Effect.fn("OperationLocks.acquire")(
      function*(
        name: string,
        options: { readonly operation: string; readonly holder: string; readonly timeout: Duration.DurationInput }
      ) {
        const started = Date.now()
        const deadline = started + Duration.toMillis(options.timeout)
        for (;;) {
          // Read before writing: while the holder runs a migration batch it also holds SQLite's write
          // lock, and an INSERT would wait for that instead of reporting the holder at once.
          const row = yield* readRow(name)
          if (Option.isNone(row)) {
            const now = Date.now()
            const lock: OperationLock = {
              id: randomUUID(),
              holder: options.holder,
              pid: process.pid,
              hostname: thisHost,
              ...startedField,
              operation: options.operation,
              acquired_at: new Date(now).toISOString(),
              lease_expires_at: leaseFrom(now)
            }
            if (yield* insert(name, lock)) {
              yield* traceLock("begin", name)
              return [name, lock, yield* Ref.make(JSON.stringify(lock))] as const
            }
            continue
          }
          const held = decodeLock(row.value)
          if (Option.isNone(held) || isDeadHolder(held.value, leases)) {
            yield* Effect.logWarning(
              Option.match(held, {
                onNone: () => "clearing an unreadable operation lock",
                onSome: (dead) =>
                  leases && leaseLapsed(dead)
                    ? `taking over the lock of ${dead.operation} (pid ${dead.pid} on ${dead.hostname}; its lease lapsed at ${dead.lease_expires_at})`
                    : `taking over the lock of ${dead.operation} (pid ${dead.pid} is gone)`
              })
            )
            yield* deleteIfUnchanged(row.value, name)
            continue
          }
          if (Date.now() >= deadline) {
            return yield* new LockHeld({ lock: held.value, waitedSeconds: Math.round((Date.now() - started) / 1000) })
          }
          yield* Effect.sleep(Duration.millis(Math.min(200, Math.max(10, deadline - Date.now()))))
        }
      },
      Effect.acquireRelease(([name, , current]) =>
        Effect.zipRight(traceLock("end", name), Effect.ignore(Effect.flatMap(Ref.get(current), (json) => deleteIfUnchanged(json, name))))
      ),
      Effect.tap(([name, , current]) => Effect.forkScoped(renewing(name, current))),
      Effect.map(([, lock]) => lock)
    )

    /** Takes the operation lock for the scope (see acquireNamed). */
    const acquire = (options: { readonly operation: string; readonly holder: string; readonly timeout: Duration.DurationInput }) =>
      acquireNamed(lockSettingKey, options)

    /** `host unlock <lock-id>`: clears the lock if it has that id and its holder is gone (or with force). */
    const unlock = Effect.fn("OperationLocks.unlock")(function*(lockId: string, force: boolean) {
      const row = yield* readRow(lockSettingKey)
      const held = Option.flatMap(row, decodeLock)
      if (Option.isNone(row) || Option.isNone(held) || held.value.id !== lockId) {
        return yield* new LockNotFound({ lockId, current: Option.getOrNull(held) })
      }
      if (!force && holderAlive(held.value, leases) && (held.value.hostname === thisHost || (leases && held.value.lease_expires_at !== undefined))) {
        return yield* new LockHolderAlive({ lock: held.value })
      }
      yield* deleteIfUnchanged(row.value)
      return held.value
    })

    /**
     * Claims `name` once for good (a row that stays): true for the one process that inserted it. Claims
     * under `prefix` other than `keep` are deleted (the scheduler claims each minute once).
     */
    const claimOnce = Effect.fn("OperationLocks.claimOnce")(function*(name: string, holder: string, prefix: string) {
      const claimed = yield* insert(name, {
        id: randomUUID(),
        holder,
        pid: process.pid,
        hostname: thisHost,
        ...startedField,
        operation: name,
        acquired_at: new Date().toISOString()
      })
      if (claimed) {
        yield* sql`DELETE FROM host_settings WHERE extension_id = ${coreExtensionId} AND ${key} LIKE ${`${prefix}%`} AND ${key} != ${name}`.pipe(
          Effect.mapError(storeError(`clearing old claims ${prefix}`))
        )
      }
      return claimed
    })

    /** Whether the lock's holder is gone, by this database's rules (leases on servers, pids everywhere). */
    const isDead = (lock: OperationLock) => isDeadHolder(lock, leases)

    return { current, acquire, acquireNamed, claimOnce, isDead, unlock } as const
  })
}) {}
