// The bridge's own few rules (error notice, nav links, page notices), in the theme variables so they
// follow the panel's look; injected first in <head> so the panel's CSS can restyle them.
const css = `
.host-ext-error{display:flex;align-self:start;box-sizing:border-box;gap:.5rem;align-items:flex-start;padding:.5rem .75rem;margin:.25rem 0;border:1px solid var(--host-danger);border-radius:var(--host-radius-md);background:color-mix(in srgb,var(--host-danger) 12%,transparent);color:var(--host-text-primary);font:13px/1.45 var(--host-font-sans)}
.host-ext-error__icon{flex:none;display:inline-grid;place-items:center;width:1.15rem;height:1.15rem;border-radius:50%;background:var(--host-danger);color:#fff;font-weight:700;font-size:12px}
.host-ext-error__detail{color:var(--host-text-muted);word-break:break-word}
.host-nav-link{display:inline-flex;align-items:center;gap:.4rem;padding:.45rem .75rem;border-radius:var(--host-radius-sm);color:var(--host-text-secondary);text-decoration:none;font:500 14px/1.2 var(--host-font-sans);white-space:nowrap}
.host-nav-link:hover{background:var(--host-bg-tertiary);color:var(--host-text-primary)}
.host-nav-link--active{background:color-mix(in srgb,var(--host-primary) 18%,transparent);color:var(--host-text-primary);box-shadow:inset 0 -2px 0 var(--host-primary)}
.host-nav-link:focus-visible{outline:2px solid var(--host-primary);outline-offset:2px}
.host-page-notice{max-width:32rem;margin:3rem auto;padding:2rem;text-align:center;border:1px solid var(--host-border);border-radius:var(--host-radius-lg);background:var(--host-bg-secondary);color:var(--host-text-secondary);font-family:var(--host-font-sans)}
.host-page-notice__code{font:700 2.5rem/1 var(--host-font-mono);color:var(--host-text-muted)}
.host-page-notice__title{margin-top:.5rem;font-size:1.25rem;font-weight:600;color:var(--host-text-primary)}
`

export const injectStyles = () => {
  if (document.getElementById("host-bridge-styles") !== null) return
  const style = document.createElement("style")
  style.id = "host-bridge-styles"
  style.textContent = css
  document.head.insertBefore(style, document.head.firstChild)
}
