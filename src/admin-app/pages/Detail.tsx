import { useState } from "react"
import { Link, useNavigate, useParams, useSearchParams } from "react-router-dom"
import { useOperations } from "../actions.js"
import { api, type Data, type Detail, extensionPath } from "../api.js"
import {
  Badge,
  Button,
  Empty,
  ErrorNotice,
  formatTime,
  HealthBadge,
  Icon,
  Notice,
  relativeTime,
  Section,
  SignatureBadge,
  Spinner,
  StatusBadge,
  useLoad
} from "../ui.js"
import { ActivityTable } from "./Activity.js"
import { SettingsFormView } from "./Settings.js"

// Extension detail (docs/admin.md): the manifest summary, what it brings (routes per group,
// permissions, slots, pages, migrations and their status, schedules with their next run, commands,
// listeners), health with run-now, the doctor's report (the checks of `host doctor <id>`), its settings
// form and its activity.

const tabs = [
  { id: "overview", label: "Overview" },
  { id: "settings", label: "Settings" },
  { id: "capabilities", label: "Capabilities" },
  { id: "health", label: "Health" },
  { id: "doctor", label: "Doctor" },
  { id: "activity", label: "Activity" }
] as const

const List = ({ items, empty }: { readonly items: ReadonlyArray<string>; readonly empty: string }) =>
  items.length === 0 ? <p className="ha-muted">{empty}</p> : (
    <div className="ha-chips">{items.map((item) => <code className="ha-chip" key={item}>{item}</code>)}</div>
  )

const Overview = ({ detail }: { readonly detail: Detail }) => (
  <div className="ha-grid">
    <Section id="about-title" title="About">
      <dl className="ha-dl">
        <dt>Description</dt><dd>{detail.description || "—"}</dd>
        <dt>Version</dt><dd>{detail.version}{detail.updateAvailable === null ? null : <> <Badge tone="info">update {detail.updateAvailable} available</Badge></>}</dd>
        <dt>License</dt><dd>{detail.license ?? "—"}</dd>
        <dt>Authors</dt><dd>{detail.authors.length === 0 ? "—" : detail.authors.map((author) => author.name).join(", ")}</dd>
        <dt>Source</dt>
        <dd>
          {detail.source.registry === undefined ? <code className="ha-break">{detail.source.type} {detail.source.ref}</code> : (
            <>
              <div data-testid="source-registry">From the registry <strong className="ha-registry-name">{detail.source.registry}</strong></div>
              <code className="ha-break ha-small" title="The archive it was installed from">{detail.source.ref}</code>
            </>
          )}
        </dd>
        <dt>Signature</dt><dd><SignatureBadge status={detail.signature.status} />{detail.signature.key === null ? null : <code className="ha-small ha-break"> {detail.signature.key.slice(0, 16)}…</code>}</dd>
        <dt>Installed</dt><dd title={formatTime(detail.installedAt)}>{relativeTime(detail.installedAt)}</dd>
        <dt>Updated</dt><dd title={formatTime(detail.updatedAt)}>{relativeTime(detail.updatedAt)}</dd>
      </dl>
    </Section>
    <Section id="requirements-title" title="Requirements and dependencies">
      <p className="ha-label">Requires</p>
      {detail.requires.ranges.length === 0 ? <p className="ha-muted">No version requirements.</p> : (
        <ul className="ha-checks">
          {detail.requires.ranges.map((range) => (
            <li className={range.ok ? "ha-checks__ok" : "ha-checks__fail"} key={range.key}>
              <span aria-hidden="true">{range.ok ? "✓" : "✕"}</span>
              <strong>{range.key}</strong> <code>{range.range}</code> <span className="ha-muted">this panel: {range.actual ?? "unknown"}</span>
            </li>
          ))}
        </ul>
      )}
      <p className="ha-label">Depends on</p>
      {detail.dependencies.length === 0 ? <p className="ha-muted">No dependencies.</p> : (
        <ul className="ha-checks">
          {detail.dependencies.map((dependency) => (
            <li className={dependency.ok ? "ha-checks__ok" : "ha-checks__fail"} key={dependency.id}>
              <span aria-hidden="true">{dependency.ok ? "✓" : "✕"}</span>
              <Link className="ha-link" to={`/admin/host/extensions/${dependency.id}`}><code>{dependency.id}</code></Link> <code>{dependency.range}</code>
              <span className="ha-muted"> {dependency.installed === null ? "not installed" : `${dependency.installed}${dependency.enabled ? "" : " (disabled)"}`}</span>
            </li>
          ))}
        </ul>
      )}
      <p className="ha-label">Needed by</p>
      {detail.dependents.length === 0 ? <p className="ha-muted">No installed extension depends on it.</p> : (
        <div className="ha-chips">
          {detail.dependents.map((dependent) => (
            <Link className="ha-chip ha-link" key={dependent.id} to={`/admin/host/extensions/${dependent.id}`}>{dependent.id}{dependent.enabled ? "" : " (disabled)"}</Link>
          ))}
        </div>
      )}
    </Section>
    <Section id="desired-title" title="Desired state">
      {detail.managed === null ? (
        <p className="ha-muted">Not listed in the desired-state file: managed here and with the CLI. <Link className="ha-link" to="/admin/host/desired-state">Adopt</Link> adds it.</p>
      ) : (
        <p>
          Listed in <code className="ha-break">{detail.managed.file}</code>
          {detail.managed.absent ? " as absent" : detail.managed.enabled ? " (enabled)" : " (disabled)"}
          {detail.managed.settings.length > 0 ? <>; it sets {detail.managed.settings.map((key) => <code className="ha-chip" key={key}>{key}</code>)}</> : null}.
          {" "}Changes made here show as drift on the <Link className="ha-link" to="/admin/host/desired-state">Desired state</Link> screen.
        </p>
      )}
    </Section>
  </div>
)

/** Routes as loaded, per group, each under the URL prefix its group is served at. */
const RoutesSection = ({ detail }: { readonly detail: Detail }) => {
  const capabilities = detail.capabilities
  const groups = Object.entries(capabilities.routes)
  return (
    <Section id="routes-title" title="Routes">
      {groups.every(([, routes]) => routes.length === 0) ? <Empty>No routes{Object.keys(capabilities.routeFiles).length > 0 ? ` loaded (declared files: ${Object.values(capabilities.routeFiles).join(", ")})` : ""}.</Empty> : (
        <div className="ha-table-wrap">
          <table className="ha-table ha-table--compact" data-testid="routes-table">
            <thead><tr><th>Group</th><th>Method</th><th>Path</th><th>Permission</th></tr></thead>
            <tbody>
              {groups.flatMap(([group, routes]) => routes.map((route) => (
                <tr key={`${group} ${route.method} ${route.path}`}>
                  <td><Badge>{group}</Badge></td>
                  <td><code>{route.method}</code></td>
                  <td><code className="ha-break">{group === "api-client" ? "/api/client/host/" : group === "admin" ? "/admin/host/" : "/host/"}{detail.id}{route.path === "/" ? "" : route.path}</code></td>
                  <td>{route.permission === null ? <span className="ha-muted">—</span> : <code>{route.permission}</code>}</td>
                </tr>
              )))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  )
}

/** The short lists side by side: permissions, slots, pages, commands and listeners. */
const DeclaredLists = ({ capabilities }: { readonly capabilities: Detail["capabilities"] }) => (
  <div className="ha-grid">
    <Section id="permissions-title" title="Permissions"><List empty="Declares no permissions." items={capabilities.permissions} /></Section>
    <Section id="slots-title" title="Slots"><List empty="Renders into no slots." items={capabilities.slots} /></Section>
    <Section id="pages-title" title="Pages">
      {capabilities.pages.length === 0 ? <p className="ha-muted">Registers no pages.</p> : (
        <ul className="ha-list">{capabilities.pages.map((page) => <li key={`${page.area} ${page.path}`}><Badge>{page.area}</Badge> <code>{page.path}</code></li>)}</ul>
      )}
    </Section>
    <Section id="commands-title" title="Commands and listeners">
      <p className="ha-label">Commands</p>
      {capabilities.commands.length === 0 ? <p className="ha-muted">None.</p> : (
        <ul className="ha-list">{capabilities.commands.map((command) => <li key={command.name}><code>host {command.name}</code> <span className="ha-muted">{command.description}</span></li>)}</ul>
      )}
      <p className="ha-label">Listens to</p>
      <List empty="No event listeners." items={capabilities.listeners} />
    </Section>
  </div>
)

const MigrationsSection = ({ migrations }: { readonly migrations: Detail["capabilities"]["migrations"] }) => (
  <Section id="migrations-title" title="Migrations">
    {migrations.length === 0 ? <Empty>No migrations.</Empty> : (
      <div className="ha-table-wrap">
        <table className="ha-table ha-table--compact" data-testid="migrations-table">
          <thead><tr><th>Migration</th><th>Status</th><th className="ha-num">Batch</th><th>Ran</th></tr></thead>
          <tbody>
            {migrations.map((migration) => (
              <tr key={migration.name}>
                <td><code className="ha-break">{migration.name}</code></td>
                <td><Badge tone={migration.status === "ran" ? "success" : migration.status === "pending" ? "warning" : "danger"}>{migration.status}</Badge></td>
                <td className="ha-num">{migration.batch ?? "—"}</td>
                <td title={formatTime(migration.ranAt)}>{relativeTime(migration.ranAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </Section>
)

const SchedulesSection = ({ schedules }: { readonly schedules: Detail["capabilities"]["schedules"] }) => (
  <Section id="schedules-title" title="Schedules">
    {schedules.length === 0 ? <Empty>No scheduled tasks.</Empty> : (
      <div className="ha-table-wrap">
        <table className="ha-table ha-table--compact" data-testid="schedules-table">
          <thead><tr><th>Task</th><th>Command</th><th>Cron</th><th>Next run</th></tr></thead>
          <tbody>
            {schedules.map((task) => (
              <tr key={task.id}>
                <td>{task.label} <span className="ha-muted ha-small">{task.id}</span></td>
                <td><code>{task.command}</code></td>
                <td><code>{task.cron}</code></td>
                <td title={formatTime(task.nextRun)}>{relativeTime(task.nextRun)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </Section>
)

const Capabilities = ({ detail }: { readonly detail: Detail }) => (
  <div className="ha-stack">
    {!detail.loaded ? <Notice tone="info"><p>It is not running ({detail.status}), so its routes, commands and listeners as loaded are not listed; declared items are.</p></Notice> : null}
    <RoutesSection detail={detail} />
    <DeclaredLists capabilities={detail.capabilities} />
    <MigrationsSection migrations={detail.capabilities.migrations} />
    <SchedulesSection schedules={detail.capabilities.schedules} />
  </div>
)

const Health = ({ detail }: { readonly detail: Detail }) => {
  const [report, setReport] = useState<Data<"healthNow"> | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      setReport(await api("healthNow", { path: extensionPath(detail.id) }))
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const declared = detail.capabilities.healthChecks
  return (
    <Section
      actions={<Button disabled={busy || !detail.loaded} kind="primary" onClick={() => void run()} testId="run-health">{busy ? "Running…" : "Run checks now"}</Button>}
      id="health-title"
      title="Health checks"
    >
      {!detail.loaded ? <p className="ha-muted">It is not running, so its checks cannot run.</p> : null}
      <ErrorNotice error={error} title="The checks could not run" />
      {report === undefined ? (
        declared.length === 0 ? <Empty>It declares no health checks.</Empty> : (
          <ul className="ha-health">
            {declared.map((check) => (
              <li key={check.id}><HealthBadge status="unknown" /> <strong>{check.label}</strong> <span className="ha-muted">{check.id}{check.severity === undefined ? "" : ` · ${check.severity}`} · not run yet</span></li>
            ))}
          </ul>
        )
      ) : (
        <>
          <p className="ha-muted ha-small" data-testid="health-checked">Checked {formatTime(report.checkedAt ?? null)}</p>
          {report.checks.length === 0 ? <Empty>No checks reported.</Empty> : (
            <ul className="ha-health" data-testid="health-results">
              {report.checks.map((check) => (
                <li key={check.id}>
                  <HealthBadge status={check.status} /> <strong>{check.label}</strong>
                  <span className="ha-muted"> {check.id}{check.severity === null ? "" : ` · ${check.severity}`}</span>
                  {check.message === null ? null : <div className="ha-small">{check.message}</div>}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Section>
  )
}

const verdictTone = { ok: "success", warning: "warning", fail: "danger" } as const
const verdictLabel = { ok: "ok", warning: "warning", fail: "fails" } as const

/** The report of `host doctor <id>`: what is not as it should be first, each with its fix. */
const Doctor = ({ detail }: { readonly detail: Detail }) => {
  const report = useLoad((signal) => api("doctor", { path: extensionPath(detail.id), signal }), [detail.id])
  const data = report.data
  const order = { fail: 0, warning: 1, ok: 2 } as const
  return (
    <Section
      actions={<Button disabled={report.loading} onClick={() => report.reload()} testId="run-doctor">{report.loading ? "Checking…" : "Check again"}</Button>}
      id="doctor-title"
      title="Doctor"
    >
      <p className="ha-muted ha-small">The checks of <code>host doctor {detail.id}</code>: why an extension does not load, show or answer, each with what was seen and the fix.</p>
      <ErrorNotice error={report.error} title="The doctor could not run" />
      {data === undefined ? (report.loading ? <Spinner /> : null) : (
        <>
          <p className="ha-doctor__summary" data-testid="doctor-summary">
            {data.healthy && data.summary.warning === 0
              ? <Badge tone="success">all {data.summary.ok} checks pass</Badge>
              : <>{data.summary.fail > 0 ? <Badge tone="danger">{data.summary.fail} failing</Badge> : null} {data.summary.warning > 0 ? <Badge tone="warning">{data.summary.warning} warning{data.summary.warning === 1 ? "" : "s"}</Badge> : null} <span className="ha-muted ha-small">{data.summary.ok} ok</span></>}
          </p>
          {data.sections.map((section) => (
            <div className="ha-doctor" key={section.subject}>
              {section.subject === detail.id ? null : <p className="ha-label">{section.subject === "host" ? "The panel" : section.subject}</p>}
              <ul className="ha-doctor__list" data-testid={`doctor-${section.subject === "host" ? "panel" : "checks"}`}>
                {[...section.checks].sort((a, b) => order[a.verdict] - order[b.verdict]).map((check) => (
                  <li className={`ha-doctor__check ha-doctor__check--${check.verdict}`} data-check={check.id} data-verdict={check.verdict} key={check.id}>
                    <Badge tone={verdictTone[check.verdict]}>{verdictLabel[check.verdict]}</Badge>
                    <div className="ha-min0">
                      <strong>{check.id}</strong> <span>{check.evidence}</span>
                      {check.fix === "" ? null : <div className="ha-small ha-doctor__fix">Fix: {check.fix}</div>}
                    </div>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </>
      )}
    </Section>
  )
}

const SettingsTab = ({ detail }: { readonly detail: Detail }) => {
  const form = useLoad((signal) => api("readSettings", { path: extensionPath(detail.id), signal }), [detail.id])
  const [current, setCurrent] = useState<Data<"readSettings"> | undefined>(undefined)
  const shown = current ?? form.data
  return (
    <Section id="settings-title" title={shown?.title ?? "Settings"}>
      <ErrorNotice error={form.error} title="The settings could not be read" />
      {shown === undefined ? <Spinner /> : <SettingsFormView extensionId={detail.id} form={shown} onSaved={setCurrent} />}
    </Section>
  )
}

type Operations = ReturnType<typeof useOperations>

/** The extension named by the address, the tab chosen there, and its operations (a remove leaves the page). */
const useDetail = () => {
  const { name = "", vendor = "" } = useParams()
  const id = `${vendor}/${name}`
  const [params, setParams] = useSearchParams()
  const tab = tabs.some((candidate) => candidate.id === params.get("tab")) ? params.get("tab")! : "overview"
  const selectTab = (next: string) => setParams(next === "overview" ? {} : { tab: next }, { replace: true })
  const detail = useLoad((signal) => api("detail", { path: extensionPath(id), signal }), [id])
  const navigate = useNavigate()
  const operations = useOperations((operation) => (operation === "remove" ? navigate(`/admin/host/extensions?removed=${encodeURIComponent(id)}`) : detail.reload()))
  return { id, tab, selectTab, detail, operations }
}

/** Name, version and badges, with the enable or disable, update and remove actions. */
const DetailHead = ({ data, id, start }: { readonly data: Detail; readonly id: string; readonly start: Operations["start"] }) => {
  const of = { id, name: data.name, version: data.version }
  return (
    <div className="ha-page-head">
      <div className="ha-min0">
        <h1>{data.name} <span className="ha-muted ha-version">{data.version}</span></h1>
        <p className="ha-muted"><code>{data.id}</code></p>
        <div className="ha-badges">
          <StatusBadge status={data.status} />
          <SignatureBadge status={data.signature.status} />
          {data.managed === null ? null : <Badge tone="info">desired state</Badge>}
        </div>
      </div>
      <div className="ha-actions">
        {data.enabled ? (
          <Button onClick={() => start({ operation: "disable", ...of })} testId="detail-disable">Disable</Button>
        ) : (
          <Button onClick={() => start({ operation: "enable", ...of })} testId="detail-enable">Enable</Button>
        )}
        {data.updateAvailable === null ? null : (
          <Button kind="primary" onClick={() => start({ operation: "update", ...of, target: data.updateAvailable ?? undefined })}>Update to {data.updateAvailable}</Button>
        )}
        <Button kind="danger" onClick={() => start({ operation: "remove", ...of })} testId="detail-remove">Remove</Button>
      </div>
    </div>
  )
}

/** What went wrong with it lately: its components' frontend errors, and a quarantine or corrupt manifest. */
const Problems = ({ data }: { readonly data: Detail }) => (
  <>
    {data.frontendErrors.length === 0 ? null : (
      <Notice title="Recent frontend errors (its components failed to render; the rest of each page kept working)" tone="warning">
        <ul className="ha-list" data-testid="frontend-errors">
          {data.frontendErrors.map((entry) => (
            <li key={`${entry.message} ${entry.firstAt}`}>
              <code className="ha-break">{entry.message}</code>
              <span className="ha-muted ha-small"> ×{entry.count} · {entry.slot ?? "page"} · {entry.version} · last {relativeTime(entry.lastAt)} ({entry.user})</span>
            </li>
          ))}
        </ul>
      </Notice>
    )}
    {data.quarantine === null ? null : (
      <Notice title={data.status === "corrupt" ? "Corrupt: its stored manifest cannot be read" : "Quarantined: the runtime did not load it"} tone="error">
        <p data-testid="quarantine">{data.quarantine}</p>
        <p className="ha-small">The rest of the panel keeps running. Fix the cause (update, reinstall, or satisfy its dependency), or disable it.</p>
      </Notice>
    )}
  </>
)

const TabList = ({ data, onSelect, tab }: { readonly data: Detail; readonly tab: string; readonly onSelect: (tab: string) => void }) => (
  <div aria-label="Sections" className="ha-tabs" role="tablist">
    {tabs.map((candidate) => (
      <button
        aria-selected={tab === candidate.id}
        className="ha-tab"
        data-testid={`tab-${candidate.id}`}
        key={candidate.id}
        onClick={() => onSelect(candidate.id)}
        role="tab"
        type="button"
      >
        {candidate.label}
        {candidate.id === "settings" && data.capabilities.settings > 0 ? <span className="ha-count">{data.capabilities.settings}</span> : null}
      </button>
    ))}
  </div>
)

const TabPanel = ({ data, id, tab }: { readonly data: Detail; readonly id: string; readonly tab: string }) => (
  <div role="tabpanel">
    {tab === "overview" ? <Overview detail={data} /> : null}
    {tab === "settings" ? <SettingsTab detail={data} /> : null}
    {tab === "capabilities" ? <Capabilities detail={data} /> : null}
    {tab === "health" ? <Health detail={data} /> : null}
    {tab === "doctor" ? <Doctor detail={data} /> : null}
    {tab === "activity" ? <Section id="ext-activity" title="Activity"><ActivityTable extension={id} pageSize={20} showFilters /></Section> : null}
  </div>
)

export const DetailPage = () => {
  const { detail, id, operations, selectTab, tab } = useDetail()
  const data = detail.data
  return (
    <>
      <nav aria-label="Breadcrumb" className="ha-breadcrumb">
        <Link className="ha-link" to="/admin/host/extensions"><Icon name="back" className="ha-inline-icon" /> Extensions</Link>
      </nav>
      {operations.notice}
      <ErrorNotice error={detail.error} title={`${id} could not be read`} />
      {data === undefined ? (detail.loading ? <Spinner /> : null) : (
        <>
          <DetailHead data={data} id={id} start={operations.start} />
          <Problems data={data} />
          <TabList data={data} onSelect={selectTab} tab={tab} />
          <TabPanel data={data} id={id} tab={tab} />
        </>
      )}
      {operations.dialog}
    </>
  )
}
