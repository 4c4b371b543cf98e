// The panel's theme variables (docs/frontend.md "Theme"): the `--host-*` custom properties extensions
// style with, and the defaults used where the panel leaves one undefined. One list for the server (the
// `/api/client/host/config` body) and the bridge.

export const themeVariableNames = [
  "primary", "primary-light", "primary-dark", "secondary", "success", "danger", "warning", "info",
  "bg-primary", "bg-secondary", "bg-tertiary", "text-primary", "text-secondary", "text-muted", "border",
  "radius-sm", "radius-md", "radius-lg", "font-sans", "font-mono"
] as const

export const themeDefaults: Readonly<Record<`--host-${typeof themeVariableNames[number]}`, string>> = {
  "--host-primary": "#3b82f6",
  "--host-primary-light": "#60a5fa",
  "--host-primary-dark": "#2563eb",
  "--host-secondary": "#64748b",
  "--host-success": "#22c55e",
  "--host-danger": "#ef4444",
  "--host-warning": "#f59e0b",
  "--host-info": "#0ea5e9",
  "--host-bg-primary": "#0f172a",
  "--host-bg-secondary": "#1e293b",
  "--host-bg-tertiary": "#334155",
  "--host-text-primary": "#f8fafc",
  "--host-text-secondary": "#cbd5e1",
  "--host-text-muted": "#94a3b8",
  "--host-border": "#334155",
  "--host-radius-sm": "4px",
  "--host-radius-md": "8px",
  "--host-radius-lg": "12px",
  "--host-font-sans": "ui-sans-serif, system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif",
  "--host-font-mono": "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
}
