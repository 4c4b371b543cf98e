// How an extension permission is named inside Pelican (docs/panels.md "Extension permissions"), one function
// for every side that uses the name: the Host plugin registers it as a custom subuser permission
// (plugins/host/permissions.json, written by `host panel:install` and the self-heal), and the Pelican driver
// looks for it in the panel's `user_permissions`.
//
// Pelican's rules (its `Subuser` model and subuser form): a permission is `<group>.<key>` with exactly one dot,
// split on the first dot when a subuser's grants are read back; the group is a form field name, where Filament
// reads a dot as a nested path. So neither part may hold a dot:
// - the group is one per extension, `host_<vendor>_<name>` — an extension id's parts are lowercase words joined
//   by single "-", never "_", so two extensions never share a group, and the `host_` prefix keeps Host's groups
//   apart from the panel's own (`control`, `file`, …);
// - the key is the extension's `<area>.<action>` with its dot written as "-" (`probe.view` → `probe-view`, which
//   Pelican's form labels "Probe View").

/** The Pelican permission group that holds one extension's permissions. */
export const pelicanPermissionGroup = (extensionId: string): string => `host_${extensionId.replace("/", "_")}`

/** The key of an extension permission inside its group. */
export const pelicanPermissionKey = (permission: string): string => permission.replace(".", "-")

/** The Pelican subuser permission that carries an extension permission: `host_<vendor>_<name>.<area>-<action>`. */
export const pelicanPermissionName = (extensionId: string, permission: string): string =>
  `${pelicanPermissionGroup(extensionId)}.${pelicanPermissionKey(permission)}`

/**
 * Pairs of one extension's permissions that Pelican would see as one (`a-b.c` and `a.b-c` are both `a-b-c`):
 * a grant of either would be a grant of both, so the manifest refuses them.
 */
export const pelicanKeyClashes = (permissions: ReadonlyArray<string>): ReadonlyArray<readonly [string, string]> => {
  const firstByKey = new Map<string, string>()
  const clashes: Array<readonly [string, string]> = []
  for (const permission of new Set(permissions)) {
    const key = pelicanPermissionKey(permission)
    const first = firstByKey.get(key)
    if (first === undefined) firstByKey.set(key, permission)
    else clashes.push([first, permission])
  }
  return clashes
}
