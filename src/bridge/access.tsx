import * as React from "react"
import type { SlotContext } from "@host/sdk"
import type { AccessListing, GrantRequest } from "../http/contracts/Client.js"
import { serverLinkId } from "./match.js"
import { navigateTo } from "./page.js"

// Host's own "Extension access" under Pterodactyl (docs/panels.md "Extension pages under a real panel"):
// Pterodactyl's subuser permissions are a fixed list, so Host keeps the grants of extension permissions
// itself, and a server's owner or an admin gives them on the panel's Users page, in a section below the
// panel's list of subusers (the `server.users.after` slot) shown only when an enabled extension declares
// permissions and the server has subusers. It is no tab of its own: the panel's sub-navigation has no room
// for one at 1280 px (docs/decisions.md "Extension access on the Users page"). The same section answers at
// `/server/{id}/ext/host/access`, the address it had before. It reads and writes
// `/api/client/host/servers/{server}/access` (GET → subusers with their grants and the permissions
// extensions declare; PUT/DELETE `{user, permission}`, the user by their panel username).

export const accessPageId = "host/access"
/** The Users page's slot the section renders in (below the panel's list of subusers). */
export const accessSlot = "server.users.after"

let enabled = false
/** Turned on for panels whose subusers cannot hold extension permissions themselves (Pterodactyl). */
export const enableAccessPage = () => {
  enabled = true
}
export const accessPageEnabled = () => enabled

/** Owners and admins only: the same rule the endpoint applies. */
export const mayManageAccess = (context: SlotContext) => context.user?.admin === true || context.server?.isOwner === true

// The endpoint's own shapes (http/contracts/Client.ts), as types only: the page reads what Host answers.
type Access = AccessListing
type Subuser = AccessListing["subusers"][number]
type Permission = AccessListing["permissions"][number]

const host = () => (window as unknown as { __HOST__?: { baseUrl?: string; csrfToken?: string } }).__HOST__ ?? {}

/** The panel's CSRF pair (axios sends X-XSRF-TOKEN from the XSRF-TOKEN cookie) and Host's session token. */
const writeHeaders = (): Record<string, string> => {
  const cookie = /(?:^|;\s*)XSRF-TOKEN=([^;]*)/.exec(document.cookie)?.[1]
  return {
    "content-type": "application/json",
    ...(host().csrfToken ? { "x-csrf-token": host().csrfToken! } : {}),
    ...(cookie === undefined ? {} : { "x-xsrf-token": decodeURIComponent(cookie) })
  }
}

const errorText = async (response: Response) => {
  try {
    const body = (await response.json()) as { errors?: Array<{ detail?: string }> }
    return body.errors?.[0]?.detail ?? `${response.status} ${response.statusText}`
  } catch {
    return `${response.status} ${response.statusText}`
  }
}

/** The server the page is about: Pterodactyl's short identifier when the panel gives one, else its uuid. */
const serverOf = (context: SlotContext) =>
  (context.server as { readonly identifier?: string } | null)?.identifier ?? context.server?.uuid ?? ""

const accessUrl = (server: string) =>
  `${(host().baseUrl ?? "").replace(/\/$/, "")}/api/client/host/servers/${encodeURIComponent(server)}/access`

const failureText = (failure: unknown) => failure instanceof Error ? failure.message : String(failure)

/** The listing of `url`, read again when the URL changes; an answer for a page already left is dropped. */
const useAccessListing = (url: string) => {
  const [access, setAccess] = React.useState<Access | null>(null)
  const [error, setError] = React.useState<string | null>(null)
  React.useEffect(() => {
    const controller = new AbortController()
    fetch(url, { credentials: "same-origin", signal: controller.signal, headers: { accept: "application/json", "x-requested-with": "XMLHttpRequest" } })
      .then(async (response) => {
        if (!response.ok) throw new Error(await errorText(response))
        setAccess(((await response.json()) as { data: Access }).data)
      })
      .catch((failure: unknown) => {
        if (!controller.signal.aborted) setError(failureText(failure))
      })
    return () => controller.abort()
  }, [url])
  return { access, setAccess, error, setError }
}

type Listing = ReturnType<typeof useAccessListing>

/** The listing with one subuser's grant of one permission set or cleared (the rest untouched). */
const withGrant = (current: Access | null, subuser: Subuser, permission: string, grant: boolean): Access | null =>
  current === null ? current : {
    ...current,
    subusers: current.subusers.map((entry) => entry.username !== subuser.username ? entry : {
      ...entry,
      grants: grant ? [...entry.grants.filter((held) => held !== permission), permission] : entry.grants.filter((held) => held !== permission)
    })
  }

/** PUT grants, DELETE revokes; a refusal fails with the server's reason. */
const writeGrant = async (url: string, subuser: Subuser, permission: string, grant: boolean) => {
  const response = await fetch(url, {
    method: grant ? "PUT" : "DELETE",
    credentials: "same-origin",
    headers: writeHeaders(),
    body: JSON.stringify({ user: subuser.username, permission } satisfies typeof GrantRequest.Type)
  })
  if (!response.ok) throw new Error(await errorText(response))
}

const toggleKey = (subuser: Subuser, permission: string) => `${subuser.username}|${permission}`

/** Shown at once, written in the background, put back (with the server's reason) when the write fails. */
const useGrantToggle = (url: string, { setAccess, setError }: Listing) => {
  const [busy, setBusy] = React.useState<string | null>(null)
  const toggle = async (subuser: Subuser, permission: string, grant: boolean) => {
    setBusy(toggleKey(subuser, permission))
    setError(null)
    setAccess((current) => withGrant(current, subuser, permission, grant))
    try {
      await writeGrant(url, subuser, permission, grant)
    } catch (failure) {
      setAccess((current) => withGrant(current, subuser, permission, !grant))
      setError(`${grant ? "Granting" : "Revoking"} ${permission} for ${subuser.username} failed: ${failureText(failure)}`)
    } finally {
      setBusy(null)
    }
  }
  return { busy, toggle }
}

type Toggle = ReturnType<typeof useGrantToggle>["toggle"]

/** The declared permissions grouped by the extension that declares them, in the listing's order. */
const permissionsByExtension = (access: Access | null) => {
  const byExtension = new Map<string, Array<Permission>>()
  for (const permission of access?.permissions ?? []) byExtension.set(permission.extension, [...byExtension.get(permission.extension) ?? [], permission])
  return byExtension
}

/** The failure, or why there is nothing to toggle (still loading, no permission declared, no subuser). */
const AccessNotices = ({ access, error }: { readonly access: Access | null; readonly error: string | null }) => (
  <>
    {error !== null && <div className="host-access__error" role="alert">{error}</div>}
    {access === null && error === null && <p className="host-access__muted">Loading…</p>}
    {access !== null && access.permissions.length === 0 && <p className="host-access__muted">No enabled extension declares a permission.</p>}
    {access !== null && access.permissions.length > 0 && access.subusers.length === 0 && (
      <p className="host-access__muted">This server has no subusers. Add them on the panel's Users page first.</p>
    )}
  </>
)

interface ToggleProps {
  readonly subuser: Subuser
  readonly busy: string | null
  readonly onToggle: Toggle
}

const GrantToggle = ({ busy, onToggle, permission, subuser }: ToggleProps & { readonly permission: Permission }) => (
  <label className="host-access__toggle">
    <input
      type="checkbox"
      checked={subuser.grants.includes(permission.permission)}
      disabled={busy === toggleKey(subuser, permission.permission)}
      onChange={(event) => void onToggle(subuser, permission.permission, event.currentTarget.checked)}
      data-permission={permission.permission}
      data-user={subuser.username}
    />
    <span>
      <code>{permission.permission}</code>
    </span>
  </label>
)

/** One subuser: a group of toggles per extension. */
const SubuserGrants = ({ groups, ...props }: ToggleProps & { readonly groups: ReadonlyMap<string, ReadonlyArray<Permission>> }) => (
  <section className="host-access__user" aria-label={props.subuser.username}>
    <header>
      <strong>{props.subuser.username}</strong>
      <span className="host-access__muted">{props.subuser.email}</span>
    </header>
    {[...groups].map(([extension, permissions]) => (
      <fieldset key={extension} className="host-access__group">
        <legend>{extension}</legend>
        {permissions.map((permission) => <GrantToggle key={permission.permission} permission={permission} {...props} />)}
      </fieldset>
    ))}
  </section>
)

/** The listing's toggles under a heading; `quiet` renders nothing while loading or with nothing to grant. */
const AccessBody = ({ context, quiet }: { readonly context: SlotContext; readonly quiet: boolean }) => {
  const url = accessUrl(serverOf(context))
  const listing = useAccessListing(url)
  const { busy, toggle } = useGrantToggle(url, listing)
  const { access, error } = listing
  const groups = permissionsByExtension(access)
  const nothingToGrant = access !== null && (access.permissions.length === 0 || access.subusers.length === 0)
  if (quiet && error === null && (access === null || nothingToGrant)) return null
  return (
    <div className="host-access" data-host-page="host/access">
      <h2 className="host-access__title">Extension access</h2>
      <p className="host-access__lead">
        Which subusers of {context.server?.name ?? "this server"} may use what extensions offer. The panel's own subuser
        permissions are set above; these grants are kept by Host.
      </p>
      <AccessNotices access={access} error={error} />
      {access !== null && access.permissions.length > 0 && access.subusers.map((subuser) => (
        <SubuserGrants key={subuser.username} subuser={subuser} groups={groups} busy={busy} onToggle={toggle} />
      ))}
    </div>
  )
}

/** On the panel's Users page: the section, only when there is something to grant. */
export const AccessSection = ({ context }: { readonly context: SlotContext }) => <AccessBody context={context} quiet />

/** At `/server/{id}/ext/host/access`: the same, with the way back to the Users page it lives on. */
export const AccessPage = ({ context }: { readonly context: SlotContext }) => {
  const users = `/server/${serverLinkId(context.server, context.path) ?? ""}/users`
  return (
    <>
      <a
        className="host-access__back"
        href={users}
        onClick={(event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
          event.preventDefault()
          navigateTo(users)
        }}
      >
        ← Users
      </a>
      <AccessBody context={context} quiet={false} />
    </>
  )
}

export const accessCss = `
.host-access{font-family:var(--host-font-sans);color:var(--host-text-secondary)}
[data-host-slot="server.users.after"] > .host-access{margin-top:2.5rem}
.host-access__back{display:inline-block;margin:0 0 1rem;font-size:.875rem;color:var(--host-text-muted);text-decoration:none}
.host-access__back:hover{color:var(--host-text-primary)}
.host-access__title{margin:0 0 .25rem;font-size:1.25rem;color:var(--host-text-primary)}
.host-access__lead{margin:0 0 1rem;max-width:48rem;line-height:1.5}
.host-access__muted{color:var(--host-text-muted);font-size:.875rem}
.host-access__error{margin:0 0 1rem;padding:.75rem 1rem;border-radius:var(--host-radius-md);background:color-mix(in srgb,var(--host-danger) 20%,transparent);color:var(--host-text-primary)}
.host-access__user{margin:0 0 1rem;padding:1rem 1.25rem;border-radius:var(--host-radius-md);background:var(--host-bg-tertiary)}
.host-access__user header{display:flex;gap:.75rem;align-items:baseline;margin-bottom:.5rem;color:var(--host-text-primary)}
.host-access__group{margin:.5rem 0 0;padding:.5rem 0 0;border:0;border-top:1px solid var(--host-border)}
.host-access__group legend{padding:0;font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;color:var(--host-text-muted)}
.host-access__toggle{display:flex;gap:.75rem;align-items:flex-start;padding:.4rem 0;cursor:pointer}
.host-access__toggle input{margin-top:.2rem;width:1rem;height:1rem;accent-color:var(--host-primary)}
.host-access__toggle span{display:flex;flex-direction:column;gap:.125rem}
.host-access__toggle code{font-family:var(--host-font-mono);color:var(--host-text-primary);font-size:.875rem}
`
