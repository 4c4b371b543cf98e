import { backups, formatBytes } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, Icon, MenuItem, PageTitle, RowMenu } from "../../ui.js"

export const BackupsPage = () => (
  <>
    <PageTitle description="3 of 5 backups used." icon="archive">Backups</PageTitle>
    <Slot id="server.backups.before" />
    <Card actions={<button className="host-button host-button--primary" type="button">Create backup</button>} title="Backups">
      <ul className="divide-y divide-host-border" data-testid="backup-list">
        {backups.map((backup) => (
          <li className="host-list-row" key={backup.uuid}>
            <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="archive" />
            <span className="min-w-0 flex-1">
              <span className="block truncate font-medium text-host-text-primary">{backup.name}</span>
              <span className="block text-xs text-host-text-muted">{formatBytes(backup.size)} · {backup.created}</span>
            </span>
            {backup.locked ? <span className="host-pill"><Icon className="h-3 w-3" name="lock" /> Locked</span> : null}
            <RowMenu context={{ backup: { uuid: backup.uuid, name: backup.name } }} label={`Actions for ${backup.name}`} slot="server.backups.dropdown">
              <MenuItem>Download</MenuItem>
              <MenuItem>Restore</MenuItem>
              <MenuItem>{backup.locked ? "Unlock" : "Lock"}</MenuItem>
              <MenuItem danger>Delete</MenuItem>
            </RowMenu>
          </li>
        ))}
      </ul>
    </Card>
    <Slot id="server.backups.after" />
  </>
)
