import type { ReactNode } from "react"
import type { ServerSummary } from "../../api.js"
import type { DemoServer } from "../../demo.js"
import { Icon } from "../../ui.js"

// The pieces the server area's pages share.

/** What every page of the server area is drawn from: the server's summary and its demo data. */
export interface PageProps {
  readonly server: ServerSummary
  readonly demo: DemoServer
}

export const Stat = ({ icon, label, value }: { readonly icon: string; readonly label: string; readonly value: ReactNode }) => (
  <div className="host-stat">
    <Icon className="h-5 w-5 shrink-0 text-host-primary-light" name={icon} />
    <div className="min-w-0">
      <p className="text-xs text-host-text-muted">{label}</p>
      <p className="break-words text-sm font-medium text-host-text-primary">{value}</p>
    </div>
  </div>
)

export const Table = ({ children, head }: { readonly head: ReadonlyArray<string>; readonly children: ReactNode }) => (
  <div className="overflow-x-auto">
    <table className="host-table">
      <thead>
        <tr>{head.map((cell, index) => <th key={index}>{cell}</th>)}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)
