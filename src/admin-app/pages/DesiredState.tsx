import { useState } from "react"
import { Link } from "react-router-dom"
import { type AdoptResult, api, type Data, type Plan } from "../api.js"
import { Badge, Button, CapabilityDiffView, Dialog, DiffView, Empty, ErrorNotice, Notice, Section, Spinner, type Tone, useLoad } from "../ui.js"

// Desired state (docs/admin.md): the plan against the desired-state file with each action's capability
// diff, the drift (what changed on the panel since the file was applied), Apply after a confirmation, and
// Adopt, which rewrites the file to describe the panel — showing its diff before anything is written.

const actionTone: Readonly<Record<string, Tone>> = { install: "primary", update: "info", enable: "success", disable: "warning", configure: "info", repair: "warning", remove: "danger", unlisted: "neutral" }

const Adopt = ({ onClose, onDone, result }: { readonly result: AdoptResult; readonly onClose: () => void; readonly onDone: (message: string) => void }) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const write = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const written = await api("adopt", { body: { write: true, expected_sha256: result.sha256 } })
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

/** The file and its plan, and what the last apply or adopt said (a message, or the error it met). */
const useDesiredState = () => {
  const state = useLoad((signal) => api("desiredState", { signal }), [])
  const [error, setError] = useState<unknown>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  return { state, error, setError, message, setMessage }
}

type Desired = ReturnType<typeof useDesiredState>

/** Apply: the confirmation, then the reconcile; the plan is made again whatever the outcome. */
const useApply = ({ setError, setMessage, state }: Desired) => {
  const [confirming, setConfirming] = useState(false)
  const [applying, setApplying] = useState(false)
  const apply = async () => {
    setApplying(true)
    setError(undefined)
    try {
      const answer = await api("reconcile", { body: { dry_run: false, prune: false, allow_destroy: false } })
      const applied = answer.apply?.applied.length ?? 0
      // A stopped apply answers 422 with its plan (the contract declares that body a success of reconcile):
      // what went through and the action that failed.
      const failed = answer.apply?.failed ?? null
      if (failed === null) setMessage(`Apply complete: ${applied} action(s) applied.`)
      else setError(new Error(`Apply stopped at ${failed.action.type} ${failed.action.id} (${applied} action(s) applied before it): ${failed.error}`))
      setConfirming(false)
      state.reload()
    } catch (failure) {
      setError(failure)
      setConfirming(false)
      state.reload()
    } finally {
      setApplying(false)
    }
  }
  return { confirming, setConfirming, applying, apply }
}

/** Adopt: the file as it would be rewritten, asked for without writing it, for the dialog to show. */
const useAdoptPreview = ({ setError, setMessage }: Desired) => {
  const [adopt, setAdopt] = useState<AdoptResult | undefined>(undefined)
  const preview = async () => {
    setError(undefined)
    setMessage(undefined)
    try {
      setAdopt(await api("adopt", { body: { write: false } }))
    } catch (failure) {
      setError(failure)
    }
  }
  return { adopt, setAdopt, preview }
}

const PageHead = ({ file, onAdopt, onApply, onReplan, plan }: {
  readonly file: string | undefined
  readonly plan: Plan | null
  readonly onReplan: () => void
  readonly onAdopt: () => void
  readonly onApply: () => void
}) => (
  <div className="ha-page-head">
    <div className="ha-min0">
      <h1>Desired state</h1>
      <p className="ha-muted">The panel as <code className="ha-break">{file ?? "desired-state/extensions.yaml"}</code> describes it (<code>host reconcile</code>).</p>
    </div>
    <div className="ha-actions">
      <Button onClick={onReplan}>Re-plan</Button>
      <Button onClick={onAdopt} testId="adopt">Adopt…</Button>
      <Button disabled={plan === null || plan.actions.length === 0} kind="primary" onClick={onApply} testId="apply">Apply…</Button>
    </div>
  </div>
)

/** Still loading, no file yet, or a file that cannot be planned. */
const FileState = ({ data }: { readonly data: Data<"desiredState"> | undefined }) =>
  data === undefined ? <Spinner /> : !data.exists ? (
    <Notice title="No desired-state file yet">
      <p>Adopt writes one describing the panel as it is; from then on, changes go through the file (and pull requests).</p>
    </Notice>
  ) : data.planError !== null ? (
    <Notice title="The file cannot be planned" tone="error">
      <p>{data.planError.detail}</p>
    </Notice>
  ) : null

/** One action of the plan: what, why, the settings it changes and its capability diff. */
const PlanAction = ({ action }: { readonly action: Plan["actions"][number] }) => (
  <li className="ha-plan__action">
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
)

const PlanSection = ({ plan }: { readonly plan: Plan }) => (
  <Section id="plan-title" title={plan.actions.length === 0 ? "Plan: no changes" : `Plan: ${plan.actions.length} change(s)`}>
    <p className="ha-strong" data-testid="plan-summary">{plan.text.split("\n").at(-1)}</p>
    {plan.warnings.length > 0 ? <ul className="ha-list ha-warnings">{plan.warnings.map((warning) => <li key={warning}>⚠ {warning}</li>)}</ul> : null}
    {plan.actions.length === 0 ? null : (
      <ol className="ha-plan" data-testid="plan-actions">
        {plan.actions.map((action, index) => <PlanAction action={action} key={`${action.type} ${action.id} ${index}`} />)}
      </ol>
    )}
  </Section>
)

const DriftSection = ({ data }: { readonly data: Data<"desiredState"> | undefined }) => (
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
)

/** The file's text, folded to its line count until asked for. Always mounted, so the choice outlives a reload. */
const TheFile = ({ text }: { readonly text: string | null | undefined }) => {
  const [showFile, setShowFile] = useState(false)
  if (text === null || text === undefined) return null
  return (
    <Section actions={<Button onClick={() => setShowFile((value) => !value)}>{showFile ? "Hide" : "Show"}</Button>} id="file-title" title="The file">
      {showFile ? <pre className="ha-code-block">{text}</pre> : <p className="ha-muted">{text.split("\n").length} lines.</p>}
    </Section>
  )
}

const ApplyDialog = ({ applying, onApply, onClose, plan }: { readonly plan: Plan; readonly applying: boolean; readonly onApply: () => void; readonly onClose: () => void }) => (
  <Dialog
    actions={<><Button onClick={onClose}>Cancel</Button><Button disabled={applying} kind="primary" onClick={onApply} testId="confirm-apply">{applying ? "Applying…" : `Apply ${plan.actions.length} change(s)`}</Button></>}
    onClose={onClose}
    title="Apply the plan?"
  >
    <p>Each action is one all-or-nothing operation, in dependency order; on a failure the rest stop and a new apply continues from there.</p>
    <ul className="ha-list">{plan.actions.map((action, index) => <li key={index}><Badge tone={actionTone[action.type] ?? "neutral"}>{action.type}</Badge> <code>{action.id}</code> <span className="ha-muted ha-small">{action.reason}</span></li>)}</ul>
    <p className="ha-muted ha-small">The same as <code>host reconcile</code>. The plan is made again when applying; if the panel changed meanwhile, what is applied follows the file, not this list.</p>
  </Dialog>
)

export const DesiredStatePage = () => {
  const desired = useDesiredState()
  const apply = useApply(desired)
  const adopt = useAdoptPreview(desired)
  const { state } = desired
  const data = state.data
  const plan = data?.plan ?? null
  return (
    <>
      <PageHead file={data?.file} onAdopt={() => void adopt.preview()} onApply={() => apply.setConfirming(true)} onReplan={() => state.reload()} plan={plan} />
      {desired.message === undefined ? null : <Notice tone="success"><p data-testid="desired-result">{desired.message}</p></Notice>}
      <ErrorNotice error={desired.error} />
      <ErrorNotice error={state.error} title="The plan could not be made" />
      <FileState data={data} />
      {plan === null ? null : (
        <>
          <PlanSection plan={plan} />
          <DriftSection data={data} />
        </>
      )}
      <TheFile text={data?.text} />
      {apply.confirming && plan !== null ? <ApplyDialog applying={apply.applying} onApply={() => void apply.apply()} onClose={() => apply.setConfirming(false)} plan={plan} /> : null}
      {adopt.adopt === undefined ? null : (
        <Adopt onClose={() => adopt.setAdopt(undefined)} onDone={(text) => { adopt.setAdopt(undefined); desired.setMessage(text); state.reload() }} result={adopt.adopt} />
      )}
    </>
  )
}
