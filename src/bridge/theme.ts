import { themeDefaults } from "../domain/Theme.js"
import { emit } from "./events.js"
import { createStore } from "./store.js"

// Theme variables (docs/frontend.md "Theme"): the panel's CSS defines the `--host-*` custom properties on
// :root; the bridge reads those as the panel's values, supplies defaults only for the ones the panel left
// undefined, and layers extension themes over them by priority (the highest wins; equal priorities go by
// registration order). One <style> element at the end of <head> carries the result, so removing an
// extension's theme is rewriting that element.

/** `primary` → `--host-primary`; names already starting with `--` are kept. */
export const variableName = (name: string) => name.startsWith("--") ? name : `--host-${name}`

interface ExtensionTheme {
  readonly variables: Readonly<Record<string, string>>
  readonly priority: number
  readonly sequence: number
}

const themes = new Map<string, ExtensionTheme>()
let sequence = 0
let panelValues: Record<string, string> | undefined
let styleElement: HTMLStyleElement | undefined

/** The merged values: defaults, then the panel's, then extension themes by priority. */
export const theme = createStore<Readonly<Record<string, string>>>({ ...themeDefaults })

const readPanelValues = () => {
  // Read before any extension override is applied (the style element is emptied while reading).
  const saved = styleElement?.textContent ?? ""
  if (styleElement !== undefined) styleElement.textContent = ""
  const computed = getComputedStyle(document.documentElement)
  const values: Record<string, string> = {}
  for (const name of Object.keys(themeDefaults)) {
    const value = computed.getPropertyValue(name).trim()
    if (value !== "") values[name] = value
  }
  if (styleElement !== undefined) styleElement.textContent = saved
  return values
}

const cssValue = (value: string) => value.replace(/[;{}<>]/g, "")

const apply = () => {
  panelValues ??= readPanelValues()
  const overrides: Record<string, string> = {}
  for (const entry of [...themes.values()].sort((a, b) => a.priority - b.priority || a.sequence - b.sequence)) {
    for (const [name, value] of Object.entries(entry.variables)) overrides[variableName(name)] = cssValue(String(value))
  }
  const missing = Object.fromEntries(Object.entries(themeDefaults).filter(([name]) => panelValues![name] === undefined))
  const written = { ...missing, ...overrides }
  if (styleElement === undefined) {
    styleElement = document.createElement("style")
    styleElement.id = "host-theme"
  }
  // Always last in <head>, after every stylesheet the panel and the extensions added.
  if (styleElement.parentNode !== document.head || document.head.lastElementChild !== styleElement) document.head.appendChild(styleElement)
  styleElement.textContent = `:root{${Object.entries(written).map(([name, value]) => `${name}:${value}`).join(";")}}`
  const merged = { ...themeDefaults, ...panelValues, ...overrides }
  if (JSON.stringify(merged) !== JSON.stringify(theme.get())) {
    theme.set(merged)
    emit("theme:changed", { variables: merged })
  }
}

export const initTheme = () => apply()

export const setExtensionTheme = (id: string, config: { readonly variables?: unknown; readonly priority?: unknown } | undefined) => {
  if (config === undefined || typeof config.variables !== "object" || config.variables === null) {
    if (themes.delete(id)) apply()
    return
  }
  themes.set(id, {
    variables: config.variables as Record<string, string>,
    priority: typeof config.priority === "number" ? config.priority : 0,
    sequence: sequence++
  })
  apply()
}

export const removeExtensionTheme = (id: string) => {
  if (themes.delete(id)) apply()
}
