import { useRef, useState } from "react"
import { Link, useSearchParams } from "react-router-dom"
import { describeResult, useOperations } from "../actions.js"
import { bootstrap, type ExtensionHealth, type ExtensionRow, get, type OperationResult, post, type Preview, upload } from "../api.js"
import {
  Badge,
  Button,
  CapabilityList,
  Dialog,
  Empty,
  ErrorNotice,
  HealthBadge,
  Icon,
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
// Install: pick or drop a .host (and its detached signature), see what it is and brings, then confirm.

interface HealthReport {
  readonly extensions: ReadonlyArray<ExtensionHealth>
}

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

const Install = ({ onInstalled }: { readonly onInstalled: (message: string) => void }) => {
  const uploads = bootstrap().admin.uploads
  const [archive, setArchive] = useState<File | undefined>(undefined)
  const [signature, setSignature] = useState<File | undefined>(undefined)
  const [dragging, setDragging] = useState(false)
  const [progress, setProgress] = useState<number | undefined>(undefined)
  const [preview, setPreview] = useState<Preview | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [signatureError, setSignatureError] = useState<unknown>(undefined)
  const [confirming, setConfirming] = useState(false)
  const [force, setForce] = useState(false)
  const archiveInput = useRef<HTMLInputElement>(null)

  // The signature is passed in, not read from state: a drop sets both in one go, before a re-render.
  const form = (file: File, sig: File | undefined) => {
    const data = new FormData()
    data.append("archive", file, file.name)
    if (sig !== undefined) data.append("signature", sig, sig.name)
    return data
  }

  const inspect = async (file: File, sig: File | undefined) => {
    setArchive(file)
    setPreview(undefined)
    setError(undefined)
    setForce(false)
    setProgress(0)
    try {
      setPreview(await upload<Preview>("/extensions/preview", form(file, sig), setProgress))
    } catch (failure) {
      setError(failure)
    } finally {
      setProgress(undefined)
    }
  }

  /** A new signature re-runs the preview of the chosen archive, whose verdict it changes. */
  const chooseSignature = (sig: File | undefined) => {
    setSignatureError(undefined)
    setSignature(sig)
    if (archive !== undefined) void inspect(archive, sig)
  }

  /** Files dropped or chosen as the archive: the `.host` to the archive, the `.sig` to the signature. */
  const take = (files: FileList | null) => {
    const list = [...(files ?? [])]
    const host = list.find((file) => file.name.endsWith(".host"))
    const sig = list.find((file) => file.name.endsWith(".sig"))
    const other = list.find((file) => file !== host && file !== sig)
    if (host !== undefined) {
      if (sig !== undefined) setSignatureError(undefined)
      setSignature(sig ?? signature)
      void inspect(host, sig ?? signature)
    } else if (sig !== undefined) chooseSignature(sig)
    if (other !== undefined) setError(new Error(`${other.name} is neither a .host archive nor a .sig signature; it was left out`))
  }

  /** The signature input takes only a detached signature: a `.host` there is refused, never sent as one. */
  const takeSignature = (input: HTMLInputElement) => {
    const file = input.files?.[0]
    input.value = ""
    if (file === undefined) return
    if (!file.name.endsWith(".sig")) {
      setSignatureError(new Error(
        `${file.name} is not a detached signature (a .sig file)${file.name.endsWith(".host") ? ": choose the archive with “Choose archive…” and its .sig here" : ""}`
      ))
      return
    }
    setSignatureError(undefined)
    chooseSignature(file)
  }

  const confirm = async () => {
    if (archive === undefined || preview === undefined) return
    setConfirming(true)
    setError(undefined)
    setProgress(0)
    try {
      const result = await upload<OperationResult>(`/extensions${force ? "?force=1" : ""}`, form(archive, signature), setProgress)
      setPreview(undefined)
      setArchive(undefined)
      setSignature(undefined)
      onInstalled(describeResult(result))
    } catch (failure) {
      setError(failure)
    } finally {
      setConfirming(false)
      setProgress(undefined)
    }
  }

  const versionOnly = preview !== undefined && preview.refusal !== null && preview.refusal.check === "version" &&
    preview.checks.filter((check) => !check.ok).length === 1

  return (
    <Section id="install-title" title="Install an extension">
      <div
        className={`ha-drop ${dragging ? "ha-drop--active" : ""}`}
        data-testid="dropzone"
        onDragLeave={() => setDragging(false)}
        onDragOver={(event) => {
          event.preventDefault()
          setDragging(true)
        }}
        onDrop={(event) => {
          event.preventDefault()
          setDragging(false)
          take(event.dataTransfer.files)
        }}
      >
        <Icon className="ha-drop__icon" name="archive" />
        <p>
          Drop a <code>.host</code> archive here (with its <code>.sig</code> if it has a detached signature), or
        </p>
        <div className="ha-actions">
          <Button onClick={() => archiveInput.current?.click()} testId="choose-archive">{archive === undefined ? "Choose archive…" : `Archive: ${archive.name}`}</Button>
          <label className="host-button ha-button ha-file" data-testid="signature-button">
            {signature === undefined ? "Add signature (.sig)…" : `Signature: ${signature.name}`}
            <input accept=".sig" aria-label="Detached signature (.sig)" data-testid="signature-input" onChange={(event) => takeSignature(event.currentTarget)} type="file" />
          </label>
          {signature === undefined ? null : <Button onClick={() => chooseSignature(undefined)} testId="remove-signature">Remove signature</Button>}
        </div>
        {uploads === "signed" ? (
          <p className="ha-muted ha-small" data-testid="upload-policy-note">
            This panel accepts only archives signed by a trusted key (<code>admin_uploads: signed</code>).
          </p>
        ) : null}
        <input
          accept=".host,application/gzip,application/x-tar"
          aria-label="Extension archive (.host)"
          className="ha-visually-hidden"
          data-testid="archive-input"
          onChange={(event) => take(event.target.files)}
          ref={archiveInput}
          type="file"
        />
      </div>
      {progress === undefined ? null : (
        <div className="ha-progress" aria-label="Upload progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(progress * 100)}>
          <span style={{ width: `${Math.round(progress * 100)}%` }} />
          <em>{confirming ? "Installing" : "Uploading"} {archive?.name} · {Math.round(progress * 100)}%</em>
        </div>
      )}
      <ErrorNotice error={signatureError} title="That file was not taken as the signature" />
      <ErrorNotice error={error} title={confirming ? "Install refused" : "The archive cannot be installed"} />
      {preview === undefined ? null : (
        <div className="ha-preview" data-testid="preview">
          <div className="ha-preview__head">
            <div>
              <h3>{preview.name ?? preview.archive} <span className="ha-muted">{preview.version}</span></h3>
              <p className="ha-muted"><code>{preview.id ?? "(no id)"}</code> · {preview.archive} · {(preview.bytes / 1024).toFixed(1)} KiB</p>
              {preview.description === null ? null : <p>{preview.description}</p>}
            </div>
            <div className="ha-badges">
              <SignatureBadge status={preview.signature.status} />
              <Badge tone={preview.action === "install" ? "primary" : preview.action === "update" ? "info" : "warning"}>
                {preview.action}{preview.installed === null ? "" : ` (installed ${preview.installed.version})`}
              </Badge>
            </div>
          </div>
          <p className="ha-small" data-testid="upload-policy">
            Upload policy: <code>admin_uploads: {preview.upload_policy.setting}</code>
            {preview.upload_policy.from === "admin_uploads" ? "" : preview.upload_policy.from === "require_signatures" ? " (unset; follows require_signatures)" : " (unset; the default)"}
            {" — "}{preview.upload_policy.ok ? "accepts this archive" : "refuses this archive"}
          </p>
          {preview.refusal === null ? null : (
            <Notice title={`Refused by the ${preview.refusal.check} check`} tone="error">
              <p data-testid="refusal">{preview.refusal.detail}</p>
            </Notice>
          )}
          <ul className="ha-checks">
            {preview.checks.map((check) => (
              <li className={check.ok ? "ha-checks__ok" : "ha-checks__fail"} key={check.check}>
                <span aria-hidden="true">{check.ok ? "✓" : "✕"}</span>
                <strong>{check.check}</strong> <span>{check.detail}</span>
              </li>
            ))}
          </ul>
          {preview.capabilities === null ? null : (
            <>
              <p className="ha-label">It brings</p>
              <CapabilityList capabilities={preview.capabilities} />
            </>
          )}
          {versionOnly ? (
            <label className="ha-check">
              <input checked={force} onChange={(event) => setForce(event.target.checked)} type="checkbox" />
              <span>Install over the installed version anyway (<code>--force</code>)</span>
            </label>
          ) : null}
          <div className="ha-actions ha-actions--end">
            <Button onClick={() => { setPreview(undefined); setArchive(undefined) }}>Cancel</Button>
            <Button disabled={confirming || !(preview.installable || (versionOnly && force))} kind="primary" onClick={() => void confirm()} testId="confirm-install">
              {preview.action === "install" ? "Install" : preview.action === "update" ? "Update" : "Install anyway"} {preview.name ?? ""}
            </Button>
          </div>
        </div>
      )}
    </Section>
  )
}

export const ExtensionsPage = () => {
  const list = useLoad((signal) => get<ReadonlyArray<ExtensionRow>>("/extensions/overview", signal), [])
  const health = useLoad((signal) => get<HealthReport>("/health", signal), [])
  const operations = useOperations(() => {
    list.reload()
    health.reload()
  })
  const [params] = useSearchParams()
  const removed = params.get("removed")
  const [installed, setInstalled] = useState<string | undefined>(removed === null ? undefined : `${removed}: removed`)
  const [confirmUpdateAll, setConfirmUpdateAll] = useState(false)
  const healthOf = new Map((health.data?.extensions ?? []).map((report) => [report.extensionId, report]))
  const rows = list.data ?? []
  const updates = rows.filter((row) => row.updateAvailable !== null)
  return (
    <>
      <div className="ha-page-head">
        <div>
          <h1>Extensions</h1>
          <p className="ha-muted">Installed extensions, their state and health. Every action here is also a <code>host</code> command (docs/admin.md).</p>
        </div>
        <div className="ha-actions">
          {updates.length > 0 ? <Button kind="primary" onClick={() => setConfirmUpdateAll(true)}>Update all ({updates.length})</Button> : null}
          <Button label="Refresh" onClick={() => { list.reload(); health.reload() }}>Refresh</Button>
        </div>
      </div>
      {operations.notice}
      {installed === undefined ? null : <Notice tone="success"><p data-testid="install-result">{installed}</p></Notice>}
      <ErrorNotice error={list.error} title="The extensions could not be listed" />
      <Section id="installed-title" title={`Installed (${rows.length})`}>
        {list.loading && list.data === undefined ? <Spinner /> : rows.length === 0 ? (
          <Empty>No extensions installed yet. {bootstrap().admin.uploads === "off" ? "Install them on the server with host add" : "Install a .host archive below"}, or browse the registry.</Empty>
        ) : (
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
                {rows.map((row) => {
                  const summary = healthSummary(healthOf.get(row.id))
                  return (
                    <tr data-extension={row.id} key={row.id}>
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
                      <td className="ha-row-actions">
                        {row.enabled ? (
                          <Button onClick={() => operations.start({ operation: "disable", id: row.id, name: row.name, version: row.version })} testId={`disable-${row.id}`}>Disable</Button>
                        ) : (
                          <Button onClick={() => operations.start({ operation: "enable", id: row.id, name: row.name, version: row.version })} testId={`enable-${row.id}`}>Enable</Button>
                        )}
                        {row.updateAvailable === null ? null : (
                          <Button kind="primary" onClick={() => operations.start({ operation: "update", id: row.id, name: row.name, version: row.version, target: row.updateAvailable ?? undefined })} testId={`update-${row.id}`}>Update</Button>
                        )}
                        <Button kind="ghost" onClick={() => operations.start({ operation: "remove", id: row.id, name: row.name, version: row.version })} testId={`remove-${row.id}`}>Remove</Button>
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      {bootstrap().admin.uploads === "off" ? (
        <Section id="install-title" title="Install an extension">
          <p data-testid="uploads-off">
            Uploads are off on this panel (<code>admin_uploads: off</code>): an admin session is not shell access, so archives are
            installed on the server — <code>host add &lt;file&gt;</code> or the desired-state file. Every other action stays here.
          </p>
        </Section>
      ) : (
        <Install onInstalled={(message) => { setInstalled(message); list.reload(); health.reload() }} />
      )}
      {operations.dialog}
      {confirmUpdateAll ? <UpdateAll onClose={() => setConfirmUpdateAll(false)} onDone={(message) => { setConfirmUpdateAll(false); setInstalled(message); list.reload() }} updates={updates} /> : null}
    </>
  )
}

const UpdateAll = ({ onClose, onDone, updates }: { readonly updates: ReadonlyArray<ExtensionRow>; readonly onClose: () => void; readonly onDone: (message: string) => void }) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const run = async () => {
    setBusy(true)
    try {
      const outcomes = await post<ReadonlyArray<OperationResult & { error?: string }>>("/updates", {})
      onDone(outcomes.map((outcome) => (outcome.error !== undefined ? `${outcome.id}: failed: ${outcome.error}` : describeResult(outcome))).join("; "))
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
