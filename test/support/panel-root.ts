import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

// A real panel's install folder as Host reads it (docs/panels.md "Drivers"): `config/app.php` with the
// version and `.env` with the name and, optionally, the session cookie name.
export const writePanelRoot = (
  folder: string,
  options: { readonly version?: string; readonly appName?: string; readonly sessionCookie?: string } = {}
): string => {
  mkdirSync(join(folder, "config"), { recursive: true })
  writeFileSync(
    join(folder, "config", "app.php"),
    `<?php\n\nreturn [\n    'version' => '${options.version ?? "1.11.8"}',\n    'name' => env('APP_NAME', 'Pterodactyl'),\n];\n`
  )
  const env = [
    "APP_ENV=production",
    "APP_KEY=base64:notreadbyhost",
    options.appName === undefined ? undefined : `APP_NAME="${options.appName}"`,
    options.sessionCookie === undefined ? undefined : `SESSION_COOKIE=${options.sessionCookie}`
  ].filter((line) => line !== undefined)
  writeFileSync(join(folder, ".env"), `${env.join("\n")}\n`)
  return folder
}
