import { createHash } from "node:crypto"
import { isolationClass, routeGroups } from "../domain/Manifest.js"
import { slotIds } from "../domain/Slots.js"
import { routeUrl } from "./Routes.js"
import type { Generation, LoadedExtension } from "./Runtime.js"
import { servedSlot, slotMap } from "./Slots.js"

// The bodies of the read-only client endpoints (docs/http.md), computed once per runtime generation:
// they depend on nothing but the generation and the configuration, so a request only picks the bytes.

export interface PrecomputedBody {
  readonly bytes: Buffer
  /** A strong ETag of the bytes (quoted). */
  readonly etag: string
}

export interface ClientBodies {
  readonly slots: PrecomputedBody
  readonly extensions: PrecomputedBody
  readonly config: PrecomputedBody
}

/** The `--host-*` theme variables the panel starts with (theme extensions override them in CSS). */
export const defaultTheme = {
  name: "default",
  variables: {
    "--host-primary": "#3b82f6",
    "--host-primary-hover": "#2563eb",
    "--host-bg-primary": "#0f172a",
    "--host-bg-secondary": "#1e293b",
    "--host-bg-tertiary": "#334155",
    "--host-text-primary": "#f8fafc",
    "--host-text-secondary": "#cbd5e1",
    "--host-text-muted": "#94a3b8",
    "--host-border-primary": "#334155",
    "--host-border-secondary": "#475569",
    "--host-success": "#22c55e",
    "--host-warning": "#f59e0b",
    "--host-danger": "#ef4444",
    "--host-radius-sm": "4px",
    "--host-radius-md": "8px",
    "--host-radius-lg": "12px",
    "--host-font-sans": "ui-sans-serif, system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif",
    "--host-font-mono": "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
  }
} as const

export const precompute = (value: unknown): PrecomputedBody => {
  const bytes = Buffer.from(JSON.stringify(value))
  return { bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` }
}

const assetUrl = (extension: LoadedExtension, file: string | undefined) => {
  if (file === undefined) return null
  const version = createHash("sha256").update(`${extension.record.version}|${extension.record.updatedAt}`).digest("hex").slice(0, 12)
  return `/host/ext/${extension.id}/${file.split("/").map(encodeURIComponent).join("/")}?v=${version}`
}

/** One entry of `/api/client/host/extensions`. */
export const extensionMetadata = (extension: LoadedExtension) => ({
  id: extension.id,
  name: extension.manifest.document.name,
  version: extension.manifest.version,
  description: extension.manifest.document.description,
  bundle: assetUrl(extension, extension.layout.bundle),
  styles: assetUrl(extension, extension.layout.styles),
  cssIsolation: extension.cssIsolation
    ? { mode: "root-class" as const, class: isolationClass(extension.manifest.document) }
    : null,
  slots: extension.slots.map((entry) => ({ slot: entry.slot, ...servedSlot(entry) })),
  routes: routeGroups.flatMap((group) =>
    (extension.routes[group] ?? []).map((route) => ({
      group,
      method: route.method,
      path: route.path,
      url: routeUrl(group, extension.id, route.path),
      permission: route.permission ?? null
    }))
  )
})

export interface ClientConfigInput {
  readonly version: string
  readonly baseUrl: string
}

export const clientBodies = (generation: Generation, input: ClientConfigInput): ClientBodies => {
  const extensions = [...generation.extensions.values()].sort((a, b) => a.id.localeCompare(b.id)).map(extensionMetadata)
  const slots = slotMap([...generation.extensions.values()].flatMap((extension) => extension.slots))
  return {
    slots: precompute({ data: slots }),
    extensions: precompute({ data: extensions }),
    config: precompute({
      data: {
        version: input.version,
        baseUrl: input.baseUrl,
        generation: generation.number,
        slots: slotIds,
        theme: defaultTheme,
        extensions
      }
    })
  }
}
