import { type FormEvent, useEffect, useRef, useState } from "react"
import { consoleLines, formatMegabytes } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, DemoBadge, Icon } from "../../ui.js"
import { type PageProps, Stat } from "./shared.js"

export const ConsolePage = ({ demo, server }: PageProps) => {
  const [lines, setLines] = useState<ReadonlyArray<string>>(() => consoleLines(server.name))
  const [command, setCommand] = useState("")
  const output = useRef<HTMLPreElement>(null)
  useEffect(() => {
    output.current?.scrollTo({ top: output.current.scrollHeight })
  }, [lines])
  const send = (event: FormEvent) => {
    event.preventDefault()
    if (command.trim() === "") return
    setLines((current) => [...current, `> ${command}`, "[demo] The reference panel has no game server behind it; the command was not sent."])
    setCommand("")
  }
  return (
    <>
      <Slot id="server.console.header" />
      <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_18rem]">
        <Card
          actions={
            <>
              <Slot className="flex items-center gap-2" id="server.terminal.buttons" />
              <DemoBadge />
            </>
          }
          className="min-w-0"
          title={<span className="flex items-center gap-2"><Icon name="terminal" /> Console</span>}
        >
          <pre className="host-terminal" ref={output}>{lines.join("\n")}</pre>
          <form className="flex items-center gap-2 border-t border-host-border p-3" onSubmit={send}>
            <span className="font-mono text-host-primary-light">$</span>
            <input
              aria-label="Console command"
              className="host-input flex-1 font-mono"
              onChange={(event) => setCommand(event.target.value)}
              placeholder="Type a command…"
              value={command}
            />
            <Slot className="flex items-center gap-2" id="server.console.command" />
          </form>
        </Card>
        <aside className="flex min-w-0 flex-col gap-3">
          <Slot id="server.console.info.before" />
          <div className="grid grid-cols-2 gap-3 lg:grid-cols-1">
            <Stat icon="network" label="Address" value={demo.address} />
            <Stat icon="clock" label="Uptime" value={demo.uptime} />
            <Stat icon="cpu" label="CPU" value={`${demo.cpu.used}% of ${demo.cpu.limit}%`} />
            <Stat icon="memory" label="Memory" value={`${formatMegabytes(demo.memory.used)} of ${formatMegabytes(demo.memory.limit)}`} />
            <Stat icon="disk" label="Disk" value={`${formatMegabytes(demo.disk.used)} of ${formatMegabytes(demo.disk.limit)}`} />
          </div>
          <Slot id="server.console.info.after" />
          <Slot id="server.console.sidebar" />
        </aside>
      </div>
      <Slot id="server.console.footer" />
    </>
  )
}
