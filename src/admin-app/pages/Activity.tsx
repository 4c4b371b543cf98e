import { useSearchParams } from "react-router-dom"
import { Link } from "react-router-dom"
import { type Answer, api, request } from "../api.js"
import { Badge, Button, Empty, ErrorNotice, formatTime, relativeTime, Section, Spinner, type Tone, useLoad } from "../ui.js"

// Activity (docs/admin.md): the audit trail, newest first, a page at a time, filtered by extension and
// action. The filters live in the URL, so a filtered view can be linked to.

const actions = ["installed", "updated", "enabled", "disabled", "removed"] as const
const actionFilter = (action: string) => actions.find((known) => known === action)
const actionTone: Readonly<Record<string, Tone>> = { installed: "primary", updated: "info", enabled: "success", disabled: "neutral", removed: "danger" }

const actorOf = (context: Readonly<Record<string, unknown>>): string => {
  const actor = context.actor as { type?: unknown; user?: unknown } | undefined
  if (actor === undefined) return "—"
  return `${String(actor.type ?? "?")}${actor.user === undefined ? "" : ` (${String(actor.user)})`}`
}

/**
 * The page of activity the URL's filters and offset name, the extension ids the filter suggests, and
 * `set`, which changes one filter in the URL (back to the first page unless it is the offset itself).
 */
const useActivity = (extension: string | undefined, pageSize: number, showFilters: boolean) => {
  const [params, setParams] = useSearchParams()
  const filterExtension = extension ?? params.get("extension") ?? ""
  const action = params.get("action") ?? ""
  const offset = Math.max(0, Number(params.get("offset") ?? 0) || 0)
  const query = {
    limit: pageSize,
    offset,
    ...(filterExtension === "" ? {} : { extension: filterExtension }),
    // An action the filter does not know is left out, as the API would refuse it.
    ...(actionFilter(action) === undefined ? {} : { action: actionFilter(action) })
  }
  const page = useLoad((signal) => request("activityPage", { query, signal }), [JSON.stringify(query)])
  const extensions = useLoad((signal) => (showFilters && extension === undefined ? api("overview", { signal }) : Promise.resolve([])), [])
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params)
    if (value === "") next.delete(key)
    else next.set(key, value)
    if (key !== "offset") next.delete("offset")
    setParams(next)
  }
  return { filterExtension, action, offset, page, extensions, set }
}

type Activity = ReturnType<typeof useActivity>

/** By extension (unless the table is one extension's) and by action. */
const Filters = ({ activity, extension }: { readonly activity: Activity; readonly extension: string | undefined }) => (
  <div className="ha-filters" role="search">
    {extension === undefined ? (
      <label className="ha-field ha-field--inline">
        <span className="ha-label">Extension</span>
        <input
          className="host-input"
          data-testid="filter-extension"
          list="ha-extension-ids"
          onChange={(event) => activity.set("extension", event.target.value.trim())}
          placeholder="vendor/name"
          value={activity.filterExtension}
        />
        <datalist id="ha-extension-ids">
          {(activity.extensions.data ?? []).map((row) => <option key={row.id} value={row.id} />)}
        </datalist>
      </label>
    ) : null}
    <label className="ha-field ha-field--inline">
      <span className="ha-label">Action</span>
      <select className="host-input" data-testid="filter-action" onChange={(event) => activity.set("action", event.target.value)} value={activity.action}>
        <option value="">All actions</option>
        {actions.map((name) => <option key={name} value={name}>{name}</option>)}
      </select>
    </label>
  </div>
)

const Rows = ({ rows }: { readonly rows: Answer<"activityPage">["data"] }) => (
  <div className="ha-table-wrap">
    <table className="ha-table ha-table--cards" data-testid="activity-table">
      <thead>
        <tr><th>When</th><th>Extension</th><th>Action</th><th>Summary</th><th>By</th></tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <td data-label="When" title={formatTime(row.createdAt)}>{relativeTime(row.createdAt)}</td>
            <td data-label="Extension"><Link className="ha-link" to={`/admin/host/extensions/${row.extensionId}`}><code>{row.extensionId}</code></Link></td>
            <td data-label="Action"><Badge tone={actionTone[row.action] ?? "neutral"}>{row.action}</Badge></td>
            <td data-label="Summary">{row.summary}{typeof row.context.version === "string" && !row.summary.includes(row.context.version) ? <span className="ha-muted"> · {row.context.version}</span> : null}</td>
            <td data-label="By" className="ha-small">{actorOf(row.context)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

/** Which entries are shown of how many, and the way to newer and older ones. */
const Pager = ({ offset, onOffset, pageSize, shown, total }: { readonly offset: number; readonly shown: number; readonly total: number; readonly pageSize: number; readonly onOffset: (offset: number) => void }) => (
  <nav aria-label="Pages" className="ha-pager">
    <span className="ha-muted ha-small" data-testid="activity-range">
      {total === 0 ? "0 entries" : `${offset + 1}–${Math.min(offset + shown, total)} of ${total}`}
    </span>
    <div className="ha-actions">
      <Button disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>Newer</Button>
      <Button disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)} testId="activity-older">Older</Button>
    </div>
  </nav>
)

export const ActivityTable = ({ extension, pageSize = 25, showFilters = true }: { readonly extension?: string; readonly pageSize?: number; readonly showFilters?: boolean }) => {
  const activity = useActivity(extension, pageSize, showFilters)
  const { offset, page } = activity
  const total = page.data?.meta.total ?? 0
  const rows = page.data?.data ?? []
  return (
    <div className="ha-stack">
      {showFilters ? <Filters activity={activity} extension={extension} /> : null}
      <ErrorNotice error={page.error} title="The activity could not be read" />
      {page.loading && page.data === undefined ? <Spinner /> : rows.length === 0 ? <Empty>No activity matches.</Empty> : <Rows rows={rows} />}
      <Pager offset={offset} onOffset={(next) => activity.set("offset", String(next))} pageSize={pageSize} shown={rows.length} total={total} />
    </div>
  )
}

export const ActivityPage = () => (
  <>
    <div className="ha-page-head">
      <div>
        <h1>Activity</h1>
        <p className="ha-muted">Every install, update, enable, disable and remove, and by whom: the CLI, an admin here, or the reconciler.</p>
      </div>
    </div>
    <Section id="activity-title" title="Audit trail">
      <ActivityTable />
    </Section>
  </>
)
