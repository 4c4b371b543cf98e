// The shape of a slot map (docs/panels.md "Slot maps"): for each of the 65 slot ids, where it lives on a
// panel Host does not render. Maps are plain data (strings and lists), so they can be read, diffed per
// panel version and checked against a real build of the panel without running the bridge.

export type Placement = "beforebegin" | "afterbegin" | "beforeend" | "afterend"

/**
 * How stable an anchor is across builds of one panel version: ID (an element id), DN (a styled-components
 * display name), DN# (display name with its ordinal: shifts if that file changes), TW (Tailwind classes /
 * structure), AT (an attribute), PLUGIN (a container the panel-side plugin renders).
 */
export type Stability = "ID" | "DN" | "DN#" | "TW" | "AT" | "PLUGIN"

export interface Anchor {
  /** A CSS selector (`:is`/`:has` allowed). */
  readonly selector: string
  readonly placement: Placement
}

export interface SlotPlace {
  readonly slot: string
  /** Path patterns of the panel where the slot exists (`:param`, trailing `*`). */
  readonly routes: ReadonlyArray<string>
  /** Tried in order; the first that matches on the page is used. */
  readonly anchors: ReadonlyArray<Anchor>
  readonly stability: Stability
  /** Human words for docs: the page the slot is on. */
  readonly page: string
  /**
   * One container per matching anchor, each with the row's server as `data-host-context`: the row is the
   * anchor's closest `link` element, the server id comes from its href, the name from `name` inside it.
   */
  readonly row?: { readonly link: string; readonly name: string }
  /** The anchor may be legitimately absent (a permission, a menu not open, no data): no diagnostics. */
  readonly optional?: string
  /** Classes for the container (e.g. grid children that need a column span). */
  readonly className?: string
}

export interface SlotAbsence {
  readonly slot: string
  readonly reason: string
}

export interface SlotMap {
  readonly kind: "pterodactyl" | "pelican"
  /** Panel versions this map was written for (documentation; the bridge uses the kind's map). */
  readonly versions: ReadonlyArray<string>
  readonly places: ReadonlyArray<SlotPlace>
  readonly absent: ReadonlyArray<SlotAbsence>
  /** Present once the panel has rendered a page body: only then is a missing anchor a finding. */
  readonly ready: string
  /** On an extension page (docs/frontend.md "Pages"), the panel's own "not found" block to hide. */
  readonly notFound: string
  /** Events after which the panel has swapped its page (besides the History API and popstate). */
  readonly navigationEvents: ReadonlyArray<string>
  /**
   * `--host-*` defaults from the panel's palette. A value `var(--x)` is read from the page at start (a
   * bare `r, g, b` triplet, as Filament 3 writes its colours, becomes `rgb(r, g, b)`).
   */
  readonly theme: Readonly<Record<string, string>>
  /** Styles for the injected containers and the bridge's navigation links on this panel. */
  readonly css: string
  /**
   * How the bridge's links to extension pages navigate: `client` (default) by the History API, the bridge
   * putting the page into the outlet it keeps; `document` when the panel itself renders the outlet (a
   * server-side page), so the panel's own navigation (Livewire's, or a page load) must follow the link.
   */
  readonly pageLinks?: "client" | "document"
  /**
   * Where a root admin gets Host's "Extensions" link in the client area: beside the panel's own link to
   * its admin area (docs/panels.md "Finding Host's admin screens"). A panel without one has no such link.
   */
  readonly adminLink?: Anchor
}

/**
 * A styled-components display name as a token: `Name-sc-<hash>-N` at the start of the class attribute or
 * after a space, so `DropdownMenu___StyledDiv` does not match `FileDropdownMenu___StyledDiv`.
 */
export const sc = (name: string) => `:is([class^="${name}-sc-"],[class*=" ${name}-sc-"])`
