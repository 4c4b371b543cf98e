// The Pelican subuser permission that carries an extension permission (docs/panels.md "Drivers",
// "Extension permissions"): `host.<vendor>-<name>.<permission>`. The `host.` prefix keeps Host's apart from
// the panel's own groups and the extension id keeps two extensions' `probe.view` apart. The Host plugin
// registers them (plugins/host/permissions.json, written by `host panel:install` and the self-heal) and
// the Pelican driver checks the panel's `user_permissions` for them: one function builds the name for both.

export const pelicanPermissionName = (extensionId: string, permission: string): string =>
  `host.${extensionId.replace("/", "-")}.${permission}`
