// Pterodactyl's admin pages as they come out of Blade (docs/panels.md "Finding Host's admin screens"):
// the shape of `resources/views/layouts/admin.blade.php` at release v1.11.8 — AdminLTE 2's `body.skin-blue`,
// the header bar, and the sidebar's one `ul.sidebar-menu` with its three `li.header` sections — written
// from that layout for the bridge tests. The layout's include (`layouts.scripts`, where `panel:install`
// puts Host's block) is in `<head>`, before the panel's own styles; its stylesheets (Bootstrap, AdminLTE,
// skin-blue, pterodactyl.css) are not served here, so a few rules below give the rendered colours those
// sheets give a stock panel, for the screenshots.
//
// One detail of the real output is kept on purpose: each item's class is
// `{{ ! starts_with(Route::currentRouteName(), 'admin.x') ?: 'active' }}`, which Blade prints as `1` for
// every item that is not the current one.

/** The sidebar as the layout lists it: [route name prefix, path, Font Awesome icon, label], by section. */
const sections: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string, string, string]>]> = [
  ["BASIC ADMINISTRATION", [
    ["admin.index", "/admin", "fa-home", "Overview"],
    ["admin.settings", "/admin/settings", "fa-wrench", "Settings"],
    ["admin.api", "/admin/api", "fa-gamepad", "Application API"]
  ]],
  ["MANAGEMENT", [
    ["admin.databases", "/admin/databases", "fa-database", "Databases"],
    ["admin.locations", "/admin/locations", "fa-globe", "Locations"],
    ["admin.nodes", "/admin/nodes", "fa-sitemap", "Nodes"],
    ["admin.servers", "/admin/servers", "fa-server", "Servers"],
    ["admin.users", "/admin/users", "fa-users", "Users"]
  ]],
  ["SERVICE MANAGEMENT", [
    ["admin.mounts", "/admin/mounts", "fa-magic", "Mounts"],
    ["admin.nests", "/admin/nests", "fa-th-large", "Nests"]
  ]]
]

/** The route name Laravel gives a path of the admin area (enough of routes/admin.php for the sidebar). */
const routeNameOf = (path: string): string => {
  if (path === "/admin" || path === "/admin/") return "admin.index"
  const first = path.split("/")[2] ?? ""
  return first === "" ? "admin.index" : `admin.${first}`
}

const sidebar = (path: string) => {
  const route = routeNameOf(path)
  const items = sections.flatMap(([header, entries]) => [
    `<li class="header">${header}</li>`,
    ...entries.map(([name, href, icon, label]) => {
      // `admin.index` is compared exactly, the others by prefix, as the layout does.
      const active = name === "admin.index" ? route === name : route.startsWith(name)
      return `<li class="${active ? "active" : "1"}">
                            <a href="${href}">
                                <i class="fa ${icon}"></i> <span>${label}</span>
                            </a>
                        </li>`
    })
  ])
  return `<ul class="sidebar-menu">\n                        ${items.join("\n                        ")}\n                    </ul>`
}

/** What the stock sheets make of the layout (skin-blue as pterodactyl.css recolours it), for the screenshots. */
const css = `
body{margin:0;font-family:"Source Sans Pro","Helvetica Neue",Helvetica,Arial,sans-serif;font-size:14px;color:#cad1d8;background:#181f27}
a{text-decoration:none}
.main-header{position:fixed;top:0;left:0;right:0;height:50px;display:flex;z-index:10;box-shadow:0 4px 8px 0 rgba(0,0,0,.12),0 2px 4px 0 rgba(0,0,0,.08)}
.main-header .logo{width:230px;line-height:50px;text-align:center;font-size:20px;background:#1f2933;color:#9aa5b1}
.main-header .navbar{flex:1;display:flex;justify-content:space-between;background:#1f2933}
.main-header .sidebar-toggle{color:#9aa5b1;padding:15px}
.main-header .icon-bar{display:block;width:16px;height:2px;margin:3px 0;background:#9aa5b1}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}
.navbar-custom-menu ul{display:flex;list-style:none;margin:0;padding:0}
.navbar-custom-menu a{display:block;line-height:50px;padding:0 15px;color:#9aa5b1}
.main-sidebar{position:fixed;top:50px;bottom:0;left:0;width:230px;background:#181f27;box-shadow:0 4px 8px 0 rgba(0,0,0,.12)}
.sidebar-menu{list-style:none;margin:0;padding:0}
.sidebar-menu>li.header{padding:10px 25px 10px 15px;font-size:12px;color:#797979;background:#0e111582}
.sidebar-menu>li>a{display:block;padding:12px 5px 12px 15px;color:#abb0c2;border-left:3px solid transparent}
.sidebar-menu>li:hover>a,.sidebar-menu>li.active>a{color:#fff;background:#15161c}
.sidebar-menu>li.active>a{border-left-color:#099aa5}
.sidebar-menu .fa{display:inline-block;width:20px}
.content-wrapper{margin-left:230px;padding-top:50px;min-height:calc(100vh - 50px);background:#33404d}
.content-header{padding:15px 15px 0}
.content-header h1{margin:0;font-size:24px;font-weight:400}
.content-header small{font-size:15px;color:#9aa5b1;padding-left:4px}
.content{padding:15px}
.box{background:#3f4d5a;border-top:3px solid #1f2933;border-radius:3px;box-shadow:0 4px 8px 0 rgba(0,0,0,.12),0 2px 4px 0 rgba(0,0,0,.08)}
.box-header{padding:10px;background:#1f2933}
.box-body{padding:10px}
.main-footer{margin-left:230px;padding:15px;background:#1f2933;color:#9aa5b1}
.main-footer a{color:#cad1d8}
@media (max-width:767px){.main-header{flex-direction:column;height:100px}.main-header .logo{width:100%}.main-sidebar{top:100px;transform:translateX(-230px)}.content-wrapper,.main-footer{margin-left:0}.content-wrapper{padding-top:100px}}
`

/**
 * An admin page of the panel at `path`, for `appName` (`config('app.name')`), with `head` as what the
 * `layouts.scripts` include renders (Host's block: its boot script).
 */
export const pterodactylAdminPage = (path: string, options: { readonly appName?: string; readonly head?: string } = {}) => {
  const name = options.appName ?? "Pterodactyl"
  const head = options.head ?? `<script src="/host/boot.js" defer></script>`
  return `<!DOCTYPE html>
<html>
    <head>
        <meta charset="utf-8">
        <meta http-equiv="X-UA-Compatible" content="IE=edge">
        <title>${name} - Administration</title>
        <meta content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no" name="viewport">
        <meta name="_token" content="standin-csrf-token">
        ${head}
        <style>${css}</style>
    </head>
    <body class="hold-transition skin-blue fixed sidebar-mini">
        <div class="wrapper">
            <header class="main-header">
                <a href="/" class="logo">
                    <span>${name}</span>
                </a>
                <nav class="navbar navbar-static-top">
                    <a href="#" class="sidebar-toggle" data-toggle="push-menu" role="button">
                        <span class="sr-only">Toggle navigation</span>
                        <span class="icon-bar"></span>
                        <span class="icon-bar"></span>
                        <span class="icon-bar"></span>
                    </a>
                    <div class="navbar-custom-menu">
                        <ul class="nav navbar-nav">
                            <li class="user-menu"><a href="/account"><span class="hidden-xs">Admin User</span></a></li>
                            <li><a href="/" data-toggle="tooltip" data-placement="bottom" title="Exit Admin Control"><i class="fa fa-server"></i></a></li>
                            <li><a href="/auth/logout" id="logoutButton" data-toggle="tooltip" data-placement="bottom" title="Logout"><i class="fa fa-sign-out"></i></a></li>
                        </ul>
                    </div>
                </nav>
            </header>
            <aside class="main-sidebar">
                <section class="sidebar">
                    ${sidebar(path)}
                </section>
            </aside>
            <div class="content-wrapper">
                <section class="content-header">
                    <h1>Administrative Overview<small>A quick glance at your system.</small></h1>
                </section>
                <section class="content">
                    <div class="row"><div class="col-xs-12"></div></div>
                    <div class="box"><div class="box-header"><h3 class="box-title">System Information</h3></div><div class="box-body">You are running Pterodactyl Panel version <code>1.11.8</code>.</div></div>
                </section>
            </div>
            <footer class="main-footer">
                Copyright &copy; 2015 - 2026 <a href="https://pterodactyl.io/">Pterodactyl Software</a>.
            </footer>
        </div>
    </body>
</html>`
}
