// The files of Host's Pelican plugin (`plugins/host/` in the panel), as text: what `host panel:install`
// writes and what `host panel:status` compares against. The plugin's layout, the render-hook table and
// the permissions file are described in docs/panels.md ("Installing into Pelican").

import { type PelicanHook, pelicanHooks, type PelicanPage, pelicanPages } from "../../domain/PelicanHooks.js"
import { pelicanPermissionGroup, pelicanPermissionKey, pelicanPermissionName } from "../../domain/PelicanPermissions.js"
import type { BundleRoute } from "../../domain/Slots.js"

/** The plugin's id: its folder under `plugins/` and `plugin.json`'s `id`. */
export const pluginId = "host"

/** Host's admin screens, which the admin panel's "Extensions" item links (Host serves them under the panel's origin). */
export const adminUrl = "/admin/host/extensions"

/**
 * The files Host writes beside the plugin's code from the installed extensions: they follow the extensions
 * (the self-heal refreshes them), so a change to them alone is a refresh, not a repair.
 */
export const pluginDataFiles = ["permissions.json", "navigation.json"] as const

/** Whether a path inside the plugin folder is one of its data files. */
export const isPluginDataFile = (path: string): boolean => pluginDataFiles.some((name) => path.endsWith(`/${name}`) || path === name)

/** The one tag every panel page gets (both panels' includes load the same script). */
export const bootScriptTag = '<script src="/host/boot.js" defer></script>'

/**
 * `plugin.json` (fields as Pelican's `app/Models/Plugin.php` reads them). Without `meta` the plugin is "not
 * installed", which `php artisan p:plugin:install host` requires; Pelican then records `meta.status` in this
 * file itself, so comparisons ignore `meta` (see `samePluginJson`). The self-heal, which runs no artisan
 * command, writes a lost folder back as enabled (`enabled`), the state `p:plugin:install` leaves it in.
 */
export const pluginJson = (hostVersion: string, options: { readonly enabled?: boolean } = {}): string =>
  `${
    JSON.stringify(
      {
        id: pluginId,
        name: "Host",
        author: "Host",
        version: hostVersion,
        description: "Loads Host's extensions into the panel: its boot script, slot containers and extension permissions.",
        category: "plugin",
        url: null,
        update_url: null,
        namespace: "Host\\PelicanPlugin",
        class: "HostPlugin",
        panels: ["admin", "app", "server"],
        panel_version: null,
        composer_packages: null,
        ...(options.enabled === true ? { meta: { status: "enabled", status_message: null, load_order: 0 } } : {})
      },
      null,
      4
    )
  }\n`

/** `plugin.json` texts that are the same plugin: everything but the `meta` Pelican keeps there. */
export const samePluginJson = (a: string, b: string): boolean => {
  try {
    const strip = (text: string) => {
      const parsed = JSON.parse(text) as unknown
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined
      const { meta: _meta, ...rest } = parsed as Record<string, unknown>
      return JSON.stringify(rest)
    }
    const left = strip(a)
    return left !== undefined && left === strip(b)
  } catch {
    return false
  }
}

const phpString = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

/** The plugin's table of one Filament panel: `[render hook, slot id, [page class basenames]]` (domain/PelicanHooks.ts). */
const slotTable = (panel: PelicanHook["panel"]) =>
  pelicanHooks
    .filter((entry) => entry.panel === panel)
    .map((entry) => `            [${phpString(entry.hook)}, ${phpString(entry.slot)}, [${entry.scopes.map(phpString).join(", ")}]],`)
    .join("\n")

/** The extension-page classes of one Filament panel, as PHP class constants. */
const pageClasses = (panel: PelicanHook["panel"]) =>
  pelicanPages.filter((page) => page.panel === panel).map((page) => `Pages\\${page.className}::class`).join(", ")

/** The header every generated PHP file starts with. */
const generatedHeader = "// Written by \`host panel:install\`; \`host panel:uninstall\` removes this folder. Do not edit: Host rewrites it."

export const hostPluginPhp = (): string => `<?php

${generatedHeader}

namespace Host\\PelicanPlugin;

use Filament\\Contracts\\Plugin;
use Filament\\Facades\\Filament;
use Filament\\Navigation\\NavigationItem;
use Filament\\Panel;

class HostPlugin implements Plugin
{
    /**
     * Per Filament panel: [render hook, Host slot id, the page classes (basenames) it belongs to; none: every
     * page]. Generated from Host's domain/PelicanHooks.ts, the table Host's bridge reads too.
     */
    public const SLOTS = [
        'app' => [
${slotTable("app")}
        ],
        'server' => [
${slotTable("server")}
        ],
    ];

    /** Per Filament panel: the extension-page outlets (one route each, under Pages\\), from the same table. */
    public const PAGES = [
        'app' => [${pageClasses("app")}],
        'server' => [${pageClasses("server")}],
    ];

    /** Where Host's admin screens are (Host serves them beside the panel, under the same origin). */
    public const ADMIN_URL = ${phpString(adminUrl)};

    public function getId(): string
    {
        return ${phpString(pluginId)};
    }

    public function register(Panel $panel): void
    {
        $panelId = $panel->getId();
        foreach (self::SLOTS[$panelId] ?? [] as [$hook, $slot, $pages]) {
            // Filament calls a hook with the rendering page's scopes (its class names).
            $panel->renderHook($hook, fn (array $scopes = []): string => self::onPage($scopes, $pages) ? self::container($slot, $panelId) : '');
        }
        $pages = self::PAGES[$panelId] ?? [];
        if ($pages !== []) {
            $panel->pages($pages);
        }
        $panel->navigationItems($panelId === 'admin' ? [self::adminItem()] : self::navigationItems($panelId));
    }

    /** Whether one of the page's scopes is one of the pages (compared by class basename), or the pages are none. */
    public static function onPage(array $scopes, array $pages): bool
    {
        if ($pages === []) {
            return true;
        }
        foreach ($scopes as $scope) {
            $position = strrpos((string) $scope, '\\\\');
            if (in_array($position === false ? (string) $scope : substr((string) $scope, $position + 1), $pages, true)) {
                return true;
            }
        }
        return false;
    }

    public function boot(Panel $panel): void
    {
    }

    /** An empty container the bridge mounts the slot's extensions into. */
    public static function container(string $slot, string $panel): string
    {
        return '<div data-host-slot="' . htmlspecialchars($slot, ENT_QUOTES) . '" data-host-panel="' . htmlspecialchars($panel, ENT_QUOTES) . '"></div>';
    }

    /** One of the data files Host writes beside this code (${pluginDataFiles.join(", ")}), decoded; [] when absent or unreadable. */
    public static function data(string $file): array
    {
        $path = dirname(__DIR__) . '/' . $file;
        $data = is_file($path) ? json_decode((string) file_get_contents($path), true) : null;
        return is_array($data) ? $data : [];
    }

    /** "Extensions" in the admin panel's navigation: Host's admin screens. */
    public static function adminItem(): NavigationItem
    {
        return NavigationItem::make('Extensions')
            ->icon('tabler-puzzle')
            ->url(self::ADMIN_URL)
            ->isActiveWhen(fn (): bool => request()->is('admin/host', 'admin/host/*'))
            ->sort(100);
    }

    /**
     * One navigation item per extension page of the panel (navigation.json, written by Host from the enabled
     * extensions' bundles), linking the page's outlet with its path. A page behind an extension permission is
     * listed only to users who hold it on the current server (Pelican's own check of a custom permission).
     */
    public static function navigationItems(string $panelId): array
    {
        $entries = array_values(array_filter(self::data('navigation.json')['items'] ?? [], fn ($entry): bool => is_array($entry) && ($entry['panel'] ?? null) === $panelId));
        $items = [];
        foreach ($entries as $index => $entry) {
            $class = __NAMESPACE__ . '\\\\Pages\\\\' . (string) ($entry['page'] ?? '');
            if (!in_array($class, self::PAGES[$panelId] ?? [], true)) {
                continue;
            }
            $path = (string) ($entry['path'] ?? '');
            $permission = $entry['permission'] ?? null;
            $items[] = NavigationItem::make((string) ($entry['label'] ?? $path))
                ->icon('tabler-puzzle')
                ->url(fn (): string => $class::getUrl(['path' => $path]))
                ->isActiveWhen(fn (): bool => self::activePath($class, $entries) === $path)
                ->visible(fn (): bool => !is_string($permission) || (bool) Filament::auth()->user()?->can($permission, Filament::getTenant()))
                ->sort(100 + $index);
        }
        return $items;
    }

    /** The path of the entry the current request shows: the longest one the request's path is, or is below. */
    public static function activePath(string $class, array $entries): ?string
    {
        $route = request()->route();
        if ($route === null || $route->getName() !== $class::getRouteName()) {
            return null;
        }
        $current = trim((string) $route->parameter('path'), '/');
        $best = null;
        foreach ($entries as $entry) {
            $path = (string) ($entry['path'] ?? '');
            if (($entry['page'] ?? null) === substr($class, strrpos($class, '\\\\') + 1) && ($current === $path || str_starts_with($current, $path . '/')) && strlen($path) > strlen((string) $best)) {
                $best = $path;
            }
        }
        return $best;
    }

    public static function make(): static
    {
        return new static();
    }
}
`

/**
 * `src/Providers/HostPluginProvider.php`: the boot script at HEAD_END of every page, and Host's extension
 * permissions as custom subuser permissions, read from `permissions.json` (written by Host).
 */
export const hostPluginProviderPhp = (): string => `<?php

${generatedHeader}

namespace Host\\PelicanPlugin\\Providers;

use App\\Models\\Subuser;
use Filament\\Support\\Facades\\FilamentView;
use Filament\\View\\PanelsRenderHook;
use Host\\PelicanPlugin\\HostPlugin;
use Illuminate\\Support\\ServiceProvider;

class HostPluginProvider extends ServiceProvider
{
    /** Where the group titles and descriptions are (lang/<locale>/permissions.php, loaded as \`host::\`). */
    public const TRANSLATION_PREFIX = 'host::permissions';

    public function register(): void
    {
        // One group per extension, "host_<vendor>_<name>", its keys "<area>-<action>": Pelican's permission is
        // "<group>.<key>" with exactly one dot (docs/panels.md "Extension permissions").
        $arguments = self::registrationArguments();
        foreach (self::permissionGroups() as $group => $keys) {
            Subuser::registerCustomPermissions($group, $keys, ...$arguments);
        }
    }

    public function boot(): void
    {
        FilamentView::registerRenderHook(PanelsRenderHook::HEAD_END, fn (): string => ${phpString(bootScriptTag)});
    }

    /**
     * The named arguments this panel's \`registerCustomPermissions\` takes besides the group and its keys: the
     * icon (the third argument up to Pelican v1.0.0-beta33, the fourth since beta34, where the third is a
     * translation prefix) and, where the method has one, the translation prefix of the group's labels.
     */
    public static function registrationArguments(): array
    {
        $names = array_map(fn (\\ReflectionParameter $parameter): string => $parameter->getName(), (new \\ReflectionMethod(Subuser::class, 'registerCustomPermissions'))->getParameters());
        $arguments = ['icon' => 'tabler-puzzle'];
        if (in_array('translationPrefix', $names, true)) {
            $arguments['translationPrefix'] = self::TRANSLATION_PREFIX;
        }
        return $arguments;
    }

    /** @return array<string, string[]> group => keys, from permissions.json */
    public static function permissionGroups(): array
    {
        $groups = [];
        foreach (HostPlugin::data('permissions.json')['groups'] ?? [] as $group) {
            $name = is_array($group) ? ($group['name'] ?? null) : null;
            if (!is_string($name) || !preg_match('/^host_[a-z0-9-]+_[a-z0-9-]+$/', $name)) {
                continue;
            }
            foreach ($group['permissions'] ?? [] as $permission) {
                $key = is_array($permission) ? ($permission['key'] ?? null) : null;
                if (is_string($key) && preg_match('/^[a-z][a-z0-9_-]*$/', $key)) {
                    $groups[$name][] = $key;
                }
            }
        }
        return $groups;
    }
}
`

/**
 * \`src/Pages/ExtensionPage.php\`: what the three outlets share. Only methods are overridden (no property is
 * redeclared: Filament 3, 4 and 5 declare \`$view\`, \`$slug\` and the navigation flags differently), each with a
 * signature all accept — \`routes\` takes Filament 4's optional page configuration as \`mixed\`, which Filament 3's
 * one-argument \`routes\` also allows, and \`getSlug\` an optional panel, as Filament 4 declares it.
 */
export const extensionPageBasePhp = (): string => `<?php

${generatedHeader}

namespace Host\\PelicanPlugin\\Pages;

use Filament\\Pages\\Page;
use Filament\\Panel;
use Host\\PelicanPlugin\\HostPlugin;
use Illuminate\\Support\\Facades\\Route;

/**
 * An extension-page outlet: a page of its Filament panel at PREFIX/{path} (any depth below it) whose body is the
 * one container Host's bridge renders the extension's page into. Each subclass is one route, named as Filament
 * names a page's route (its slug, "/" written "."), so \`getUrl(['path' => …])\` links it.
 */
abstract class ExtensionPage extends Page
{
    /** The Host slot the page holds, its Filament panel, and its route below the panel's path. */
    public const SLOT = '';
    public const PANEL = '';
    public const PREFIX = '';

    public static function getSlug(?Panel $panel = null): string
    {
        return static::PREFIX;
    }

    /** One route catching every path below the prefix, with the middleware Filament gives its pages. */
    public static function routes(Panel $panel, mixed $configuration = null): void
    {
        Route::get('/' . static::PREFIX . '/{path?}', static::class)
            ->where('path', '.*')
            ->middleware(static::getRouteMiddleware($panel))
            ->withoutMiddleware(static::getWithoutRouteMiddleware($panel))
            ->name(static::getRelativeRouteName($panel));
    }

    /** Listed by HostPlugin's navigation items, one per extension page, never as the outlet itself. */
    public static function shouldRegisterNavigation(): bool
    {
        return false;
    }

    public function getView(): string
    {
        return 'host::extension-page';
    }

    public function getTitle(): string
    {
        return 'Extension';
    }

    /** No heading of the panel's own: the extension's page has its own. */
    public function getHeading(): string
    {
        return '';
    }

    protected function getViewData(): array
    {
        return ['hostContainer' => HostPlugin::container(static::SLOT, static::PANEL)];
    }
}
`

/** \`src/Pages/<Class>.php\`: one outlet. */
export const extensionPagePhp = (page: PelicanPage): string => `<?php

${generatedHeader}

namespace Host\\PelicanPlugin\\Pages;

class ${page.className} extends ExtensionPage
{
    public const SLOT = ${phpString(page.slot)};
    public const PANEL = ${phpString(page.panel)};
    public const PREFIX = ${phpString(page.prefix)};
}
`

/** \`resources/views/extension-page.blade.php\` (Pelican loads a plugin's views as \`<id>::\`): the panel's page chrome around the container. */
export const extensionPageView = (): string => `{{-- ${generatedHeader.slice(3)} --}}
<x-filament-panels::page>
    {!! $hostContainer !!}
</x-filament-panels::page>
`

/**
 * `lang/en/permissions.php` (Pelican loads a plugin's translations as `<id>::`): the labels Pelican's subuser form
 * shows for Host's groups — `<group>_title`, `<group>_desc` and `<group>_<key>` (the key's "-" written "_", as
 * the form asks) — taken from permissions.json, so the code never changes when extensions do.
 */
export const permissionsLangPhp = (): string => `<?php

${generatedHeader}

$file = dirname(__DIR__, 2) . '/permissions.json';
$data = is_file($file) ? json_decode((string) file_get_contents($file), true) : null;
$lines = [];
foreach ((is_array($data) && is_array($data['groups'] ?? null)) ? $data['groups'] : [] as $group) {
    if (!is_array($group) || !is_string($group['name'] ?? null)) {
        continue;
    }
    $lines[$group['name'] . '_title'] = (string) ($group['title'] ?? $group['name']);
    $lines[$group['name'] . '_desc'] = (string) ($group['description'] ?? '');
    foreach (is_array($group['permissions'] ?? null) ? $group['permissions'] : [] as $permission) {
        if (is_array($permission) && is_string($permission['key'] ?? null)) {
            $lines[$group['name'] . '_' . str_replace('-', '_', $permission['key'])] = (string) ($permission['description'] ?? '');
        }
    }
}

return $lines;
`

/** The plugin's code, by path inside its folder: what `panel:install` writes besides plugin.json and the data files. */
export const pluginCodeFiles = (): ReadonlyArray<readonly [ReadonlyArray<string>, string]> => [
  [["src", "HostPlugin.php"], hostPluginPhp()],
  [["src", "Providers", "HostPluginProvider.php"], hostPluginProviderPhp()],
  [["src", "Pages", "ExtensionPage.php"], extensionPageBasePhp()],
  ...pelicanPages.map((page) => [["src", "Pages", `${page.className}.php`], extensionPagePhp(page)] as const),
  [["resources", "views", "extension-page.blade.php"], extensionPageView()],
  [["lang", "en", "permissions.php"], permissionsLangPhp()]
]

/** What the plugin's data files are made from: each installed extension's permissions and, when enabled, its pages. */
export interface PelicanExtensionFacts {
  readonly extensionId: string
  readonly name: string
  readonly enabled: boolean
  readonly permissions: ReadonlyArray<string>
  /** The pages its bundle registers (domain/Slots.ts `bundleRoutes`). */
  readonly routes: ReadonlyArray<BundleRoute>
}

const byId = (extensions: ReadonlyArray<PelicanExtensionFacts>) =>
  [...extensions].sort((a, b) => a.extensionId.localeCompare(b.extensionId))

const dataJson = (data: object): string => `${JSON.stringify({ generated_by: "host panel:install", ...data }, null, 4)}\n`

/**
 * `permissions.json`: every installed extension's `backend.permissions` (a disabled one's too, so grants are kept
 * while it is off) as Pelican permissions, flat and by group with the labels of the subuser form.
 */
export const permissionsJson = (extensions: ReadonlyArray<PelicanExtensionFacts>): string => {
  const withPermissions = byId(extensions).filter((extension) => extension.permissions.length > 0)
  return dataJson({
    permissions: [...new Set(withPermissions.flatMap((extension) => extension.permissions.map((permission) => pelicanPermissionName(extension.extensionId, permission))))].sort(),
    groups: withPermissions.map((extension) => ({
      name: pelicanPermissionGroup(extension.extensionId),
      extension: extension.extensionId,
      title: extension.name,
      description: `Permissions of the extension ${extension.extensionId}, added by Host.`,
      permissions: [...new Set(extension.permissions)].sort().map((permission) => ({
        key: pelicanPermissionKey(permission),
        permission,
        description: `${extension.name}: ${permission}`
      }))
    }))
  })
}

/**
 * `navigation.json`: one item per page of an enabled extension that the panel's navigation can link — not hidden,
 * no `:param` in its path — with the outlet that renders it, its path below the outlet and the Pelican permission
 * a user must hold to see the link.
 */
export const navigationJson = (extensions: ReadonlyArray<PelicanExtensionFacts>): string =>
  dataJson({
    items: byId(extensions).filter((extension) => extension.enabled).flatMap((extension) =>
      extension.routes
        .filter((route) => !route.hidden && !route.path.includes(":"))
        .map((route) => {
          const page = pelicanPages.find((outlet) => outlet.slot === `${route.area}.page`)!
          const below = route.path.replace(/^\/+|\/+$/g, "")
          return {
            panel: page.panel,
            page: page.className,
            path: below === "" ? extension.extensionId : `${extension.extensionId}/${below}`,
            label: route.name ?? extension.name,
            extension: extension.extensionId,
            permission: route.permission === null ? null : pelicanPermissionName(extension.extensionId, route.permission)
          }
        })
    )
  })
