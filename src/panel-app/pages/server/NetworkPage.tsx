import { Slot } from "../../Slot.js"
import { Card, Icon, PageTitle } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const NetworkPage = ({ demo }: PageProps) => {
  const [ip, port] = demo.address.split(":")
  const allocations = [
    { ip, port: Number(port), alias: "play.example.test", primary: true, notes: "Game port" },
    { ip, port: Number(port) + 10, alias: "", primary: false, notes: "Dynmap" },
    { ip, port: Number(port) + 20, alias: "", primary: false, notes: "Voice chat" }
  ]
  return (
    <>
      <PageTitle description="The ports this server listens on." icon="network">Network</PageTitle>
      <Slot id="server.network.before" />
      <Card actions={<button className="host-button" type="button">Create allocation</button>} title="Allocations">
        <ul className="divide-y divide-host-border">
          {allocations.map((allocation) => (
            <li className="host-list-row" key={allocation.port}>
              <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name="network" />
              <span className="min-w-0 flex-1">
                <span className="block font-mono text-sm text-host-text-primary">{allocation.ip}:{allocation.port}</span>
                <span className="block truncate text-xs text-host-text-muted">{allocation.alias || "no alias"} · {allocation.notes}</span>
              </span>
              {allocation.primary ? <span className="host-pill host-pill--success">Primary</span> : <button className="host-button" type="button">Make primary</button>}
            </li>
          ))}
        </ul>
      </Card>
      <Slot id="server.network.after" />
    </>
  )
}
