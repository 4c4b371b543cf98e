import { type FormEvent, useState } from "react"
import { Link, useSearchParams } from "react-router-dom"
import { describeResult, useOperations } from "../actions.js"
import { type Answer, api, request, type RegistryEntry } from "../api.js"
import { Badge, Button, Dialog, Empty, ErrorNotice, Notice, Section, Spinner, useLoad } from "../ui.js"

// Registry (docs/admin.md): search the configured registries by id, name, description and tags; every
// version with `requires` checked against this panel; install a chosen version from the registry of the
// entry (docs/registry.md "Several registries"); update what is installed.

type RegistrySummary = Answer<"registrySearch">["meta"]["registries"][number]

const Registries = ({ registries }: { readonly registries: ReadonlyArray<RegistrySummary> }) =>
  registries.length === 1 ? (
    <>From the registry <strong className="ha-registry-name">{registries[0]!.name}</strong>, <code className="ha-break">{registries[0]!.url}</code> ({registries[0]!.source}, {new Date(registries[0]!.fetchedAt).toLocaleString()}){registries[0]!.signed ? " · signed index" : ""}</>
  ) : (
    <>
      From {registries.length} registries, searched in this order:
      <ol className="ha-list ha-small" data-testid="registry-sources">
        {registries.map((registry, position) => (
          <li key={registry.name}>
            {position + 1}. <strong>{registry.name}</strong> <code className="ha-break">{registry.url}</code> — {registry.extensions} extension{registry.extensions === 1 ? "" : "s"}, {registry.source}{registry.signed ? ", signed index" : ""}
          </li>
        ))}
      </ol>
    </>
  )

const InstallVersion = ({ entry, onClose, onDone }: { readonly entry: RegistryEntry; readonly onClose: () => void; readonly onDone: (message: string) => void }) => {
  const [version, setVersion] = useState(entry.latest)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const install = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const result = await api("registryInstall", { body: { id: entry.id, version, registry: entry.registry } })
      onDone(describeResult(result))
    } catch (failure) {
      setError(failure)
      setBusy(false)
    }
  }
  const chosen = entry.versions.find((candidate) => candidate.version === version)
  return (
    <Dialog
      actions={<><Button onClick={onClose}>Cancel</Button><Button disabled={busy || chosen?.requires === false} kind="primary" onClick={() => void install()} testId="confirm-registry-install">{busy ? "Installing…" : `Install ${version}`}</Button></>}
      onClose={onClose}
      title={`Install ${entry.name}`}
    >
      <p><code>{entry.id}</code> from the registry <strong>{entry.registry}</strong> — {entry.description}</p>
      <label className="ha-field">
        <span className="ha-label">Version</span>
        <select className="host-input" data-testid="registry-version" onChange={(event) => setVersion(event.target.value)} value={version}>
          {entry.versions.map((candidate) => (
            <option key={candidate.version} value={candidate.version}>
              {candidate.version}{candidate.latest ? " (latest)" : ""}{candidate.requires ? "" : " — requires not met"}
            </option>
          ))}
        </select>
      </label>
      {Object.keys(entry.dependencies).length > 0 ? (
        <p className="ha-muted">Depends on {Object.entries(entry.dependencies).map(([id, range]) => `${id} ${range}`).join(", ")}: install those first.</p>
      ) : null}
      {entry.requires.ok ? null : <Notice tone="error" title="This panel does not meet its requires"><ul className="ha-list">{entry.requires.unmet.map((line) => <li key={line}>{line}</li>)}</ul></Notice>}
      <p className="ha-muted ha-small">The archive is downloaded, its checksum and signature verified, and it is installed as one all-or-nothing operation (<code>host add {entry.id}@{version} <span style={{ whiteSpace: "nowrap" }}>--registry {entry.registry}</span></code>).</p>
      <ErrorNotice error={error} title="Install failed" />
    </Dialog>
  )
}

export const RegistryPage = () => {
  const [params, setParams] = useSearchParams()
  const query = params.get("q") ?? ""
  const [text, setText] = useState(query)
  const result = useLoad((signal) => request("registrySearch", { query: { q: query }, signal }), [query])
  const [installing, setInstalling] = useState<RegistryEntry | undefined>(undefined)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const operations = useOperations(() => result.reload())
  const search = (event: FormEvent) => {
    event.preventDefault()
    setParams(text.trim() === "" ? {} : { q: text.trim() })
  }
  const entries = result.data?.data ?? []
  return (
    <>
      <div className="ha-page-head">
        <div>
          <h1>Registry</h1>
          <p className="ha-muted">
            {result.data === undefined ? "Extensions from the configured registries." : <Registries registries={result.data.meta.registries} />}
          </p>
        </div>
      </div>
      <form className="ha-search" onSubmit={search} role="search">
        <input aria-label="Search the registry" className="host-input" data-testid="registry-search" onChange={(event) => setText(event.target.value)} placeholder="Search by id, name, description or tag" type="search" value={text} />
        <Button kind="primary" type="submit">Search</Button>
      </form>
      {result.data?.meta.warning ? <Notice tone="warning"><p>{result.data.meta.warning}</p></Notice> : null}
      {message === undefined ? null : <Notice tone="success"><p data-testid="registry-result">{message}</p></Notice>}
      {operations.notice}
      <ErrorNotice error={result.error} title="The registry could not be read" />
      <Section id="results-title" title={query === "" ? `All extensions (${entries.length})` : `Results for “${query}” (${entries.length})`}>
        {result.loading && result.data === undefined ? <Spinner /> : entries.length === 0 ? <Empty>Nothing matches.</Empty> : (
          <ul className="ha-cards" data-testid="registry-results">
            {entries.map((entry) => (
              <li className="ha-entry" data-entry={entry.id} data-registry={entry.registry} key={`${entry.registry} ${entry.id}`}>
                <div className="ha-entry__head">
                  <div className="ha-min0">
                    <h3>{entry.name} <span className="ha-muted ha-version">{entry.latest}</span></h3>
                    <p className="ha-muted ha-small"><code>{entry.id}</code> · <span className="ha-nowrap">from <strong className="ha-registry-name">{entry.registry}</strong></span>{entry.authors.length > 0 ? ` · ${entry.authors.map((author) => author.name).join(", ")}` : ""}{entry.license ? ` · ${entry.license}` : ""}</p>
                  </div>
                  {entry.installed === null
                    ? <Badge>not installed</Badge>
                    : entry.installed.registry !== null && entry.installed.registry !== entry.registry
                    ? <Badge>installed {entry.installed.version} from {entry.installed.registry}</Badge>
                    : <Badge tone="success">installed {entry.installed.version}</Badge>}
                </div>
                {entry.resolvesHere ? null : <p className="ha-small ha-muted">An earlier registry lists {entry.id} too: <code>host add {entry.id}</code> takes it from there; Install… here takes this registry's.</p>}
                <p>{entry.description}</p>
                <div className="ha-chips">
                  {entry.tags.map((tag) => <button className="ha-chip ha-chip--tag" key={tag} onClick={() => { setText(tag); setParams({ q: tag }) }} type="button">#{tag}</button>)}
                </div>
                <p className="ha-small">
                  {entry.requires.ok
                    ? <span className="ha-ok">✓ requires met{entry.requires.ranges.length > 0 ? `: ${entry.requires.ranges.map((range) => `${range.key} ${range.range}`).join(", ")}` : " (none declared)"}</span>
                    : <span className="ha-fail">✕ {entry.requires.unmet.join("; ")}</span>}
                </p>
                <p className="ha-small ha-muted">Versions: {entry.versions.map((version) => version.version).join(", ")}</p>
                <div className="ha-actions">
                  {entry.installed === null ? (
                    <Button kind="primary" onClick={() => setInstalling(entry)} testId={entry.resolvesHere ? `install-${entry.id}` : `install-${entry.registry}-${entry.id}`}>Install…</Button>
                  ) : (
                    <Link className="host-button ha-button" to={`/admin/host/extensions/${entry.id}`}>Open</Link>
                  )}
                  {entry.updateAvailable === null || entry.installed === null ? null : (
                    <Button kind="primary" onClick={() => operations.start({ operation: "update", id: entry.id, name: entry.name, version: entry.installed!.version, target: entry.updateAvailable ?? undefined })} testId={`registry-update-${entry.id}`}>
                      Update to {entry.updateAvailable}
                    </Button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </Section>
      {installing === undefined ? null : (
        <InstallVersion entry={installing} onClose={() => setInstalling(undefined)} onDone={(text) => { setInstalling(undefined); setMessage(text); result.reload() }} />
      )}
      {operations.dialog}
    </>
  )
}
