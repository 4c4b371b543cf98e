import type { Anchor } from "./panels/map.js"

// Host's "Extensions" link for a root admin in a real panel's client area (docs/panels.md "Finding Host's
// admin screens"): one link right beside the panel's own link to its admin area, where the slot map's
// `adminLink` anchor says. It is shaped as that link's siblings are (Pterodactyl styles every `a` child of
// its navbar's right-hand list, and `.navigation-link`): an icon with the name as tooltip and label.
// It is a plain link: Host's admin screens are their own page, so the browser loads it as a page.
//
// The panel's React drops foreign nodes when it remounts the navbar (once after load, and between the
// dashboard and the server pages: docs/panels.md "Slot maps"), so an observer puts the same element back
// whenever it is no longer beside its anchor.

/** A puzzle piece, solid and 1em like the panel's Font Awesome icons beside it. */
const icon = `<svg aria-hidden="true" focusable="false" width="1em" height="1em" viewBox="2.5 2 19.5 19.5" fill="currentColor"><path d="M3 7h5.5a2.5 2.5 0 1 1 3 0H17v5.5a2.5 2.5 0 1 1 0 3V21H3z"/></svg>`

/** Whether `link` sits at `placement` of `target`. */
const inPlace = (link: Element, target: Element, placement: Anchor["placement"]) => {
  switch (placement) {
    case "beforebegin":
      return target.previousElementSibling === link
    case "afterend":
      return target.nextElementSibling === link
    case "afterbegin":
      return target.firstElementChild === link
    case "beforeend":
      return target.lastElementChild === link
  }
}

/** The anchor of the current page: not inside a route fading out. */
const find = (selector: string): Element | undefined => {
  for (const element of document.querySelectorAll(selector)) if (element.closest(".fade-exit") === null) return element
  return undefined
}

/** Keeps Host's admin link at `anchor` for the page's life; `href` is Host's first admin screen. */
export const startAdminLink = (anchor: Anchor, href: string): MutationObserver => {
  const link = document.createElement("a")
  link.href = href
  link.className = "navigation-link"
  link.title = "Extensions"
  link.setAttribute("aria-label", "Extensions")
  link.setAttribute("data-host-admin", "")
  link.innerHTML = icon
  let target: Element | undefined
  const keep = () => {
    // Most changes (a console line, a stat) are elsewhere: nothing to look up while the link is in place.
    if (target?.isConnected === true && inPlace(link, target, anchor.placement)) return
    target = find(anchor.selector)
    if (target === undefined) link.remove()
    else if (!inPlace(link, target, anchor.placement)) target.insertAdjacentElement(anchor.placement, link)
  }
  const observer = new MutationObserver(keep)
  observer.observe(document.documentElement, { childList: true, subtree: true })
  keep()
  return observer
}
