import { Link } from "react-router-dom"
import { fileContents, files, formatBytes } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, Icon, MenuItem, PageTitle, RowMenu } from "../../ui.js"
import type { PageProps } from "./shared.js"

export const FilesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="/home/container" icon="folder">Files</PageTitle>
    <div className="mb-3 flex flex-wrap items-center justify-end gap-2">
      <Slot className="flex flex-wrap items-center gap-2" id="server.files.actions" />
      <button className="host-button" type="button">New folder</button>
      <button className="host-button" type="button">New file</button>
      <button className="host-button host-button--primary" type="button">Upload</button>
    </div>
    <Slot id="server.files.header" />
    <Card>
      <ul className="divide-y divide-host-border" data-testid="file-list">
        {files.map((file) => {
          const context = { file: { name: file.name, path: `/${file.name}`, directory: file.directory, size: file.size } }
          const label = (
            <span className="flex min-w-0 items-center gap-3">
              <Icon className={`h-5 w-5 shrink-0 ${file.directory ? "text-host-warning" : "text-host-text-muted"}`} name={file.directory ? "folder" : "file"} />
              <span className="truncate">{file.name}</span>
            </span>
          )
          return (
            <li className="host-list-row" key={file.name}>
              {file.directory || fileContents[file.name] === undefined
                ? <span className="min-w-0 flex-1 text-host-text-primary">{label}</span>
                : (
                  <Link className="min-w-0 flex-1 text-host-text-primary hover:text-host-primary-light" to={`/server/${server.uuid}/files/edit/${encodeURIComponent(file.name)}`}>
                    {label}
                  </Link>
                )}
              <span className="hidden w-24 text-right text-xs text-host-text-muted sm:block">{file.directory ? "—" : formatBytes(file.size)}</span>
              <span className="hidden w-28 text-right text-xs text-host-text-muted md:block">{file.modified}</span>
              <RowMenu context={context} label={`Actions for ${file.name}`} slot="server.files.dropdown">
                <MenuItem>Rename</MenuItem>
                <MenuItem>Move</MenuItem>
                <MenuItem>{file.directory ? "Archive" : "Download"}</MenuItem>
                <MenuItem danger>Delete</MenuItem>
              </RowMenu>
            </li>
          )
        })}
      </ul>
    </Card>
    <Slot id="server.files.footer" />
  </>
)
