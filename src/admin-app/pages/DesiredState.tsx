import { useState } from "react"
import { Link } from "react-router-dom"
import { type AdoptResult, type DesiredStateView, get, post } from "../api.js"
import { Badge, Button, CapabilityDiffView, Dialog, DiffView, Empty, ErrorNotice, Notice, Section, Spinner, type Tone, useLoad } from "../ui.js"

// Desired state (docs/admin.md): the plan against the desired-state file with each action's capability
// diff, the drift (what changed on the panel since the file was applied), Apply after a confirmation, and
// Adopt, which rewrites the file to describe the panel — showing its diff before anything is written.

const actionTone: Readonly<Record<string, Tone>> = { install: "primary", update: "info", enable: "success", disable: "warning", configure: "info", repair: "warning", remove: "danger", unlisted: "neutral" }

interface ApplyAnswer {
  readonly apply?: { readonly applied: ReadonlyArray<{ readonly type: string; readonly id: string }>; readonly failed: { readonly action: { readonly type: string; readonly id: string }; readonly error: string } | null }
}

const Adopt = ({ onClose, onDone, result }: { readonly result: AdoptResult; readonly onClose: () => void; readonly onDone: (message: string) => void }) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const write = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const written = await post<AdoptResult>("/desired-state/adopt", { write: true, expected_sha256: result.sha256 })
      onDone(written.written ? `Adopted: wrote ${written.file}.` : "Nothing to write: the file already describes the panel.")
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  return (
    <Dialog
      actions={<><Button onClick={onClose}>Cancel</Button><Button disabled={busy || !result.changed} kind="primary" onClick={() => void write()} testId="confirm-adopt">{busy ? "Writing…" : "Write the file"}</Button></>}
      onClose={onClose}
      title="Adopt the panel's state into the file?"
      wide
    >
      {result.changed ? (
        <>
          <p>These changes are written to <code className="ha-break">{result.file}</code>; comments and layout stay, secrets stay as their <code>{"${VARIABLE}"}</code> templates.</p>
          <ul className="ha-list">{result.changes.map((change) => <li key={change}>{change}</li>)}</ul>
          <DiffView diff={result.diff} />
        </>
      ) : <Empty>The file already describes the panel.</Empty>}
      {result.notes.length > 0 ? <Notice tone="warning" title="Not written"><ul className="ha-list">{result.notes.map((note) => <li key={note}>{note}</li>)}</ul></Notice> : null}
      <p className="ha-muted ha-small">The same as <code>host reconcile --adopt</code> (<code>--dry-run</code> shows only the diff).</p>
      <ErrorNotice error={error} title="Not written" />
    </Dialog>
  )
}

export const DesiredStatePage = () => {
  const state = useLoad((signal) => get<DesiredStateView>("/desired-state", signal), [])
  const [confirmApply, setConfirmApply] = useState(false)
  const [applying, setApplying] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const [adopt, setAdopt] = useState<AdoptResult | undefined>(undefined)
  const [showFile, setShowFile] = useState(false)
  const data = state.data
  const plan = data?.plan ?? null
  const apply = async () => {
    setApplying(true)
    setError(undefined)
    try {
      const answer = await post<ApplyAnswer>("/reconcile", {})
      const applied = answer.apply?.applied.length ?? 0
      setMessage(`Apply complete: ${applied} action(s) applied.`)
      setConfirmApply(false)
      state.reload()
    } catch (failure) {
      setError(failure)
      setConfirmApply(false)
      state.reload()
    } finally {
      setApplying(false)
    }
  }
  const previewAdopt = async () => {
    setError(undefined)
    setMessage(undefined)
    try {
      setAdopt(await post<AdoptResult>("/desired-state/adopt", { write: false }))
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <>
      <div className="ha-page-head">
        <div className="ha-min0">
          <h1>Desired state</h1>
          <p className="ha-muted">The panel as <code className="ha-break">{data?.file ?? "desired-state/extensions.yaml"}</code> describes it (<code>host reconcile</code>).</p>
        </div>
        <div className="ha-actions">
          <Button onClick={() => state.reload()}>Re-plan</Button>
          <Button onClick={() => void previewAdopt()} testId="adopt">Adopt…</Button>
          <Button disabled={plan === null || plan.actions.length === 0} kind="primary" onClick={() => setConfirmApply(true)} testId="apply">Apply…</Button>
        </div>
      </div>
      {message === undefined ? null : <Notice tone="success"><p data-testid="desired-result">{message}</p></Notice>}
      <ErrorNotice error={error} />
      <ErrorNotice error={state.error} title="The plan could not be made" />
      {data === undefined ? <Spinner /> : !data.exists ? (
        <Notice title="No desired-state file yet">
          <p>Adopt writes one describing the panel as it is; from then on, changes go through the file (and pull requests).</p>
        </Notice>
      ) : data.planError !== null ? (
        <Notice title="The file cannot be planned" tone="error">
          <p>{data.planError.detail}</p>
        </Notice>
      ) : null}
      {plan === null ? null : (
        <>
          <Section id="plan-title" title={plan.actions.length === 0 ? "Plan: no changes" : `Plan: ${plan.actions.length} change(s)`}>
            <p className="ha-strong" data-testid="plan-summary">{plan.text.split("\n").at(-1)}</p>
            {plan.warnings.length > 0 ? <ul className="ha-list ha-warnings">{plan.warnings.map((warning) => <li key={warning}>⚠ {warning}</li>)}</ul> : null}
            {plan.actions.length === 0 ? null : (
              <ol className="ha-plan" data-testid="plan-actions">
                {plan.actions.map((action, index) => (
                  <li className="ha-plan__action" key={`${action.type} ${action.id} ${index}`}>
                    <div className="ha-plan__head">
                      <Badge tone={actionTone[action.type] ?? "neutral"}>{action.type}</Badge>
                      <Link className="ha-link ha-strong" to={`/admin/host/extensions/${action.id}`}>{action.id}</Link>
                      {action.from || action.to ? <span className="ha-muted">{action.from ?? "—"} → {action.to ?? "—"}</span> : null}
                    </div>
                    <p className="ha-muted ha-small">{action.reason}</p>
                    {action.settings === undefined || action.settings.length === 0 ? null : (
                      <ul className="ha-list ha-small">
                        {action.settings.map((change) => (
                          <li key={change.key}><code>{change.key}</code>: {JSON.stringify(change.from)} → {change.sensitive ? <code>{String(change.to)}</code> : JSON.stringify(change.to)}</li>
                        ))}
                      </ul>
                    )}
                    <CapabilityDiffView diff={action.capabilities} />
                  </li>
                ))}
              </ol>
            )}
          </Section>
          <Section id="drift-title" title={`Drift (${data?.drift.length ?? 0})`}>
            {data === undefined || data.drift.length === 0 ? <Empty>No drift: the installed extensions match the file.</Empty> : (
              <>
                <p className="ha-muted">Changed on the panel since the file was applied (in this screen, the CLI or by hand). Apply puts the file's state back; Adopt writes the panel's state into the file.</p>
                <ul className="ha-list" data-testid="drift">
                  {data.drift.map((item) => (
                    <li key={`${item.type} ${item.id}`}><Badge tone={actionTone[item.type] ?? "neutral"}>{item.type}</Badge> <code>{item.id}</code> <span className="ha-muted ha-small">{item.detail}</span></li>
                  ))}
                </ul>
              </>
            )}
          </Section>
        </>
      )}
      {data?.text === null || data?.text === undefined ? null : (
        <Section actions={<Button onClick={() => setShowFile((value) => !value)}>{showFile ? "Hide" : "Show"}</Button>} id="file-title" title="The file">
          {showFile ? <pre className="ha-code-block">{data.text}</pre> : <p className="ha-muted">{data.text.split("\n").length} lines.</p>}
        </Section>
      )}
      {confirmApply && plan !== null ? (
        <Dialog
          actions={<><Button onClick={() => setConfirmApply(false)}>Cancel</Button><Button disabled={applying} kind="primary" onClick={() => void apply()} testId="confirm-apply">{applying ? "Applying…" : `Apply ${plan.actions.length} change(s)`}</Button></>}
          onClose={() => setConfirmApply(false)}
          title="Apply the plan?"
        >
          <p>Each action is one all-or-nothing operation, in dependency order; on a failure the rest stop and a new apply continues from there.</p>
          <ul className="ha-list">{plan.actions.map((action, index) => <li key={index}><Badge tone={actionTone[action.type] ?? "neutral"}>{action.type}</Badge> <code>{action.id}</code> <span className="ha-muted ha-small">{action.reason}</span></li>)}</ul>
          <p className="ha-muted ha-small">The same as <code>host reconcile</code>. The plan is made again when applying; if the panel changed meanwhile, what is applied follows the file, not this list.</p>
        </Dialog>
      ) : null}
      {adopt === undefined ? null : <Adopt onClose={() => setAdopt(undefined)} onDone={(text) => { setAdopt(undefined); setMessage(text); state.reload() }} result={adopt} />}
    </>
  )
}
