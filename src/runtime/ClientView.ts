import { isolationClass, routeGroups } from "../domain/Manifest.js"
import { slotIds } from "../domain/Slots.js"
import { themeDefaults } from "../domain/Theme.js"
import { routeUrl } from "./Routes.js"
import type { Generation, LoadedExtension } from "./Runtime.js"
import { servedSlot, slotMap } from "./Slots.js"
import { contentETag, sha256Hex } from "../system/Hash.js"

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

/** The `--host-*` theme variables with their defaults (the panel's CSS and extension themes override them). */
export const defaultTheme = { name: "default", variables: themeDefaults } as const

export const precompute = (value: unknown): PrecomputedBody => {
  const bytes = Buffer.from(JSON.stringify(value))
  return { bytes, etag: contentETag(bytes) }
}

/** The `?v=` of an extension's asset URLs: changes with every install, update or relink of it. */
export const assetVersion = (extension: LoadedExtension) =>
  sha256Hex(`${extension.record.version}|${extension.record.updatedAt}`).slice(0, 12)

const assetUrl = (extension: LoadedExtension, file: string | undefined) => {
  if (file === undefined) return null
  return `/host/ext/${extension.id}/${file.split("/").map(encodeURIComponent).join("/")}?v=${assetVersion(extension)}`
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
