import { emit } from "./events.js"
import { dropExtensionState } from "./hooks.js"
import { manifest, type ManifestEntry, normaliseEntry, unregister } from "./registry.js"

// Live updates (docs/frontend.md "Live updates"): the bridge follows GET /api/client/host/events. Each
// `generation` event lists the enabled extensions after a runtime swap; extensions that left (disabled,
// removed) or changed (updated: another bundle URL) are unregistered and their stylesheet and script
// removed, and newly enabled ones get their stylesheet and bundle loaded, in the listed order — all
// without reloading the page. EventSource reconnects by itself; the first event after every connect
// carries the current state, so a change missed while disconnected is caught up.

interface Assets {
  script: HTMLScriptElement | undefined
  link: HTMLLinkElement | undefined
}

const assets = new Map<string, Assets>()
let generation = 0
let chain: Promise<void> = Promise.resolve()

const sameUrl = (a: string, b: string) => new URL(a, location.href).href === new URL(b, location.href).href

/** Finds the script and stylesheet elements the shell wrote for the page's first extensions. */
export const adoptShellAssets = () => {
  const scripts = [...document.querySelectorAll("script[src]")] as Array<HTMLScriptElement>
  const links = [...document.querySelectorAll("link[rel=stylesheet][href]")] as Array<HTMLLinkElement>
  for (const entry of manifest.values()) {
    assets.set(entry.id, {
      script: entry.bundle === null ? undefined : scripts.find((script) => sameUrl(script.src, entry.bundle!)),
      link: entry.styles === null ? undefined : links.find((link) => sameUrl(link.href, entry.styles!))
    })
  }
}

export const currentGeneration = () => generation

const changed = (a: ManifestEntry, b: ManifestEntry) =>
  a.version !== b.version || a.bundle !== b.bundle || a.styles !== b.styles || a.isolationClass !== b.isolationClass

const remove = (id: string) => {
  unregister(id)
  const owned = assets.get(id)
  owned?.script?.remove()
  // A bundle boot.js ran from `/host/bundles.json` has no URL to be found by: its script is marked with its id.
  for (const script of document.querySelectorAll("script:not([src])")) {
    if ((script as HTMLScriptElement).dataset.hostExtension === id) script.remove()
  }
  owned?.link?.remove()
  assets.delete(id)
  manifest.delete(id)
  dropExtensionState(id)
}

const loadScript = (entry: ManifestEntry, url: string) =>
  new Promise<HTMLScriptElement>((resolve) => {
    const script = document.createElement("script")
    script.src = url
    script.async = false
    script.dataset.hostExtension = entry.id
    script.onload = () => resolve(script)
    script.onerror = () => {
      console.error(`[host] could not load the bundle of ${entry.id} (${url})`)
      resolve(script)
    }
    document.body.appendChild(script)
  })

const add = async (entry: ManifestEntry) => {
  manifest.set(entry.id, entry)
  const owned: Assets = { script: undefined, link: undefined }
  assets.set(entry.id, owned)
  if (entry.styles !== null) {
    const link = document.createElement("link")
    link.rel = "stylesheet"
    link.href = entry.styles
    link.dataset.hostExtension = entry.id
    // Before the bridge's theme element, which stays last so theme overrides keep winning.
    document.head.insertBefore(link, document.getElementById("host-theme"))
    owned.link = link
  }
  if (entry.bundle !== null) owned.script = await loadScript(entry, entry.bundle)
}

/** Brings the page to a generation's list of enabled extensions. */
export const applyGeneration = (number: number, list: ReadonlyArray<unknown>) => {
  chain = chain.then(async () => {
    const next = list.flatMap((value) => {
      const entry = normaliseEntry(value)
      return entry === undefined ? [] : [entry]
    })
    const wanted = new Map(next.map((entry) => [entry.id, entry]))
    for (const [id, entry] of [...manifest]) {
      const replacement = wanted.get(id)
      if (replacement === undefined || changed(entry, replacement)) remove(id)
    }
    for (const entry of next) {
      if (!manifest.has(entry.id)) await add(entry)
    }
    generation = number
    emit("host:generation", { generation: number })
  }).catch((error) => console.error("[host] applying a new generation failed:", error))
  return chain
}

export const followEvents = (baseUrl: string) => {
  if (typeof EventSource === "undefined") return undefined
  const source = new EventSource(`${baseUrl.replace(/\/$/, "")}/api/client/host/events`, { withCredentials: true })
  source.addEventListener("generation", (event) => {
    try {
      const data = JSON.parse((event as MessageEvent<string>).data) as { generation?: number; extensions?: ReadonlyArray<unknown> }
      if (Array.isArray(data.extensions)) void applyGeneration(typeof data.generation === "number" ? data.generation : generation + 1, data.extensions)
    } catch (error) {
      console.error("[host] a generation event could not be read:", error)
    }
  })
  return source
}
