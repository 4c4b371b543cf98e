import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { parse as parseYaml } from "yaml"
import { HostConfig } from "../config/HostConfig.js"
import { ConfigInvalid } from "../domain/Errors.js"
import { problem, problemsFromParseError } from "../domain/Problems.js"

// The panel Host is installed into. Today: its name and versions, for `requires.panel`/`requires.php`.
// The default is the embedded reference panel, described by `config/panel.yaml` (`panel: {name, version, php}`).

const PanelFile = Schema.Struct({
  panel: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.String),
    version: Schema.optional(Schema.String),
    php: Schema.optional(Schema.String)
  }))
})

export interface PanelInfo {
  readonly name: string
  /** Unknown when the panel does not report it (then `requires.panel` is a warning, not a check). */
  readonly version: string | undefined
  readonly php: string | undefined
}

export class Panel extends Context.Tag("host/Panel")<Panel, { readonly info: PanelInfo }>() {}

const source = "config/panel.yaml"

export const readPanelInfo = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { paths } = yield* HostConfig
  const file = path.join(paths.root, "config", "panel.yaml")
  const fallback: PanelInfo = { name: "Host reference panel", version: undefined, php: undefined }
  if (!(yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false)))) return fallback
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((error) => new ConfigInvalid({ source, problems: [problem("(file)", error.message)] }))
  )
  const raw = yield* Effect.try({
    try: () => parseYaml(text) as unknown,
    catch: (error) => new ConfigInvalid({ source, problems: [problem("(yaml)", error instanceof Error ? error.message : String(error))] })
  })
  const decoded = yield* Schema.decodeUnknown(PanelFile)(raw ?? {}).pipe(
    Effect.mapError((error) => new ConfigInvalid({ source, problems: problemsFromParseError(error) }))
  )
  return {
    name: decoded.panel?.name ?? fallback.name,
    version: decoded.panel?.version,
    php: decoded.panel?.php
  } satisfies PanelInfo
})

/** The embedded reference panel. */
export const layerEmbedded = Layer.effect(Panel, Effect.map(readPanelInfo, (info) => ({ info })))
