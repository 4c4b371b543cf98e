import { useState } from "react"
import { Link, useParams } from "react-router-dom"
import { fileContents } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import { NotFound } from "../errors.js"
import type { PageProps } from "./shared.js"

export const FileEditorPage = ({ server }: PageProps) => {
  const params = useParams()
  const path = decodeURIComponent(params["*"] ?? "")
  const [saved, setSaved] = useState(false)
  const content = fileContents[path]
  if (content === undefined) return <NotFound />
  return (
    <>
      <PageTitle description={`/home/container/${path}`} icon="file">
        <Link className="text-host-text-muted hover:text-host-text-primary" to={`/server/${server.uuid}/files`}>Files</Link>
        <span className="text-host-text-muted">/</span>
        <span className="truncate">{path}</span>
      </PageTitle>
      <Slot id="server.files.edit.before" />
      <Card>
        <textarea aria-label={`Contents of ${path}`} className="host-editor" defaultValue={content} spellCheck={false} />
        <div className="flex flex-wrap items-center justify-end gap-3 border-t border-host-border p-3">
          {saved ? <span className="text-xs text-host-text-muted" role="status">Demo: nothing was written.</span> : null}
          <button className="host-button host-button--primary" onClick={() => setSaved(true)} type="button">Save content</button>
        </div>
      </Card>
      <Slot id="server.files.edit.after" />
    </>
  )
}
