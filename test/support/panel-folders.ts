import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

// Minimal Pterodactyl and Pelican install folders: only the files Host's panel detection and install
// read (docs/panels.md, "How Host recognises the panel"), with the stock content of the panels' releases
// where Host touches them. No `artisan`: tests never run the panel's PHP.

/** The stock `resources/views/layouts/scripts.blade.php` of Pterodactyl 1.11 / 1.0-develop. */
export const stockScriptsBlade = "{{-- Just here as a binder for dynamically rendered content. --}}\n"

const write = (root: string, relative: string, text: string) => {
  const file = join(root, relative)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

const appConfig = (version: string, name: string) =>
  `<?php\n\nreturn [\n    'version' => '${version}',\n\n    'name' => env('APP_NAME', '${name}'),\n\n    'env' => env('APP_ENV', 'production'),\n];\n`

export type PanelFixtureKind = "pterodactyl-1.11" | "pterodactyl-1.12" | "pelican"

/** Writes a panel folder of `kind` into `root` and returns `root`. */
export const writePanelFolder = (root: string, kind: PanelFixtureKind, options: { readonly appName?: string } = {}): string => {
  if (kind === "pelican") {
    write(root, "config/app.php", appConfig("1.0.0-beta21", "Pelican"))
    write(root, ".env", `APP_ENV=production\nAPP_NAME="${options.appName ?? "Pelican"}"\nAPP_URL=http://panel.test\n`)
    write(root, "composer.json", JSON.stringify({ name: "pelican-dev/panel", require: { php: "^8.2", "filament/filament": "^3.2" } }, null, 4))
    write(root, "app/Filament/Admin/Pages/Dashboard.php", "<?php\n")
    mkdirSync(join(root, "plugins"), { recursive: true })
    return root
  }
  const version = kind === "pterodactyl-1.11" ? "1.11.8" : "1.12.0"
  write(root, "config/app.php", appConfig(version, "Pterodactyl"))
  write(root, ".env", `APP_ENV=production\nAPP_NAME=${options.appName ?? "Pterodactyl"}\nAPP_URL=http://panel.test\n`)
  write(root, "composer.json", JSON.stringify({ name: "pterodactyl/panel", require: { php: "^8.0 || ^8.1" } }, null, 4))
  write(root, "resources/views/layouts/scripts.blade.php", stockScriptsBlade)
  write(root, "resources/views/templates/wrapper.blade.php", "<!DOCTYPE html>\n<html>\n<head>\n@include('layouts.scripts')\n</head>\n</html>\n")
  write(root, "resources/scripts/index.tsx", "// the panel's React entry\n")
  return root
}
