import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react"
import { Icon } from "../panel-app/ui.js"
import { ApiError, type Capabilities, type CapabilityDiff, messageOf, type Source } from "./api.js"

// The admin screens' building blocks: loading state, errors shown in place, badges, dialogs and the
// capability lists. Colours come from the panel's `--host-*` theme (admin.css).

export { Icon }

export interface Loaded<T> {
  readonly data: T | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

/** Runs `load` on mount and whenever `deps` change (or `reload` is called); aborts on unmount. */
export const useLoad = <T,>(load: (signal: AbortSignal) => Promise<T>, deps: ReadonlyArray<unknown>): Loaded<T> => {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    const controller = new AbortController()
    setState((previous) => ({ ...previous, loading: true }))
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: undefined, loading: false })
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setState((previous) => ({ data: previous.data, error, loading: false }))
      }
    )
    return () => controller.abort()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick])
  const reload = useCallback(() => setTick((value) => value + 1), [])
  return { ...state, reload }
}

/** An API failure, said in words where it happened. */
export const ErrorNotice = ({ error, title }: { readonly error: unknown; readonly title?: string }) => {
  if (error === undefined || error === null) return null
  const entries = error instanceof ApiError ? error.errors : [{ code: "Error", detail: messageOf(error) }]
  return (
    <div className="ha-notice ha-notice--error" role="alert">
      <Icon className="ha-notice__icon" name="shield" />
      <div>
        {title === undefined ? null : <p className="ha-notice__title">{title}</p>}
        {entries.map((entry, index) => (
          <p key={index}>
            {entry.detail}
            {entry.code === "Error" || entry.code === "HttpError" ? null : <span className="ha-code">{entry.code}</span>}
          </p>
        ))}
      </div>
    </div>
  )
}

export const Notice = ({ children, tone = "info", title }: { readonly children: ReactNode; readonly tone?: "info" | "warning" | "success" | "error"; readonly title?: ReactNode }) => (
  <div className={`ha-notice ha-notice--${tone}`} role={tone === "error" ? "alert" : "status"}>
    <div>
      {title === undefined ? null : <p className="ha-notice__title">{title}</p>}
      {children}
    </div>
  </div>
)

export type Tone = "neutral" | "success" | "warning" | "danger" | "info" | "primary"

export const Badge = ({ children, tone = "neutral", title }: { readonly children: ReactNode; readonly tone?: Tone; readonly title?: string }) => (
  <span className={`ha-badge ha-badge--${tone}`} title={title}>
    {children}
  </span>
)

const statusTone: Readonly<Record<string, Tone>> = { enabled: "success", disabled: "neutral", quarantined: "danger", corrupt: "danger" }
export const StatusBadge = ({ status }: { readonly status: string }) => (
  <Badge tone={statusTone[status] ?? "neutral"}>
    <span className="ha-dot" aria-hidden="true" />
    {status}
  </Badge>
)

const signatureTone: Readonly<Record<string, Tone>> = { signed: "success", untrusted: "warning", unsigned: "neutral", invalid: "danger", modified: "danger" }
const signatureTitle: Readonly<Record<string, string>> = {
  signed: "Signed by a trusted key",
  untrusted: "A valid signature by a key this panel does not trust",
  unsigned: "No signature",
  invalid: "The signature does not verify",
  modified: "Files differ from checksums.json"
}
export const SignatureBadge = ({ status }: { readonly status: string }) => (
  <Badge title={signatureTitle[status] ?? status} tone={signatureTone[status] ?? "neutral"}>
    <Icon className="ha-badge__icon" name={status === "signed" ? "shield" : "lock"} />
    {status}
  </Badge>
)

const healthTone: Readonly<Record<string, Tone>> = { ok: "success", warning: "warning", error: "danger", unknown: "neutral" }
export const HealthBadge = ({ status }: { readonly status: string }) => <Badge tone={healthTone[status] ?? "neutral"}>{status}</Badge>

export const Button = ({
  children,
  disabled = false,
  kind = "default",
  onClick,
  type = "button",
  testId,
  label
}: {
  readonly children: ReactNode
  readonly disabled?: boolean
  readonly kind?: "default" | "primary" | "danger" | "success" | "ghost"
  readonly onClick?: () => void
  readonly type?: "button" | "submit"
  readonly testId?: string
  readonly label?: string
}) => (
  <button
    aria-label={label}
    className={`host-button ha-button ${kind === "default" ? "" : kind === "ghost" ? "ha-button--ghost" : `host-button--${kind}`}`}
    data-testid={testId}
    disabled={disabled}
    onClick={onClick}
    type={type}
  >
    {children}
  </button>
)

export const Spinner = ({ label = "Loading…" }: { readonly label?: string }) => (
  <div className="ha-spinner" role="status">
    <span className="ha-spinner__wheel" aria-hidden="true" />
    {label}
  </div>
)

/** A modal dialog (the browser's own <dialog>: focus stays inside, Escape closes it). */
export const Dialog = ({
  actions,
  children,
  onClose,
  title,
  wide = false
}: {
  readonly title: ReactNode
  readonly children: ReactNode
  readonly actions: ReactNode
  readonly onClose: () => void
  readonly wide?: boolean
}) => {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (!dialog.open) dialog.showModal()
    const cancel = (event: Event) => {
      event.preventDefault()
      onClose()
    }
    dialog.addEventListener("cancel", cancel)
    return () => dialog.removeEventListener("cancel", cancel)
  }, [onClose])
  return (
    <dialog aria-labelledby={titleId} className={`ha-dialog ${wide ? "ha-dialog--wide" : ""}`} ref={ref}>
      <header className="ha-dialog__header">
        <h2 id={titleId}>{title}</h2>
        <button aria-label="Close" className="host-icon-button" onClick={onClose} type="button">
          ×
        </button>
      </header>
      <div className="ha-dialog__body">{children}</div>
      <footer className="ha-dialog__footer">{actions}</footer>
    </dialog>
  )
}

export const Section = ({ actions, children, title, id }: { readonly title: ReactNode; readonly children: ReactNode; readonly actions?: ReactNode; readonly id?: string }) => (
  <section className="host-card ha-section" aria-labelledby={id}>
    <header className="ha-section__header">
      <h2 id={id}>{title}</h2>
      {actions === undefined ? null : <div className="ha-actions">{actions}</div>}
    </header>
    <div className="ha-section__body">{children}</div>
  </section>
)

export const Empty = ({ children }: { readonly children: ReactNode }) => <p className="ha-empty">{children}</p>

const capabilityLabels: Readonly<Record<string, string>> = {
  permissions: "Permissions",
  routes: "Routes",
  slots: "Slots",
  migrations: "Migrations",
  schedules: "Schedules",
  settings: "Settings"
}

/** A capability list (what an archive brings) or diff (what a plan action changes). */
export const CapabilityList = ({ capabilities }: { readonly capabilities: Capabilities }) => {
  const lists = capabilities as unknown as Readonly<Record<string, ReadonlyArray<string> | undefined>>
  const kinds = Object.keys(capabilityLabels).filter((kind) => (lists[kind] ?? []).length > 0)
  if (kinds.length === 0) return <Empty>No permissions, routes, slots, migrations, schedules or settings.</Empty>
  return (
    <dl className="ha-caps">
      {kinds.map((kind) => (
        <div className="ha-caps__row" key={kind}>
          <dt>{capabilityLabels[kind]}</dt>
          <dd>
            {(lists[kind] ?? []).map((item) => (
              <code className="ha-chip" key={item}>
                {item}
              </code>
            ))}
          </dd>
        </div>
      ))}
    </dl>
  )
}

export const CapabilityDiffView = ({ diff }: { readonly diff: CapabilityDiff }) => {
  const kinds = (Object.keys(capabilityLabels) as ReadonlyArray<keyof CapabilityDiff>).filter((kind) => (diff[kind]?.added.length ?? 0) + (diff[kind]?.removed.length ?? 0) > 0)
  if (kinds.length === 0) return <p className="ha-muted">No capability changes.</p>
  return (
    <dl className="ha-caps" data-testid="capability-diff">
      {kinds.map((kind) => (
        <div className="ha-caps__row" key={kind}>
          <dt>{capabilityLabels[kind]}</dt>
          <dd>
            {diff[kind]!.added.map((item) => (
              <code className="ha-chip ha-chip--added" key={`+${item}`}>
                + {item}
              </code>
            ))}
            {diff[kind]!.removed.map((item) => (
              <code className="ha-chip ha-chip--removed" key={`-${item}`}>
                − {item}
              </code>
            ))}
          </dd>
        </div>
      ))}
    </dl>
  )
}

/** A unified diff with added and removed lines coloured. */
export const DiffView = ({ diff }: { readonly diff: string }) => (
  <pre className="ha-diff" data-testid="diff">
    {diff.split("\n").map((line, index) => (
      <span
        className={line.startsWith("+++") || line.startsWith("---") ? "ha-diff__file" : line.startsWith("+") ? "ha-diff__add" : line.startsWith("-") ? "ha-diff__remove" : line.startsWith("@@") ? "ha-diff__hunk" : ""}
        key={index}
      >
        {line}
        {"\n"}
      </span>
    ))}
  </pre>
)

export const formatTime = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined || iso === "") return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

export const relativeTime = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000)
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" })
  const abs = Math.abs(seconds)
  if (abs < 60) return format.format(seconds, "second")
  if (abs < 3600) return format.format(Math.round(seconds / 60), "minute")
  if (abs < 86400) return format.format(Math.round(seconds / 3600), "hour")
  return format.format(Math.round(seconds / 86400), "day")
}

/** Where an installed extension came from, short: a registry source names its registry (docs/registry.md "Several registries"). */
export const sourceText = (source: Source) =>
  source.type === "registry"
    ? source.registry === undefined ? "registry" : `registry · ${source.registry}`
    : `${source.type} · ${source.ref.split("/").slice(-2).join("/")}`
