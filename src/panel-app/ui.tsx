import { type ReactNode, type RefObject, useEffect, useId, useRef, useState } from "react"
import { Slot } from "./Slot.js"

// Small building blocks of the panel's look: icons, cards, badges, menus. Colours come from the
// `--host-*` theme variables through the utility sheet's `host-*` colours (docs/frontend.md).

const paths: Readonly<Record<string, ReactNode>> = {
  server: <><rect x="3" y="4" width="18" height="7" rx="2" /><rect x="3" y="13" width="18" height="7" rx="2" /><path d="M7 7.5h.01M7 16.5h.01" /></>,
  user: <><circle cx="12" cy="8" r="4" /><path d="M4 21c1.5-4 4.5-6 8-6s6.5 2 8 6" /></>,
  shield: <path d="M12 3l8 3v6c0 4.5-3.4 8.2-8 9-4.6-.8-8-4.5-8-9V6z" />,
  logout: <><path d="M15 4h3a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2h-3" /><path d="M10 17l-5-5 5-5M5 12h11" /></>,
  terminal: <><rect x="3" y="4" width="18" height="16" rx="2" /><path d="M7 9l3 3-3 3M12 15h5" /></>,
  folder: <path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" />,
  file: <><path d="M6 3h8l4 4v14H6z" /><path d="M14 3v4h4" /></>,
  database: <><ellipse cx="12" cy="6" rx="7" ry="3" /><path d="M5 6v12c0 1.7 3.1 3 7 3s7-1.3 7-3V6M5 12c0 1.7 3.1 3 7 3s7-1.3 7-3" /></>,
  clock: <><circle cx="12" cy="12" r="9" /><path d="M12 7v5l3 2" /></>,
  users: <><circle cx="9" cy="8" r="3.5" /><path d="M2.5 20c1-3.5 3.5-5 6.5-5s5.5 1.5 6.5 5" /><path d="M16 4.5a3.5 3.5 0 0 1 0 7M18 15c2 .6 3 2.2 3.5 5" /></>,
  archive: <><rect x="3" y="4" width="18" height="5" rx="1" /><path d="M5 9v10h14V9M10 13h4" /></>,
  network: <><circle cx="12" cy="12" r="9" /><path d="M3 12h18M12 3c2.5 2.5 3.5 5.5 3.5 9s-1 6.5-3.5 9c-2.5-2.5-3.5-5.5-3.5-9s1-6.5 3.5-9" /></>,
  play: <path d="M7 4l13 8-13 8z" />,
  settings: <><circle cx="12" cy="12" r="3" /><path d="M12 2v3M12 19v3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M2 12h3M19 12h3M4.9 19.1L7 17M17 7l2.1-2.1" /></>,
  key: <><circle cx="8" cy="15" r="4" /><path d="M11 12l9-9M17 6l3 3M15 8l2 2" /></>,
  lock: <><rect x="5" y="11" width="14" height="10" rx="2" /><path d="M8 11V7a4 4 0 0 1 8 0v4" /></>,
  dots: <><circle cx="5" cy="12" r="1" /><circle cx="12" cy="12" r="1" /><circle cx="19" cy="12" r="1" /></>,
  cpu: <><rect x="6" y="6" width="12" height="12" rx="2" /><path d="M9 2v4M15 2v4M9 18v4M15 18v4M2 9h4M2 15h4M18 9h4M18 15h4" /></>,
  memory: <><rect x="3" y="7" width="18" height="10" rx="1" /><path d="M7 7v10M11 7v10M15 7v10M7 17v3M17 17v3" /></>,
  disk: <><circle cx="12" cy="12" r="9" /><circle cx="12" cy="12" r="2" /></>,
  arrow: <path d="M9 6l6 6-6 6" />,
  back: <path d="M15 6l-6 6 6 6" />
}

export const Icon = ({ className = "h-4 w-4", name }: { readonly name: string; readonly className?: string }) => (
  <svg
    aria-hidden="true"
    className={className}
    fill="none"
    stroke="currentColor"
    strokeLinecap="round"
    strokeLinejoin="round"
    strokeWidth={1.8}
    viewBox="0 0 24 24"
  >
    {paths[name] ?? paths.file}
  </svg>
)

export const Card = ({ children, className = "", title, actions }: {
  readonly children: ReactNode
  readonly className?: string
  readonly title?: ReactNode
  readonly actions?: ReactNode
}) => (
  <section className={`host-card ${className}`}>
    {title === undefined && actions === undefined ? null : (
      <header className="flex flex-wrap items-center justify-between gap-3 border-b border-host-border px-4 py-3">
        <h2 className="text-sm font-semibold text-host-text-primary">{title}</h2>
        {actions === undefined ? null : <div className="flex flex-wrap items-center gap-2">{actions}</div>}
      </header>
    )}
    {children}
  </section>
)

/** The label every page with made-up content carries. */
export const DemoBadge = () => (
  <span className="host-demo" title="The reference panel is a demo: this page's content is sample data">Demo content</span>
)

export const PageTitle = ({ children, description, icon }: { readonly children: ReactNode; readonly description?: ReactNode; readonly icon?: string }) => (
  <div className="mb-4 flex flex-wrap items-end justify-between gap-2">
    <div className="min-w-0">
      <h1 className="flex items-center gap-2 text-lg font-semibold text-host-text-primary">
        {icon === undefined ? null : <Icon className="h-5 w-5 text-host-primary-light" name={icon} />}
        {children}
      </h1>
      {description === undefined ? null : <p className="mt-1 text-sm text-host-text-muted">{description}</p>}
    </div>
    <DemoBadge />
  </div>
)

export const StatusDot = ({ status }: { readonly status: "running" | "starting" | "offline" }) => (
  <span className={`host-status host-status--${status}`}>
    <span className="host-status__dot" />
    {status === "running" ? "Running" : status === "starting" ? "Starting" : "Offline"}
  </span>
)

export const UsageBar = ({ label, limit, text, used }: { readonly label: string; readonly used: number; readonly limit: number; readonly text: string }) => {
  const percent = limit === 0 ? 0 : Math.min(100, Math.round((used / limit) * 100))
  const tone = percent > 85 ? "bg-host-danger" : percent > 65 ? "bg-host-warning" : "bg-host-primary"
  return (
    <div className="min-w-0">
      <div className="flex flex-col text-xs sm:flex-row sm:items-baseline sm:justify-between sm:gap-2">
        <span className="text-host-text-muted">{label}</span>
        <span className="truncate font-medium text-host-text-secondary">{text}</span>
      </div>
      <div className="mt-1 h-1.5 overflow-hidden rounded-full bg-host-bg-tertiary">
        <div className={`h-full rounded-full ${tone}`} style={{ width: `${percent}%` }} />
      </div>
    </div>
  )
}

/**
 * Closes an open menu on a click outside `root` or on Escape (then `onEscape`, e.g. to give focus back).
 * One behaviour for every menu of the panel.
 */
export const useDismiss = (
  open: boolean,
  root: RefObject<HTMLElement>,
  close: () => void,
  onEscape: () => void = () => undefined
) => {
  useEffect(() => {
    if (!open) return
    const dismiss = (event: Event) => {
      if (event instanceof KeyboardEvent) {
        if (event.key !== "Escape") return
        onEscape()
        close()
      } else if (!root.current?.contains(event.target as Node)) {
        close()
      }
    }
    document.addEventListener("mousedown", dismiss)
    document.addEventListener("keydown", dismiss)
    return () => {
      document.removeEventListener("mousedown", dismiss)
      document.removeEventListener("keydown", dismiss)
    }
  }, [open])
}

/**
 * A row's "more" menu. Its items — and the row's dropdown slot — are always in the DOM, hidden until
 * the button opens the menu, so extensions' entries exist before the first click (docs/frontend.md).
 */
export const RowMenu = ({ children, context, label, slot }: {
  readonly label: string
  readonly slot: string
  readonly context: Readonly<Record<string, unknown>>
  readonly children: ReactNode
}) => {
  const [open, setOpen] = useState(false)
  const menuId = useId()
  const root = useRef<HTMLDivElement>(null)
  const button = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    // Keyboard users land on the first entry; Escape brings them back to the button.
    if (open) root.current?.querySelector<HTMLElement>("[role=menu] button, [role=menu] a")?.focus()
  }, [open])
  useDismiss(open, root, () => setOpen(false), () => button.current?.focus())
  return (
    <div className="relative" ref={root}>
      <button
        aria-controls={menuId}
        aria-expanded={open}
        aria-haspopup="menu"
        aria-label={label}
        className="host-icon-button"
        onClick={() => setOpen((value) => !value)}
        ref={button}
        type="button"
      >
        <Icon name="dots" />
      </button>
      <div className="host-menu" hidden={!open} id={menuId} role="menu">
        {children}
        <Slot context={context} id={slot} />
      </div>
    </div>
  )
}

export const MenuItem = ({ children, danger = false }: { readonly children: ReactNode; readonly danger?: boolean }) => (
  <button className={`host-menu__item${danger ? " host-menu__item--danger" : ""}`} role="menuitem" type="button">
    {children}
  </button>
)
