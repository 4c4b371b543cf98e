import { useCallback, useState } from "react"
import { api, extensionPath, type Impact, messageOf, type OperationResult } from "./api.js"
import { Button, Dialog, ErrorNotice, Notice, Spinner, useLoad } from "./ui.js"

// Enable / disable / update / remove, each confirmed in a dialog that first asks the API what the change
// would affect: the enabled dependents, and for a remove the tables and rows that would be dropped.

export type Operation = "enable" | "disable" | "update" | "remove"

export interface PendingOperation {
  readonly operation: Operation
  readonly id: string
  readonly name: string
  readonly version: string
  /** update: the version to go to (undefined: the registry's latest). */
  readonly target?: string | undefined
}

const verbs: Readonly<Record<Operation, string>> = { enable: "Enable", disable: "Disable", update: "Update", remove: "Remove" }

export const describeResult = (result: OperationResult): string => {
  const base = `${result.id}: ${result.action}${result.fromVersion !== null && result.fromVersion !== result.version ? ` ${result.fromVersion} → ${result.version}` : ` ${result.version}`}`
  return result.warnings.length > 0 ? `${base} (${result.warnings.join("; ")})` : base
}

/** The body an operation's request sends: the target version of an update, keep-data and force. */
const bodyOf = (pending: PendingOperation, keepData: boolean, force: boolean) =>
  pending.operation === "update"
    ? pending.target === undefined ? {} : { version: pending.target }
    : pending.operation === "remove"
    ? { keepData, force }
    : { force }

/** What the operation would affect (asked of the API first), the admin's choices, and the run once confirmed. */
const useConfirmedOperation = (pending: PendingOperation, onDone: (message: string) => void) => {
  const { id, operation } = pending
  const impact = useLoad((signal) => api("impact", { path: extensionPath(id), signal }), [id])
  const [keepData, setKeepData] = useState(false)
  const [force, setForce] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const dependents = impact.data?.dependents ?? []
  const needsForce = (operation === "disable" || operation === "remove") && dependents.length > 0
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const result = await api("operation", { path: { ...extensionPath(id), action: operation }, body: bodyOf(pending, keepData, force) })
      onDone(describeResult(result))
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  return { impact, dependents, needsForce, keepData, setKeepData, force, setForce, busy, error, run }
}

/** The enabled extensions that rely on this one, or that none does (an enable names none). */
const DependentsNotice = ({ dependents, operation }: { readonly dependents: ReadonlyArray<string>; readonly operation: Operation }) =>
  dependents.length > 0 ? (
    <Notice title="Enabled extensions depend on it" tone="warning">
      <ul className="ha-list" data-testid="dependents">
        {dependents.map((dependent) => <li key={dependent}><code>{dependent}</code></li>)}
      </ul>
      {operation === "update" ? <p>They are checked against the new version; an update out of their range is refused.</p> : null}
    </Notice>
  ) : operation !== "enable" ? (
    <p className="ha-muted">No enabled extension depends on it.</p>
  ) : null

const DroppedTables = ({ keepData, tables }: { readonly tables: Impact["tables"]; readonly keepData: boolean }) =>
  tables.length > 0 ? (
    <div>
      <p className="ha-label">{keepData ? "Tables kept" : "Tables dropped by its migrations' down steps"}</p>
      <table className="ha-table ha-table--compact" data-testid="dropped-tables">
        <thead>
          <tr><th>Table</th><th className="ha-num">Rows</th></tr>
        </thead>
        <tbody>
          {tables.map((table) => (
            <tr key={table.name}>
              <td><code>{table.name}</code></td>
              <td className="ha-num">{table.rows === null ? "—" : table.rows.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  ) : (
    <p className="ha-muted">Its migrations create no tables that exist now.</p>
  )

/** A remove's cost: the tables it drops (or keeps), what else goes, and the keep-data choice. */
const RemoveImpact = ({ impact, keepData, setKeepData }: { readonly impact: Impact; readonly keepData: boolean; readonly setKeepData: (keep: boolean) => void }) => {
  const rowsDropped = impact.tables.reduce((sum, table) => sum + (table.rows ?? 0), 0)
  return (
    <>
      <DroppedTables keepData={keepData} tables={impact.tables} />
      <p className="ha-muted" data-testid="remove-summary">
        {keepData
          ? `Only its files are removed: ${impact.migrations.length} migration record(s), ${impact.settings} stored setting(s) and every table stay.`
          : `${impact.migrations.length} migration(s) rolled back and ${impact.settings} stored setting(s) deleted${rowsDropped > 0 ? `: ${rowsDropped.toLocaleString()} row(s) lost` : ""}.`}
      </p>
      <label className="ha-check">
        <input checked={keepData} data-testid="keep-data" onChange={(event) => setKeepData(event.target.checked)} type="checkbox" />
        <span>
          Keep data (<code>--keep-data</code>): keep its tables, migration records and settings, so reinstalling resumes with them
        </span>
      </label>
    </>
  )
}

const ConfirmOperation = ({ onClose, onDone, pending }: {
  readonly pending: PendingOperation
  readonly onClose: () => void
  readonly onDone: (message: string) => void
}) => {
  const { id, operation } = pending
  const state = useConfirmedOperation(pending, onDone)
  const { impact } = state
  return (
    <Dialog
      actions={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button
            disabled={state.busy || impact.loading || (state.needsForce && !state.force)}
            kind={operation === "remove" || operation === "disable" ? "danger" : "primary"}
            onClick={() => void state.run()}
            testId="confirm-operation"
          >
            {state.busy ? `${verbs[operation]}…` : `${verbs[operation]} ${pending.name}`}
          </Button>
        </>
      }
      onClose={onClose}
      title={`${verbs[operation]} ${pending.name}?`}
    >
      <p>
        <code>{id}</code> {pending.version}
        {operation === "update" ? <> → {pending.target ?? "the registry's latest version"}</> : null}
      </p>
      {impact.loading ? <Spinner label="Checking what this affects…" /> : null}
      <ErrorNotice error={impact.error} title="What this affects could not be read" />
      {impact.data === undefined ? null : (
        <div className="ha-stack">
          <DependentsNotice dependents={state.dependents} operation={operation} />
          {operation === "remove" ? <RemoveImpact impact={impact.data} keepData={state.keepData} setKeepData={state.setKeepData} /> : null}
          {state.needsForce ? (
            <label className="ha-check">
              <input checked={state.force} data-testid="force" onChange={(event) => state.setForce(event.target.checked)} type="checkbox" />
              <span>{verbs[operation]} anyway (<code>--force</code>): the dependents lose it</span>
            </label>
          ) : null}
        </div>
      )}
      <ErrorNotice error={state.error} title={`${verbs[operation]} failed`} />
    </Dialog>
  )
}

/** The dialog for one operation at a time, and the message of the last one that finished. */
export const useOperations = (onChanged: (operation: Operation) => void) => {
  const [pending, setPending] = useState<PendingOperation | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const close = useCallback(() => setPending(undefined), [])
  const start = useCallback((operation: PendingOperation) => {
    setMessage(undefined)
    setPending(operation)
  }, [])
  const dialog = pending === undefined ? null : (
    <ConfirmOperation
      key={`${pending.operation} ${pending.id}`}
      onClose={close}
      onDone={(text) => {
        const finished = pending.operation
        setPending(undefined)
        setMessage(text)
        onChanged(finished)
      }}
      pending={pending}
    />
  )
  const notice = message === undefined ? null : (
    <Notice tone="success">
      <p data-testid="operation-result">{message}</p>
    </Notice>
  )
  return { start, dialog, notice }
}

export { messageOf }
