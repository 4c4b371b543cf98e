import { useRef, useState } from "react"
import { describeResult } from "../actions.js"
import { bootstrap, type Preview, upload } from "../api.js"
import { Badge, Button, CapabilityList, ErrorNotice, Icon, Notice, Section, SignatureBadge } from "../ui.js"

// The Install part of the Extensions screen (docs/admin.md): pick or drop a .host (and its detached
// signature), see what it is and brings, then confirm. One hook holds the upload and its preview, one the
// choice of files; the components only draw what those give them.

/** The multipart body both the preview and the install send. */
const formOf = (file: File, sig: File | undefined) => {
  const data = new FormData()
  data.append("archive", file, file.name)
  if (sig !== undefined) data.append("signature", sig, sig.name)
  return data
}

/** Only the version check refuses: the admin may install over the installed version with `--force`. */
const refusedOnlyByVersion = (preview: Preview | undefined) =>
  preview !== undefined && preview.refusal !== null && preview.refusal.check === "version" &&
  preview.checks.filter((check) => !check.ok).length === 1

/** The chosen archive and signature, their preview, and the install of them once confirmed. */
const useUpload = (onInstalled: (message: string) => void) => {
  const [archive, setArchive] = useState<File | undefined>(undefined)
  const [signature, setSignature] = useState<File | undefined>(undefined)
  const [progress, setProgress] = useState<number | undefined>(undefined)
  const [preview, setPreview] = useState<Preview | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [confirming, setConfirming] = useState(false)
  const [force, setForce] = useState(false)

  // The signature is passed in, not read from state: a drop sets both in one go, before a re-render.
  const inspect = async (file: File, sig: File | undefined) => {
    setArchive(file)
    setPreview(undefined)
    setError(undefined)
    setForce(false)
    setProgress(0)
    try {
      setPreview(await upload("preview", { form: formOf(file, sig), onProgress: setProgress }))
    } catch (failure) {
      setError(failure)
    } finally {
      setProgress(undefined)
    }
  }

  const confirm = async () => {
    if (archive === undefined || preview === undefined) return
    setConfirming(true)
    setError(undefined)
    setProgress(0)
    try {
      const result = await upload("install", { query: { force }, form: formOf(archive, signature), onProgress: setProgress })
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

  const cancel = () => {
    setPreview(undefined)
    setArchive(undefined)
  }

  return { archive, signature, setSignature, progress, preview, error, setError, confirming, force, setForce, inspect, confirm, cancel }
}

type Upload = ReturnType<typeof useUpload>

/** Which file goes where: dropped or chosen files are sorted into archive and signature, others refused. */
const useFileChoice = ({ archive, inspect, setError, setSignature, signature }: Upload) => {
  const [signatureError, setSignatureError] = useState<unknown>(undefined)

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

  return { signatureError, chooseSignature, take, takeSignature }
}

type FileChoice = ReturnType<typeof useFileChoice>

/** The drop zone with its two file pickers and the panel's upload policy. */
const DropZone = ({ archive, choice, signature }: { readonly archive: File | undefined; readonly signature: File | undefined; readonly choice: FileChoice }) => {
  const uploads = bootstrap().admin.uploads
  const [dragging, setDragging] = useState(false)
  const archiveInput = useRef<HTMLInputElement>(null)
  return (
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
        choice.take(event.dataTransfer.files)
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
          <input accept=".sig" aria-label="Detached signature (.sig)" data-testid="signature-input" onChange={(event) => choice.takeSignature(event.currentTarget)} type="file" />
        </label>
        {signature === undefined ? null : <Button onClick={() => choice.chooseSignature(undefined)} testId="remove-signature">Remove signature</Button>}
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
        onChange={(event) => choice.take(event.target.files)}
        ref={archiveInput}
        type="file"
      />
    </div>
  )
}

const UploadProgress = ({ name, confirming, progress }: { readonly progress: number; readonly confirming: boolean; readonly name: string | undefined }) => (
  <div className="ha-progress" aria-label="Upload progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(progress * 100)}>
    <span style={{ width: `${Math.round(progress * 100)}%` }} />
    <em>{confirming ? "Installing" : "Uploading"} {name} · {Math.round(progress * 100)}%</em>
  </div>
)

/** What the archive is, whether the checks and the upload policy take it, and what it brings. */
const PreviewSummary = ({ preview }: { readonly preview: Preview }) => (
  <>
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
  </>
)

/** Forcing over a newer installed version when only that refuses, then Cancel or confirm. */
const PreviewActions = ({ preview, state }: { readonly preview: Preview; readonly state: Upload }) => {
  const versionOnly = refusedOnlyByVersion(preview)
  return (
    <>
      {versionOnly ? (
        <label className="ha-check">
          <input checked={state.force} onChange={(event) => state.setForce(event.target.checked)} type="checkbox" />
          <span>Install over the installed version anyway (<code>--force</code>)</span>
        </label>
      ) : null}
      <div className="ha-actions ha-actions--end">
        <Button onClick={state.cancel}>Cancel</Button>
        <Button disabled={state.confirming || !(preview.installable || (versionOnly && state.force))} kind="primary" onClick={() => void state.confirm()} testId="confirm-install">
          {preview.action === "install" ? "Install" : preview.action === "update" ? "Update" : "Install anyway"} {preview.name ?? ""}
        </Button>
      </div>
    </>
  )
}

export const Install = ({ onInstalled }: { readonly onInstalled: (message: string) => void }) => {
  const state = useUpload(onInstalled)
  const choice = useFileChoice(state)
  return (
    <Section id="install-title" title="Install an extension">
      <DropZone archive={state.archive} choice={choice} signature={state.signature} />
      {state.progress === undefined ? null : <UploadProgress confirming={state.confirming} name={state.archive?.name} progress={state.progress} />}
      <ErrorNotice error={choice.signatureError} title="That file was not taken as the signature" />
      <ErrorNotice error={state.error} title={state.confirming ? "Install refused" : "The archive cannot be installed"} />
      {state.preview === undefined ? null : (
        <div className="ha-preview" data-testid="preview">
          <PreviewSummary preview={state.preview} />
          <PreviewActions preview={state.preview} state={state} />
        </div>
      )}
    </Section>
  )
}
