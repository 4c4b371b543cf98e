import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const UsersPage = ({ server }: PageProps) => {
  // A summary from the dashboard or the bootstrap has no subusers yet; the detail brings them.
  if (server.subusers === undefined) {
    return <p className="host-card p-6 text-sm text-host-text-muted">Loading users…</p>
  }
  const subusers = server.subusers
  return (
    <>
      <PageTitle description={`Owned by ${server.owner.username}. Subusers come from the panel's configuration.`} icon="users">Users</PageTitle>
      <Slot id="server.users.before" />
      <Card actions={<button className="host-button host-button--primary" type="button">New user</button>} title={`${subusers.length} subuser${subusers.length === 1 ? "" : "s"}`}>
        {subusers.length === 0 ? <p className="p-4 text-sm text-host-text-muted">This server has no subusers.</p> : (
          <ul className="divide-y divide-host-border">
            {subusers.map((subuser) => (
              <li className="host-list-row" key={subuser.id}>
                <span className="host-avatar">{subuser.username.slice(0, 1).toUpperCase()}</span>
                <span className="min-w-0 flex-1">
                  <span className="block truncate font-medium text-host-text-primary">{subuser.username}</span>
                  <span className="block truncate text-xs text-host-text-muted">{subuser.email}</span>
                </span>
                <span className="hidden max-w-xs truncate font-mono text-xs text-host-text-secondary sm:block">
                  {subuser.permissions.length === 0 ? "no permissions" : subuser.permissions.join(", ")}
                </span>
              </li>
            ))}
          </ul>
        )}
      </Card>
      <Slot id="server.users.after" />
    </>
  )
}
