import { Link } from "react-router-dom"
import { schedules } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, Icon, PageTitle } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const SchedulesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="Tasks the panel runs on this server at set times." icon="clock">Schedules</PageTitle>
    <Slot id="server.schedules.before" />
    <Card>
      <ul className="divide-y divide-host-border" data-testid="schedule-list">
        {schedules.map((schedule) => (
          <li key={schedule.id}>
            <Link className="host-list-row hover:bg-host-bg-tertiary" to={`/server/${server.uuid}/schedules/${schedule.id}`}>
              <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="clock" />
              <span className="min-w-0 flex-1">
                <span className="block truncate font-medium text-host-text-primary">{schedule.name}</span>
                <span className="block text-xs text-host-text-muted">Last run {schedule.lastRun} · next {schedule.nextRun}</span>
              </span>
              <code className="hidden font-mono text-xs text-host-text-secondary sm:block">{schedule.cron}</code>
              <span className={`host-pill${schedule.active ? " host-pill--success" : ""}`}>{schedule.active ? "Active" : "Paused"}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Card>
    <Slot id="server.schedules.after" />
  </>
)
