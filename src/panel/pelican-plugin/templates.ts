// The files of Host's Pelican plugin (`plugins/host/` in the panel), as text: what `host panel:install`
// writes and what `host panel:status` compares against. The plugin's layout, the render-hook table and
// the permissions file are described in docs/panels.md ("Installing into Pelican").

import { type PelicanHook, pelicanHooks, type PelicanPage, pelicanPages } from "../../domain/PelicanHooks.js"

/** The plugin's id: its folder under `plugins/` and `plugin.json`'s `id`. */
export const pluginId = "host"

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
        panels: ["app", "server"],
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
use Illuminate\\Support\\ServiceProvider;

class HostPluginProvider extends ServiceProvider
{
    public function register(): void
    {
        // Host's extension permissions as "host.<vendor>-<name>.<permission>": Pelican names a custom
        // permission "<group>.<key>", so the group is everything before the last dot (docs/panels.md "Drivers").
        foreach (self::permissionGroups() as $group => $actions) {
            Subuser::registerCustomPermissions($group, $actions, 'tabler-puzzle');
        }
    }

    public function boot(): void
    {
        FilamentView::registerRenderHook(PanelsRenderHook::HEAD_END, fn (): string => ${phpString(bootScriptTag)});
    }

    /** @return array<string, string[]> */
    public static function permissionGroups(): array
    {
        $file = dirname(__DIR__, 2) . '/permissions.json';
        if (!is_file($file)) {
            return [];
        }
        $data = json_decode((string) file_get_contents($file), true);
        $groups = [];
        foreach ((is_array($data) && is_array($data['permissions'] ?? null)) ? $data['permissions'] : [] as $permission) {
            if (!is_string($permission) || !preg_match('/^(host\\.[a-z0-9_.-]+)\\.([a-z0-9_-]+)$/', $permission, $match)) {
                continue;
            }
            $groups[$match[1]][] = $match[2];
        }
        return $groups;
    }
}
`

/**
 * \`src/Pages/ExtensionPage.php\`: what the three outlets share. Only methods are overridden (no property is
 * redeclared: Filament 3 and 4 declare \`$view\` and the navigation flags differently), each with a signature
 * both accept — \`routes\` takes Filament 4's optional page configuration as \`mixed\`, which Filament 3's
 * one-argument \`routes\` also allows.
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
 * one container Host's bridge renders the extension's page into. Each subclass is one route.
 */
abstract class ExtensionPage extends Page
{
    /** The Host slot the page holds, its Filament panel, and its route below the panel's path. */
    public const SLOT = '';
    public const PANEL = '';
    public const PREFIX = '';

    /** One route catching every path below the prefix, with the middleware Filament gives its pages. */
    public static function routes(Panel $panel, mixed $configuration = null): void
    {
        Route::get('/' . static::PREFIX . '/{path}', static::class)
            ->where('path', '.*')
            ->middleware(static::getRouteMiddleware($panel))
            ->withoutMiddleware(static::getWithoutRouteMiddleware($panel))
            ->name('host.' . str_replace('.', '-', static::SLOT));
    }

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

/** The plugin's code, by path inside its folder: what \`panel:install\` writes besides plugin.json and permissions.json. */
export const pluginCodeFiles = (): ReadonlyArray<readonly [ReadonlyArray<string>, string]> => [
  [["src", "HostPlugin.php"], hostPluginPhp()],
  [["src", "Providers", "HostPluginProvider.php"], hostPluginProviderPhp()],
  [["src", "Pages", "ExtensionPage.php"], extensionPageBasePhp()],
  ...pelicanPages.map((page) => [["src", "Pages", `${page.className}.php`], extensionPagePhp(page)] as const),
  [["resources", "views", "extension-page.blade.php"], extensionPageView()]
]

/** `permissions.json`: the installed extensions' `backend.permissions`, sorted, for the provider above. */
export const permissionsJson = (permissions: ReadonlyArray<string>): string =>
  `${JSON.stringify({ generated_by: "host panel:install", permissions: [...new Set(permissions)].sort() }, null, 4)}\n`
