import { type FormEvent, useEffect, useState } from "react"
import { api, ApiError, extensionPath, type SettingField, type SettingsForm, type SettingValue } from "../api.js"
import { Badge, Button, Empty, ErrorNotice, Notice } from "../ui.js"

// The settings form, rendered from the extension's normalized settings schema (docs/admin.md): every
// type and input kind, label, help, placeholder, default, required and options. Secrets are never sent
// to the browser; an empty secret field keeps the stored value. The API validates the save and each
// refused field shows its own message.

type Draft = Readonly<Record<string, string | boolean>>

const draftValue = (field: SettingField, value: SettingValue): string | boolean => {
  if (field.type === "boolean") return value === true
  if (field.input === "password") return ""
  return value === null ? "" : String(value)
}

/** The draft as the API takes it: numbers as numbers (or the text as typed, so the API can say why not). */
const toValue = (field: SettingField, value: string | boolean): unknown => {
  if (field.type === "boolean") return value === true
  const text = String(value)
  if (field.type === "number") return text.trim() === "" ? null : Number.isFinite(Number(text)) ? Number(text) : text
  if (field.type === "select") {
    const option = field.options.find((candidate) => String(candidate.value) === text)
    return option === undefined ? (text === "" ? null : text) : option.value
  }
  return text
}

const inputType = (field: SettingField): string =>
  field.type === "number" && field.input === "number" ? "number" : ["email", "url", "tel", "password", "color"].includes(field.input) ? field.input : "text"

const FieldInput = ({ disabled, field, id, invalid, onChange, secretSet, value }: {
  readonly field: SettingField
  readonly id: string
  readonly value: string | boolean
  readonly invalid: boolean
  readonly secretSet: boolean
  readonly disabled: boolean
  readonly onChange: (value: string | boolean) => void
}) => {
  const common = {
    "aria-describedby": `${id}-help ${id}-error`,
    "aria-invalid": invalid,
    "aria-required": field.required,
    className: `host-input ha-input ${invalid ? "ha-input--invalid" : ""}`,
    "data-setting": field.key,
    disabled,
    id,
    name: field.key
  }
  if (field.type === "boolean") {
    return (
      <label className="ha-switch">
        <input {...common} checked={value === true} className="ha-switch__input" onChange={(event) => onChange(event.target.checked)} type="checkbox" />
        <span className="ha-switch__track" aria-hidden="true" />
        <span>{value === true ? "On" : "Off"}</span>
      </label>
    )
  }
  if (field.type === "select") {
    return (
      <select {...common} onChange={(event) => onChange(event.target.value)} value={String(value)}>
        {field.required && field.default !== null ? null : <option value="">— none —</option>}
        {field.options.map((option) => <option key={String(option.value)} value={String(option.value)}>{option.label}</option>)}
      </select>
    )
  }
  if (field.input === "textarea") {
    return <textarea {...common} onChange={(event) => onChange(event.target.value)} placeholder={field.placeholder ?? undefined} rows={4} value={String(value)} />
  }
  if (field.input === "color") {
    return (
      <div className="ha-color">
        <input aria-label={`${field.label} picker`} disabled={disabled} onChange={(event) => onChange(event.target.value)} type="color" value={/^#[0-9a-f]{6}$/i.test(String(value)) ? String(value) : "#000000"} />
        <input {...common} onChange={(event) => onChange(event.target.value)} placeholder={field.placeholder ?? "#rrggbb"} type="text" value={String(value)} />
      </div>
    )
  }
  return (
    <input
      {...common}
      autoComplete={field.input === "password" ? "new-password" : "off"}
      onChange={(event) => onChange(event.target.value)}
      placeholder={field.input === "password" && secretSet ? "•••••••• stored — type to replace" : field.placeholder ?? undefined}
      type={inputType(field)}
      value={String(value)}
    />
  )
}

/** The form's edits: the draft, which fields were typed in and which reset to their default. */
const useDraft = (form: SettingsForm) => {
  const initial = (): Draft => Object.fromEntries(form.fields.map((field) => [field.key, draftValue(field, form.values[field.key] ?? null)]))
  const [draft, setDraft] = useState<Draft>(initial)
  const [dirty, setDirty] = useState<ReadonlySet<string>>(new Set())
  const [cleared, setCleared] = useState<ReadonlySet<string>>(new Set())
  const discard = () => {
    setDraft(initial())
    setDirty(new Set())
    setCleared(new Set())
  }
  // A saved (or reloaded) form is the new starting point.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(discard, [form])

  const change = (key: string, value: string | boolean) => {
    setDraft((previous) => ({ ...previous, [key]: value }))
    setDirty((previous) => new Set([...previous, key]))
    setCleared((previous) => new Set([...previous].filter((item) => item !== key)))
  }
  const reset = (field: SettingField) => {
    setDraft((previous) => ({ ...previous, [field.key]: draftValue(field, field.default) }))
    setCleared((previous) => new Set([...previous, field.key]))
    setDirty((previous) => new Set([...previous].filter((item) => item !== field.key)))
  }
  /** What a save sends: a reset field as null, an edited one as its value. */
  const changes = (): Record<string, unknown> => {
    const values: Record<string, unknown> = {}
    for (const field of form.fields) {
      if (cleared.has(field.key)) values[field.key] = null
      else if (dirty.has(field.key)) {
        // An untouched secret is never sent; an emptied one is not either (empty keeps the stored value).
        if (field.input === "password" && draft[field.key] === "") continue
        values[field.key] = toValue(field, draft[field.key]!)
      }
    }
    return values
  }
  return { draft, dirty, cleared, change, reset, discard, changes }
}

/** The save: the API's verdict, each refused field's message by its key, and whether the last save went through. */
const useSave = (extensionId: string, onSaved: (form: SettingsForm) => void) => {
  const [fieldErrors, setFieldErrors] = useState<Readonly<Record<string, string>>>({})
  const [error, setError] = useState<unknown>(undefined)
  const [saved, setSaved] = useState(false)
  const [busy, setBusy] = useState(false)
  const save = async (values: Record<string, unknown>) => {
    if (Object.keys(values).length === 0) {
      setError(new Error("Nothing changed."))
      return
    }
    setBusy(true)
    setError(undefined)
    setFieldErrors({})
    try {
      const next = await api("writeSettings", { path: extensionPath(extensionId), body: values })
      setSaved(true)
      onSaved(next)
    } catch (failure) {
      if (failure instanceof ApiError && Object.keys(failure.fieldErrors()).length > 0) {
        setFieldErrors(failure.fieldErrors())
        const general = failure.errors.filter((entry) => !(entry.source?.pointer ?? "").startsWith("/settings/"))
        setError(general.length > 0 ? new ApiError(failure.status, general) : new Error(`${Object.keys(failure.fieldErrors()).length} field(s) need attention; nothing was saved.`))
      } else {
        setError(failure)
      }
    } finally {
      setBusy(false)
    }
  }
  const clearErrors = () => {
    setFieldErrors({})
    setError(undefined)
  }
  return { fieldErrors, error, saved, setSaved, busy, save, clearErrors }
}

/** One setting: its label and badges, its input, help and default, and the API's message for it. */
const FieldRow = ({ busy, field, form, managed, message, onChange, onReset, value }: {
  readonly field: SettingField
  readonly form: SettingsForm
  readonly value: string | boolean
  readonly message: string | undefined
  readonly managed: boolean
  readonly busy: boolean
  readonly onChange: (value: string | boolean) => void
  readonly onReset: () => void
}) => {
  const id = `setting-${field.key}`
  return (
    <div className={`ha-field ${message === undefined ? "" : "ha-field--invalid"}`} data-field={field.key}>
      <div className="ha-field__label">
        <label htmlFor={id}>
          {field.label}
          {field.required ? <span aria-label="required" className="ha-required"> *</span> : null}
        </label>
        <code className="ha-small ha-muted">{field.key}</code>
        {field.public ? <Badge title="Served to the panel's pages by the public settings endpoint">public</Badge> : null}
        {field.input === "password" ? <Badge tone="warning" title="Never shown again once saved">secret{form.secrets[field.key] === true ? " · set" : ""}</Badge> : null}
        {managed ? <Badge tone="info" title="Set by the desired-state file">desired state</Badge> : null}
      </div>
      <FieldInput disabled={busy} field={field} id={id} invalid={message !== undefined} onChange={onChange} secretSet={form.secrets[field.key] === true} value={value} />
      <p className="ha-help" id={`${id}-help`}>
        {field.help}
        {field.default === null ? null : <span className="ha-muted"> Default: <code>{String(field.default)}</code>.</span>}
        {managed ? <span className="ha-muted"> The desired-state file sets this; a change here shows as drift until the file is applied again or adopted.</span> : null}
        {field.default !== null && field.input !== "password" ? (
          <button className="ha-linkbutton" onClick={onReset} type="button">Reset to default</button>
        ) : null}
      </p>
      <p aria-live="polite" className="ha-field__error" data-testid={`error-${field.key}`} id={`${id}-error`}>{message ?? ""}</p>
    </div>
  )
}

const ManagedNotice = ({ keys }: { readonly keys: ReadonlyArray<string> }) =>
  keys.length > 0 ? (
    <Notice tone="warning" title="Managed by the desired-state file">
      <p>{keys.join(", ")} {keys.length === 1 ? "is" : "are"} set by the desired-state file: after saving, the Desired state screen shows this as drift (apply the file to undo it, or adopt to keep it).</p>
    </Notice>
  ) : null

export const SettingsFormView = ({ extensionId, form, onSaved }: { readonly extensionId: string; readonly form: SettingsForm; readonly onSaved: (form: SettingsForm) => void }) => {
  const edits = useDraft(form)
  const saving = useSave(extensionId, onSaved)

  if (form.fields.length === 0) return <Empty>This extension has no settings.</Empty>

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void saving.save(edits.changes())
  }
  const managed = new Set(form.managed)
  return (
    <form className="ha-form" data-testid="settings-form" noValidate onSubmit={submit}>
      {form.description === null ? null : <p className="ha-muted">{form.description}</p>}
      {form.fields.map((field) => (
        <FieldRow
          busy={saving.busy}
          field={field}
          form={form}
          key={field.key}
          managed={managed.has(field.key)}
          message={saving.fieldErrors[field.key]}
          onChange={(value) => { edits.change(field.key, value); saving.setSaved(false) }}
          onReset={() => { edits.reset(field); saving.setSaved(false) }}
          value={edits.draft[field.key] ?? ""}
        />
      ))}
      <ManagedNotice keys={[...edits.dirty, ...edits.cleared].filter((key) => managed.has(key))} />
      <ErrorNotice error={saving.error} title="Not saved" />
      {saving.saved ? <Notice tone="success"><p data-testid="settings-saved">Settings saved.</p></Notice> : null}
      <div className="ha-actions ha-actions--end">
        <Button disabled={saving.busy} onClick={() => { edits.discard(); saving.clearErrors() }}>Discard changes</Button>
        <Button disabled={saving.busy} kind="primary" testId="save-settings" type="submit">{saving.busy ? "Saving…" : "Save settings"}</Button>
      </div>
    </form>
  )
}
