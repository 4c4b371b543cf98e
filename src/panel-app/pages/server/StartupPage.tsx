import { startupVariables } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const StartupPage = ({ demo }: PageProps) => (
  <>
    <PageTitle description={`${demo.egg} on ${demo.image}`} icon="play">Startup</PageTitle>
    <Slot id="server.startup.before" />
    <Card className="mb-4" title="Startup command">
      <pre className="overflow-x-auto p-4 font-mono text-xs text-host-text-secondary">
        java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -jar {"{{SERVER_JARFILE}}"}
      </pre>
    </Card>
    <div className="grid gap-4 md:grid-cols-2">
      {startupVariables.map((variable) => (
        <Card key={variable.env} title={variable.name}>
          <div className="flex flex-col gap-2 p-4">
            <input aria-label={variable.name} className="host-input font-mono" defaultValue={variable.value} />
            <p className="text-xs text-host-text-muted">
              {variable.description} <code className="text-host-text-secondary">{variable.env}</code>
            </p>
          </div>
        </Card>
      ))}
    </div>
    <Slot id="server.startup.after" />
  </>
)
