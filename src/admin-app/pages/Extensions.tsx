import { useState } from "react"
import { Link, useSearchParams } from "react-router-dom"
import { describeResult, useOperations } from "../actions.js"
import { api, bootstrap, type Data, type ExtensionHealth, type ExtensionRow } from "../api.js"
import { Install } from "./Install.js"
import {
  Badge,
  Button,
  Dialog,
  Empty,
  ErrorNotice,
  HealthBadge,
  Notice,
  relativeTime,
  Section,
  SignatureBadge,
  sourceText,
  Spinner,
  StatusBadge,
  useLoad
} from "../ui.js"

// The Extensions screen (docs/admin.md): every installed extension with its state and actions, and
// Install (a module of its own): pick or drop a .host (and its detached signature), see what it is and brings, then confirm.

const healthSummary = (health: ExtensionHealth | undefined): { status: string; text: string } | undefined => {
  if (health === undefined || health.checks.length === 0) return undefined
  const worst = ["error", "warning", "unknown", "ok"].find((status) => health.checks.some((check) => check.status === status)) ?? "ok"
  const failing = health.checks.filter((check) => check.status !== "ok").length
  return { status: worst, text: failing === 0 ? `${health.checks.length} ok` : `${failing}/${health.checks.length} ${worst}` }
}

const quarantineHelp = (reason: string) =>
  /depend/i.test(reason)
    ? "Install or enable the dependency it names (or update it into range), then the next boot loads it."
    : /requires/i.test(reason)
    ? "Update the extension to a version whose requires this panel meets, or disable it."
    : "Fix what the reason names (host status shows the details), update or reinstall it, or disable it. The rest of the panel keeps running."

/** The installed extensions and their health, read together and reloaded together. */
const useInstalled = () => {
  const list = useLoad((signal) => api("overview", { signal }), [])
  const health = useLoad((signal) => api("health", { signal }), [])
  const reload = () => {
    list.reload()
    health.reload()
  }
  const healthOf = new Map((health.data?.extensions ?? []).map((report) => [report.extensionId, report]))
  const rows = list.data ?? []
  return { list, reload, healthOf, rows, updates: rows.filter((row) => row.updateAvailable !== null) }
}

type Start = ReturnType<typeof useOperations>["start"]

const PageHead = ({ onRefresh, onUpdateAll, updates }: { readonly updates: number; readonly onUpdateAll: () => void; readonly onRefresh: () => void }) => (
  <div className="ha-page-head">
    <div>
      <h1>Extensions</h1>
      <p className="ha-muted">Installed extensions, their state and health. Every action here is also a <code>host</code> command (docs/admin.md).</p>
    </div>
    <div className="ha-actions">
      {updates > 0 ? <Button kind="primary" onClick={onUpdateAll}>Update all ({updates})</Button> : null}
      <Button label="Refresh" onClick={onRefresh}>Refresh</Button>
    </div>
  </div>
)

/** Name and id, and what is wrong with it if anything: frontend errors, a quarantine and its remedy. */
const ExtensionCell = ({ row }: { readonly row: ExtensionRow }) => (
  <td data-label="Extension">
    <Link className="ha-link ha-strong" to={`/admin/host/extensions/${row.id}`}>{row.name}</Link>
    <div className="ha-muted ha-small"><code>{row.id}</code>{row.managed ? <> · <Badge title="Listed in the desired-state file">desired state</Badge></> : null}</div>
    {row.frontendErrors.length === 0 ? null : (
      <div className="ha-small ha-fail" data-testid="frontend-errors" title={row.frontendErrors.map((entry) => entry.message).join("\n")}>
        {row.frontendErrors.reduce((sum, entry) => sum + entry.count, 0)} frontend error(s), last {relativeTime(row.frontendErrors[0]!.lastAt)}: {row.frontendErrors[0]!.message}
      </div>
    )}
    {row.quarantine === null ? null : (
      <div className="ha-quarantine" data-testid="quarantine">
        <strong>Quarantined:</strong> {row.quarantine}
        <div className="ha-small">{quarantineHelp(row.quarantine)}</div>
      </div>
    )}
  </td>
)

const RowActions = ({ row, start }: { readonly row: ExtensionRow; readonly start: Start }) => {
  const of = { id: row.id, name: row.name, version: row.version }
  return (
    <td className="ha-row-actions">
      {row.enabled ? (
        <Button onClick={() => start({ operation: "disable", ...of })} testId={`disable-${row.id}`}>Disable</Button>
      ) : (
        <Button onClick={() => start({ operation: "enable", ...of })} testId={`enable-${row.id}`}>Enable</Button>
      )}
      {row.updateAvailable === null ? null : (
        <Button kind="primary" onClick={() => start({ operation: "update", ...of, target: row.updateAvailable ?? undefined })} testId={`update-${row.id}`}>Update</Button>
      )}
      <Button kind="ghost" onClick={() => start({ operation: "remove", ...of })} testId={`remove-${row.id}`}>Remove</Button>
    </td>
  )
}

const ExtensionTableRow = ({ health, row, start }: { readonly row: ExtensionRow; readonly health: ExtensionHealth | undefined; readonly start: Start }) => {
  const summary = healthSummary(health)
  return (
    <tr data-extension={row.id}>
      <ExtensionCell row={row} />
      <td data-label="Version">
        {row.version}
        {row.updateAvailable === null ? null : (
          <div><Badge tone="info" title={`Version ${row.updateAvailable} is in the registry`}>update {row.updateAvailable}</Badge></div>
        )}
      </td>
      <td data-label="Status"><StatusBadge status={row.status} /></td>
      <td data-label="Signature"><SignatureBadge status={row.signature} /></td>
      <td data-label="Source" className="ha-small">{sourceText(row.source)}</td>
      <td data-label="Health">{summary === undefined ? <span className="ha-muted">—</span> : <span title={summary.text}><HealthBadge status={summary.status} /> <span className="ha-small ha-muted">{summary.text}</span></span>}</td>
      <RowActions row={row} start={start} />
    </tr>
  )
}

const ExtensionsTable = ({ installed, start }: { readonly installed: ReturnType<typeof useInstalled>; readonly start: Start }) => (
  <div className="ha-table-wrap">
    <table className="ha-table ha-table--cards" data-testid="extensions-table">
      <thead>
        <tr>
          <th>Extension</th>
          <th>Version</th>
          <th>Status</th>
          <th>Signature</th>
          <th>Source</th>
          <th>Health</th>
          <th><span className="ha-visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {installed.rows.map((row) => <ExtensionTableRow health={installed.healthOf.get(row.id)} key={row.id} row={row} start={start} />)}
      </tbody>
    </table>
  </div>
)

/** Install from an upload, or, with uploads off, where archives are installed instead. */
const InstallSection = ({ onInstalled }: { readonly onInstalled: (message: string) => void }) =>
  bootstrap().admin.uploads === "off" ? (
    <Section id="install-title" title="Install an extension">
      <p data-testid="uploads-off">
        Uploads are off on this panel (<code>admin_uploads: off</code>): an admin session is not shell access, so archives are
        installed on the server — <code>host add &lt;file&gt;</code> or the desired-state file. Every other action stays here.
      </p>
    </Section>
  ) : (
    <Install onInstalled={onInstalled} />
  )

export const ExtensionsPage = () => {
  const installed = useInstalled()
  const { list } = installed
  const operations = useOperations(installed.reload)
  const [params] = useSearchParams()
  const removed = params.get("removed")
  const [message, setMessage] = useState<string | undefined>(removed === null ? undefined : `${removed}: removed`)
  const [confirmUpdateAll, setConfirmUpdateAll] = useState(false)
  const [updateOutcomes, setUpdateOutcomes] = useState<UpdateOutcomes | undefined>(undefined)
  const { rows, updates } = installed
  return (
    <>
      <PageHead onRefresh={installed.reload} onUpdateAll={() => setConfirmUpdateAll(true)} updates={updates.length} />
      {operations.notice}
      {message === undefined ? null : <Notice tone="success"><p data-testid="install-result">{message}</p></Notice>}
      {updateOutcomes === undefined ? null : <UpdateAllOutcomes outcomes={updateOutcomes} />}
      <ErrorNotice error={list.error} title="The extensions could not be listed" />
      <Section id="installed-title" title={`Installed (${rows.length})`}>
        {list.loading && list.data === undefined ? <Spinner /> : rows.length === 0 ? (
          <Empty>No extensions installed yet. {bootstrap().admin.uploads === "off" ? "Install them on the server with host add" : "Install a .host archive below"}, or browse the registry.</Empty>
        ) : <ExtensionsTable installed={installed} start={operations.start} />}
      </Section>
      <InstallSection onInstalled={(text) => { setMessage(text); setUpdateOutcomes(undefined); installed.reload() }} />
      {operations.dialog}
      {confirmUpdateAll ? <UpdateAll onClose={() => setConfirmUpdateAll(false)} onDone={(outcomes) => { setConfirmUpdateAll(false); setMessage(undefined); setUpdateOutcomes(outcomes); installed.reload() }} updates={updates} /> : null}
    </>
  )
}

type UpdateOutcomes = Data<"updateAll">

/**
 * What Update all did, one line per extension: the updates that went through, and apart from them, as an
 * error, each one that failed with the reason the server gave (one failure does not stop the rest).
 */
const UpdateAllOutcomes = ({ outcomes }: { readonly outcomes: UpdateOutcomes }) => {
  const updated = outcomes.flatMap((outcome) => (outcome.action === "failed" ? [] : [outcome]))
  const failed = outcomes.flatMap((outcome) => (outcome.action === "failed" ? [outcome] : []))
  return (
    <>
      {outcomes.length === 0 ? <Notice><p data-testid="update-all-updated">Nothing to update.</p></Notice> : null}
      {updated.length === 0 ? null : (
        <Notice title={`Updated ${updated.length} extension(s)`} tone="success">
          <ul className="ha-list" data-testid="update-all-updated">
            {updated.map((outcome) => <li key={outcome.id}>{describeResult(outcome)}</li>)}
          </ul>
        </Notice>
      )}
      {failed.length === 0 ? null : (
        <Notice title={`${failed.length} update(s) failed`} tone="error">
          <ul className="ha-list" data-testid="update-all-failed">
            {failed.map((outcome) => <li data-extension={outcome.id} key={outcome.id}><code>{outcome.id}</code>: {outcome.error}</li>)}
          </ul>
        </Notice>
      )}
    </>
  )
}

const UpdateAll = ({ onClose, onDone, updates }: { readonly updates: ReadonlyArray<ExtensionRow>; readonly onClose: () => void; readonly onDone: (outcomes: UpdateOutcomes) => void }) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const run = async () => {
    setBusy(true)
    try {
      onDone(await api("updateAll"))
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  return (
    <Dialog
      actions={<><Button onClick={onClose}>Cancel</Button><Button disabled={busy} kind="primary" onClick={() => void run()}>{busy ? "Updating…" : "Update all"}</Button></>}
      onClose={onClose}
      title="Update every extension from the registry?"
    >
      <ul className="ha-list">
        {updates.map((row) => <li key={row.id}><code>{row.id}</code> {row.version} → {row.updateAvailable}</li>)}
      </ul>
      <p className="ha-muted">Each update is its own all-or-nothing operation; one failure does not stop the rest.</p>
      <ErrorNotice error={error} />
    </Dialog>
  )
}
