import { Link, useParams } from "react-router-dom"
import { schedules } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import { NotFound } from "../errors.js"
import type { PageProps } from "./shared.js"

export const ScheduleEditorPage = ({ server }: PageProps) => {
  const { id } = useParams()
  const schedule = schedules.find((entry) => String(entry.id) === id)
  if (schedule === undefined) return <NotFound />
  const [minute, hour, day, month, weekday] = schedule.cron.split(" ")
  return (
    <>
      <PageTitle icon="clock">
        <Link className="text-host-text-muted hover:text-host-text-primary" to={`/server/${server.uuid}/schedules`}>Schedules</Link>
        <span className="text-host-text-muted">/</span>
        <span className="truncate">{schedule.name}</span>
      </PageTitle>
      <Slot id="server.schedules.edit.before" />
      <div className="grid gap-4 lg:grid-cols-[20rem_minmax(0,1fr)]">
        <Card title="Timing">
          <dl className="grid grid-cols-5 gap-2 p-4 text-center">
            {[["Minute", minute], ["Hour", hour], ["Day", day], ["Month", month], ["Weekday", weekday]].map(([label, value]) => (
              <div className="rounded-md bg-host-bg-tertiary px-1 py-2" key={label}>
                <dt className="text-[10px] uppercase tracking-wide text-host-text-muted">{label}</dt>
                <dd className="font-mono text-sm text-host-text-primary">{value}</dd>
              </div>
            ))}
          </dl>
          <p className="px-4 pb-4 text-xs text-host-text-muted">Next run {schedule.nextRun}.</p>
        </Card>
        <Card actions={<button className="host-button" type="button">New task</button>} title={`${schedule.tasks.length} task${schedule.tasks.length === 1 ? "" : "s"}`}>
          <ol className="divide-y divide-host-border">
            {schedule.tasks.map((task, index) => (
              <li className="host-list-row" key={index}>
                <span className="host-step">{index + 1}</span>
                <span className="min-w-0 flex-1">
                  <span className="block font-medium text-host-text-primary">{task.action}</span>
                  <span className="block truncate font-mono text-xs text-host-text-muted">{task.payload}</span>
                </span>
                <span className="text-xs text-host-text-muted">{task.offset === 0 ? "at once" : `after ${task.offset}s`}</span>
              </li>
            ))}
          </ol>
        </Card>
      </div>
      <Slot id="server.schedules.edit.after" />
    </>
  )
}
