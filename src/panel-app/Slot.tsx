// A slot container (docs/frontend.md "Slots"): a plain element the bridge finds by `data-host-slot` and
// mounts extension components into. React renders it without children and so never touches what the
// bridge puts inside; `context` (JSON) is what a per-row slot tells its components about its row.

export interface SlotProps {
  readonly id: string
  readonly context?: Readonly<Record<string, unknown>>
  readonly className?: string
}

export const Slot = ({ className, context, id }: SlotProps) => (
  <div
    className={className === undefined ? "host-slot" : `host-slot ${className}`}
    data-host-slot={id}
    data-host-context={context === undefined ? undefined : JSON.stringify(context)}
  />
)
