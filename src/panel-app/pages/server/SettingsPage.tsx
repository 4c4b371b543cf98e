import { bootstrap } from "../../host.js"
import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const SettingsPage = ({ demo, server }: PageProps) => {
  const { user } = bootstrap()
  return (
    <>
      <PageTitle icon="settings">Settings</PageTitle>
      <Slot id="server.settings.before" />
      <div className="grid gap-4 md:grid-cols-2">
        <Card title="SFTP details">
          <dl className="flex flex-col gap-3 p-4 text-sm">
            <div>
              <dt className="text-xs text-host-text-muted">Server address</dt>
              <dd className="font-mono text-host-text-primary">sftp://{demo.node}:2022</dd>
            </div>
            <div>
              <dt className="text-xs text-host-text-muted">Username</dt>
              <dd className="break-all font-mono text-host-text-primary">{user.username}.{server.uuid.slice(0, 8)}</dd>
            </div>
          </dl>
        </Card>
        <Card title="Server name">
          <div className="flex flex-col gap-3 p-4">
            <input aria-label="Server name" className="host-input" defaultValue={server.name} />
            <div className="flex justify-end">
              <button className="host-button host-button--primary" type="button">Save</button>
            </div>
          </div>
        </Card>
        <Card className="md:col-span-2" title="Reinstall server">
          <div className="flex flex-wrap items-center justify-between gap-3 p-4">
            <p className="max-w-xl text-sm text-host-text-muted">
              Reinstalling stops the server and runs its install script again. Some files may be deleted or changed.
            </p>
            <button className="host-button host-button--danger" type="button">Reinstall server</button>
          </div>
        </Card>
      </div>
      <Slot id="server.settings.after" />
    </>
  )
}
