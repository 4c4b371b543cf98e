import { Eta } from "eta"
import { Data, Effect } from "effect"
import { isAbsolute, join, relative } from "node:path"
import type { Generation } from "./Runtime.js"

// View namespaces (`HasBladeViews`): an extension names a folder of Eta templates and a namespace, and
// renders `<namespace>::<view>` (auto-escaping on; `<%~ %>` writes raw HTML on purpose).

export class ViewError extends Data.TaggedError("ViewError")<{
  readonly view: string
  readonly detail: string
}> {
  override get message() {
    return `view ${this.view}: ${this.detail}`
  }
}

export type ViewNamespaces = ReadonlyMap<string, { readonly extensionId: string; readonly engine: Eta }>

const NAMESPACE = /^[a-z0-9][a-z0-9_-]*$/

/** The namespaces of the booted extensions; a bad or duplicate declaration is skipped with a warning. */
export const viewNamespaces = (generation: Generation) =>
  Effect.gen(function*() {
    const namespaces = new Map<string, { readonly extensionId: string; readonly engine: Eta }>()
    for (const extension of generation.extensions.values()) {
      const instance = extension.instance as { getViewsPath?: () => unknown; getViewNamespace?: () => unknown } | undefined
      if (typeof instance?.getViewsPath !== "function" || typeof instance.getViewNamespace !== "function") continue
      const namespace = yield* Effect.try(() => String(instance.getViewNamespace!())).pipe(Effect.orElseSucceed(() => ""))
      const viewsPath = yield* Effect.try(() => String(instance.getViewsPath!())).pipe(Effect.orElseSucceed(() => ""))
      const folder = isAbsolute(viewsPath) ? viewsPath : join(extension.directory, viewsPath)
      if (!NAMESPACE.test(namespace) || viewsPath === "" || relative(extension.directory, folder).startsWith("..")) {
        yield* Effect.logWarning(`${extension.id}: view namespace "${namespace}" at "${viewsPath}" is not usable (a lowercase name and a folder inside the extension)`)
        continue
      }
      const taken = namespaces.get(namespace)
      if (taken !== undefined) {
        yield* Effect.logWarning(`${extension.id}: view namespace "${namespace}" is already ${taken.extensionId}'s`)
        continue
      }
      namespaces.set(namespace, { extensionId: extension.id, engine: new Eta({ views: folder, autoEscape: true, cache: true }) })
    }
    return namespaces as ViewNamespaces
  })

/** Renders `<namespace>::<view>` with `data` (as `it` in the template). */
export const renderView = (namespaces: ViewNamespaces, view: string, data: object = {}) =>
  Effect.gen(function*() {
    const match = /^([^:]+)::([A-Za-z0-9_./-]+)$/.exec(view)
    if (match === null) return yield* new ViewError({ view, detail: `name views as <namespace>::<view>` })
    const [, namespace, name] = match as unknown as [string, string, string]
    if (name.split("/").includes("..")) return yield* new ViewError({ view, detail: `".." is not allowed in a view name` })
    const entry = namespaces.get(namespace)
    if (entry === undefined) return yield* new ViewError({ view, detail: `no enabled extension declares the namespace "${namespace}"` })
    return yield* Effect.tryPromise({
      try: () => entry.engine.renderAsync(name, data),
      catch: (error) => new ViewError({ view, detail: error instanceof Error ? error.message.split("\n")[0]! : String(error) })
    })
  })
