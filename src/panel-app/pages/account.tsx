import { useEffect } from "react"
import { Route, Routes, useLocation } from "react-router-dom"
import { type Account, usePanelJson } from "../api.js"
import { announceContext, bootstrap } from "../host.js"
import { Page, SubNav } from "../layout.js"
import { Slot } from "../Slot.js"
import { Card, Icon, PageTitle } from "../ui.js"
import { NotFound } from "./errors.js"

// The account area (`/account`, `/account/api`, `/account/ssh`, and account extension pages under
// `/account/ext/{vendor}/{name}/…`, mounted into the `account.page` outlet present on every page here).

const Field = ({ label, value }: { readonly label: string; readonly value: string }) => (
  <div>
    <dt className="text-xs text-host-text-muted">{label}</dt>
    <dd className="mt-0.5 break-all text-sm text-host-text-primary">{value}</dd>
  </div>
)

const Overview = () => {
  const { user } = bootstrap()
  const account = usePanelJson<Account>("/api/client/account", user)
  const data = account.state === "ok" ? account.data : user
  return (
    <>
      <PageTitle icon="user">Account overview</PageTitle>
      <Slot id="account.overview.before" />
      <div className="grid gap-4 md:grid-cols-2">
        <Card title="Your account">
          <dl className="grid gap-4 p-4 sm:grid-cols-2">
            <Field label="Username" value={data.username} />
            <Field label="Email" value={data.email || "—"} />
            <Field label="User id" value={String(data.id)} />
            <Field label="Role" value={data.admin ? "Administrator" : "User"} />
          </dl>
        </Card>
        <Card title="Update email address">
          <form className="flex flex-col gap-3 p-4" onSubmit={(event) => event.preventDefault()}>
            <input aria-label="New email" className="host-input" defaultValue={data.email} type="email" />
            <div className="flex items-center justify-between gap-3">
              <p className="text-xs text-host-text-muted">Demo: the reference panel reads users from its configuration.</p>
              <button className="host-button host-button--primary" type="submit">Update</button>
            </div>
          </form>
        </Card>
      </div>
      <Slot id="account.overview.after" />
    </>
  )
}

const ApiCredentials = () => {
  const { user } = bootstrap()
  return (
    <>
      <PageTitle description="Tokens for scripts and API clients (Authorization: Bearer …)." icon="key">API credentials</PageTitle>
      <Slot id="account.api.before" />
      <div className="grid gap-4 md:grid-cols-[minmax(0,1fr)_minmax(0,1.4fr)]">
        <Card title="Issue a token">
          <div className="flex flex-col gap-2 p-4 text-sm text-host-text-secondary">
            <p>The reference panel issues one token per user from the command line; it is shown once and only its hash is kept.</p>
            <pre className="overflow-x-auto rounded-md bg-host-bg-primary p-3 font-mono text-xs text-host-text-primary">host panel:token {user.username}</pre>
            <p className="text-xs text-host-text-muted">A new token ends the sessions signed in with the old one.</p>
          </div>
        </Card>
        <Card title="Your tokens">
          <ul className="divide-y divide-host-border">
            <li className="host-list-row">
              <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="key" />
              <span className="min-w-0 flex-1">
                <span className="block font-mono text-sm text-host-text-primary">host_••••••••</span>
                <span className="block text-xs text-host-text-muted">Issued by host panel:token · used to sign in</span>
              </span>
              <span className="host-demo">Demo content</span>
            </li>
          </ul>
        </Card>
      </div>
      <Slot id="account.api.after" />
    </>
  )
}

const SshKeys = () => (
  <>
    <PageTitle description="Public keys that may sign in to SFTP." icon="lock">SSH keys</PageTitle>
    <Slot id="account.ssh.before" />
    <Card actions={<button className="host-button host-button--primary" type="button">Add key</button>} title="2 keys">
      <ul className="divide-y divide-host-border">
        {[
          { name: "Laptop", fingerprint: "SHA256:k3Xq9bR0a6Vw1mZp2LfT8yHc4NsD7uJe5GiOvQxBr0E", added: "3 months ago" },
          { name: "Deploy key (CI)", fingerprint: "SHA256:Pz7Lm2Wq5Rt8Yu1Io4As6Df9Gh3Jk0Lz2Xc5Vb8Nm1Q", added: "2 weeks ago" }
        ].map((key) => (
          <li className="host-list-row" key={key.name}>
            <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="key" />
            <span className="min-w-0 flex-1">
              <span className="block font-medium text-host-text-primary">{key.name}</span>
              <span className="block truncate font-mono text-xs text-host-text-muted">{key.fingerprint}</span>
            </span>
            <span className="hidden text-xs text-host-text-muted sm:block">added {key.added}</span>
          </li>
        ))}
      </ul>
    </Card>
    <Slot id="account.ssh.after" />
  </>
)

export const AccountArea = () => {
  const location = useLocation()
  useEffect(() => announceContext(null), [location.pathname])
  return (
    <>
      <div className="host-area-header">
        <Page>
          <Slot id="account.header" />
          <h1 className="text-xl font-semibold text-host-text-primary">Account</h1>
          <SubNav
            items={[
              { to: "/account", label: "Overview", icon: "user", end: true },
              { to: "/account/api", label: "API credentials", icon: "key" },
              { to: "/account/ssh", label: "SSH keys", icon: "lock" }
            ]}
            label="Account"
            slot="account.subnav"
          />
        </Page>
      </div>
      <Page>
        <Routes>
          <Route element={<Overview />} index />
          <Route element={<ApiCredentials />} path="api" />
          <Route element={<SshKeys />} path="ssh" />
          <Route element={null} path="ext/:vendor/:name/*" />
          <Route element={<NotFound />} path="*" />
        </Routes>
        <Slot id="account.page" />
        <Slot id="account.footer" />
      </Page>
    </>
  )
}
