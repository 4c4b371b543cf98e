<?php
// Loads Host's generated Pelican plugin (the folder given as the first argument) against minimal stand-ins
// of the Filament, Laravel and Pelican classes it uses, with the signatures and behaviour of those projects'
// sources as docs/panels.md and the project's panel notes record them (Pelican v1.0.0-beta38 on Filament 5.7):
// Filament's Plugin contract, Panel::renderHook/pages/navigationItems, Page's routing (a page's route is named
// by its slug inside the panel's `pages.` group, and `getUrl` links it by that name), NavigationItem,
// FilamentView::registerRenderHook, PanelsRenderHook's constants, the page view's hook order, Illuminate's
// ServiceProvider, Route and translator (a plugin's `lang/` under its id), Laravel's rule that a warning is an
// exception, and Pelican's Subuser model (`registerCustomPermissions`, `allPermissionData`,
// `allPermissionKeys`, `doesPermissionExist`), User::can and the subuser form's handling of group names.
// Then runs it the way Pelican does and prints what it emitted as JSON for test/panel-install/php.test.ts.
//
// Arguments: <plugin folder> [<pages JSON: {page class: "page" | "list-records" | "own-view"}>] [<request JSON>]
// The request: {panel, route, path, url, held: [permissions the user holds on the server]}.
// FILAMENT_MAJOR=3 declares Filament 3's Page signatures (a one-argument `routes`, `getSlug()` and
// `getRelativeRouteName()` without a panel, a heading that is never null); PELICAN_SUBUSER=beta33 declares
// `registerCustomPermissions` as it was up to v1.0.0-beta33 (the icon third, no translation prefix).

namespace {
// Laravel's HandleExceptions: every warning and notice is thrown as an ErrorException.
set_error_handler(function (int $level, string $message, string $file = '', int $line = 0): bool {
    throw new ErrorException($message, 0, $level, $file, $line);
});

function request(): Illuminate\Http\Request
{
    return Illuminate\Http\Request::$current;
}

/** Laravel's `data_set` (a dotted key is a nested path), as Filament sets a field's state. */
function data_set_path(array &$target, string $key, mixed $value): void
{
    $segments = explode('.', $key);
    $last = array_pop($segments);
    $node = &$target;
    foreach ($segments as $segment) {
        if (!isset($node[$segment]) || !is_array($node[$segment])) {
            $node[$segment] = [];
        }
        $node = &$node[$segment];
    }
    $node[$last] = $value;
}

/** Laravel's `data_get`, as Filament reads a field's state. */
function data_get_path(array $target, string $key): mixed
{
    foreach (explode('.', $key) as $segment) {
        if (!is_array($target) || !array_key_exists($segment, $target)) {
            return null;
        }
        $target = $target[$segment];
    }
    return $target;
}

/** Laravel's translator with one namespace per plugin (`<id>::<file>.<key>` from `<plugin>/lang/en/<file>.php`); a missing line is its key. */
function trans(string $key): string
{
    if (str_contains($key, '::')) {
        [$namespace, $rest] = explode('::', $key, 2);
        [$group, $item] = array_pad(explode('.', $rest, 2), 2, '');
        $path = (Illuminate\Translation\Translator::$namespaces[$namespace] ?? '') . '/en/' . $group . '.php';
        $lines = is_file($path) ? require $path : [];
        if (is_array($lines) && is_string($lines[$item] ?? null)) {
            return $lines[$item];
        }
    }
    return $key;
}

/** Laravel's Str::headline for the keys Pelican's form labels. */
function headline(string $value): string
{
    return implode(' ', array_map('ucfirst', preg_split('/[-_\s]+/', $value)));
}
}

namespace Illuminate\Translation {
    class Translator
    {
        /** @var array<string, string> */
        public static array $namespaces = [];
    }
}

namespace Illuminate\Http {
    class Request
    {
        public static Request $current;

        public function __construct(public string $path, public ?\Illuminate\Routing\Route $route)
        {
        }

        public function route(): ?\Illuminate\Routing\Route
        {
            return $this->route;
        }

        public function is(string ...$patterns): bool
        {
            foreach ($patterns as $pattern) {
                if (fnmatch($pattern, trim($this->path, '/'))) {
                    return true;
                }
            }
            return false;
        }
    }
}

namespace Filament\Contracts {
    interface Plugin
    {
        public function getId(): string;

        public function register(\Filament\Panel $panel): void;

        public function boot(\Filament\Panel $panel): void;
    }
}

namespace Filament {
    class Panel
    {
        /** @var array<int, array{0: string, 1: \Closure}> */
        public array $hooks = [];

        /** @var array<int, class-string> */
        public array $pages = [];

        /** @var array<int, \Filament\Navigation\NavigationItem> */
        public array $navigationItems = [];

        public function __construct(private string $id)
        {
        }

        public function getId(): string
        {
            return $this->id;
        }

        public function renderHook(string $name, \Closure $hook, string|array|null $scopes = null): static
        {
            $this->hooks[] = [$name, $hook];

            return $this;
        }

        /** @param array<int, class-string> $pages */
        public function pages(array $pages): static
        {
            $this->pages = [...$this->pages, ...$pages];

            return $this;
        }

        /** @param array<int, \Filament\Navigation\NavigationItem> $items */
        public function navigationItems(array $items): static
        {
            $this->navigationItems = [...$this->navigationItems, ...$items];

            return $this;
        }

        /** As Filament names a panel's routes. */
        public function generateRouteName(string $name): string
        {
            return "filament.{$this->id}.{$name}";
        }
    }
}

namespace Filament\Facades {
    class Filament
    {
        public static ?\Filament\Panel $panel = null;
        public static mixed $tenant = null;
        public static mixed $user = null;

        public static function getCurrentPanel(): ?\Filament\Panel
        {
            return self::$panel;
        }

        public static function getTenant(): mixed
        {
            return self::$tenant;
        }

        public static function auth(): object
        {
            return new class {
                public function user(): mixed
                {
                    return Filament::$user;
                }
            };
        }
    }
}

namespace Filament\Navigation {
    class NavigationItem
    {
        private string|\Closure|null $url = null;
        private ?\Closure $isActiveWhen = null;
        private bool|\Closure $visible = true;
        private ?string $icon = null;
        private ?int $sort = null;

        final public function __construct(private string|\Closure $label)
        {
        }

        public static function make(string|\Closure|null $label = null): static
        {
            return new static($label ?? '');
        }

        public function url(string|\Closure|null $url, bool|\Closure $shouldOpenInNewTab = false): static
        {
            $this->url = $url;

            return $this;
        }

        public function icon(string|\Closure|null $icon): static
        {
            $this->icon = $icon;

            return $this;
        }

        public function isActiveWhen(?\Closure $callback): static
        {
            $this->isActiveWhen = $callback;

            return $this;
        }

        public function visible(bool|\Closure $condition = true): static
        {
            $this->visible = $condition;

            return $this;
        }

        public function sort(int|\Closure|null $sort): static
        {
            $this->sort = $sort;

            return $this;
        }

        /** What the panel's navigation shows of the item on the current request. */
        public function toArray(): array
        {
            $visible = $this->visible instanceof \Closure ? (bool) ($this->visible)() : $this->visible;

            return [
                'label' => $this->label instanceof \Closure ? ($this->label)() : $this->label,
                'icon' => $this->icon,
                'visible' => $visible,
                'url' => $visible ? ($this->url instanceof \Closure ? ($this->url)() : $this->url) : null,
                'active' => $visible && $this->isActiveWhen !== null && (bool) ($this->isActiveWhen)(),
                'sort' => $this->sort,
            ];
        }
    }
}

namespace Illuminate\Contracts\Support {
    interface Htmlable
    {
        public function toHtml();
    }
}

namespace Illuminate\Routing {
    class Route
    {
        /** @var array<string, string> */
        public array $wheres = [];
        /** @var array<int, string> */
        public array $middleware = [];
        /** @var array<int, string> */
        public array $withoutMiddleware = [];
        public ?string $name = null;
        /** @var array<string, string> */
        public array $parameters = [];

        public function __construct(public string $uri, public mixed $action, public string $namePrefix = '')
        {
        }

        public function where(array|string $name, ?string $expression = null): static
        {
            $this->wheres = [...$this->wheres, ...(is_array($name) ? $name : [$name => $expression])];

            return $this;
        }

        public function middleware(array|string|null $middleware = null): static
        {
            $this->middleware = [...$this->middleware, ...(array) $middleware];

            return $this;
        }

        public function withoutMiddleware(array|string $middleware): static
        {
            $this->withoutMiddleware = [...$this->withoutMiddleware, ...(array) $middleware];

            return $this;
        }

        public function name(string $name): static
        {
            $this->name = $this->namePrefix . $name;

            return $this;
        }

        public function getName(): ?string
        {
            return $this->name;
        }

        public function parameter(string $name, mixed $default = null): mixed
        {
            return $this->parameters[$name] ?? $default;
        }
    }
}

namespace Illuminate\Support\Facades {
    class Route
    {
        /** @var array<int, \Illuminate\Routing\Route> */
        public static array $routes = [];
        /** The name prefix of the group being registered (Filament's `filament.<panel>.pages.`). */
        public static string $groupName = '';
        /** The path prefix of the group (`server/{tenant}` in the server panel). */
        public static string $groupPrefix = '';

        public static function get(string $uri, array|string|callable|null $action = null): \Illuminate\Routing\Route
        {
            return self::$routes[] = new \Illuminate\Routing\Route(self::$groupPrefix . $uri, $action, self::$groupName);
        }

        /** Laravel's route(): the named route's URI with its parameters; missing route or parameter throws. */
        public static function url(string $name, array $parameters): string
        {
            foreach (self::$routes as $route) {
                if ($route->name === $name) {
                    $uri = preg_replace_callback('/\{(\w+)(\?)?\}/', function (array $match) use ($parameters, $name): string {
                        if (array_key_exists($match[1], $parameters)) {
                            return str_replace('%2F', '/', rawurlencode((string) $parameters[$match[1]]));
                        }
                        if (($match[2] ?? '') === '?') {
                            return '';
                        }
                        throw new \RuntimeException("Missing required parameter for [Route: {$name}] [Missing parameter: {$match[1]}].");
                    }, $route->uri);

                    return rtrim((string) $uri, '/');
                }
            }
            throw new \RuntimeException("Route [{$name}] not defined.");
        }
    }
}

namespace Filament\Pages {
    use Filament\Facades\Filament;
    use Filament\Panel;
    use Illuminate\Contracts\Support\Htmlable;

    class PageConfiguration
    {
    }

    /** What Filament 3, 4 and 5 share of a page, besides the methods whose signatures differ. */
    abstract class SharedPage
    {
        protected static ?string $slug = null;

        public static function getRouteMiddleware(Panel $panel): string|array
        {
            return ['panel:' . $panel->getId()];
        }

        public static function getWithoutRouteMiddleware(Panel $panel): string|array
        {
            return [];
        }

        public static function shouldRegisterNavigation(): bool
        {
            return true;
        }

        /** Filament's Page::getUrl: the page's route by its name, in the current panel (and tenant). */
        public static function getUrl(array $parameters = [], bool $isAbsolute = true, ?string $panel = null, mixed $tenant = null): string
        {
            $tenant ??= Filament::getTenant();
            if ($tenant !== null) {
                $parameters['tenant'] ??= $tenant->uuid_short;
            }

            return \Illuminate\Support\Facades\Route::url(static::getRouteName(), $parameters);
        }

        public function getView(): string
        {
            return 'filament-panels::pages.page';
        }

        public function getTitle(): string|Htmlable
        {
            return substr((string) strrchr('\\' . static::class, '\\'), 1);
        }

        /** @return array<string, mixed> */
        protected function getViewData(): array
        {
            return [];
        }

        protected static function defaultSlug(): string
        {
            return static::$slug ?? strtolower((string) preg_replace('/(?<!^)[A-Z]/', '-$0', substr((string) strrchr('\\' . static::class, '\\'), 1)));
        }
    }

    if (getenv('FILAMENT_MAJOR') === '3') {
        abstract class Page extends SharedPage
        {
            public static function routes(Panel $panel): void
            {
                \Illuminate\Support\Facades\Route::get('/' . static::getSlug(), static::class)->name(static::getRelativeRouteName());
            }

            public static function getSlug(): string
            {
                return static::defaultSlug();
            }

            public static function getRelativeRouteName(): string
            {
                return str_replace('/', '.', static::getSlug());
            }

            public static function getRouteName(?string $panel = null): string
            {
                return Filament::getCurrentPanel()->generateRouteName('pages.' . static::getRelativeRouteName());
            }

            public function getHeading(): string|Htmlable
            {
                return $this->getTitle();
            }
        }
    } else {
        abstract class Page extends SharedPage
        {
            public static function routes(Panel $panel, ?PageConfiguration $configuration = null): void
            {
                \Illuminate\Support\Facades\Route::get('/' . static::getSlug($panel), static::class)->name(static::getRelativeRouteName($panel));
            }

            public static function getSlug(?Panel $panel = null): string
            {
                return static::defaultSlug();
            }

            public static function getRelativeRouteName(Panel $panel): string
            {
                return str_replace('/', '.', static::getSlug($panel));
            }

            public static function getRouteName(?Panel $panel = null): string
            {
                $panel ??= Filament::getCurrentPanel();

                return $panel->generateRouteName('pages.' . static::getRelativeRouteName($panel));
            }

            public function getHeading(): string|Htmlable|null
            {
                return $this->getTitle();
            }
        }
    }
}

namespace Filament\View {
    class PanelsRenderHook
    {
        public const AUTH_LOGIN_FORM_AFTER = 'panels::auth.login.form.after';
        public const AUTH_LOGIN_FORM_BEFORE = 'panels::auth.login.form.before';
        public const HEAD_END = 'panels::head.end';
        public const PAGE_END = 'panels::page.end';
        public const PAGE_START = 'panels::page.start';
        public const SIDEBAR_NAV_END = 'panels::sidebar.nav.end';
        public const SIDEBAR_NAV_START = 'panels::sidebar.nav.start';
        public const TOPBAR_END = 'panels::topbar.end';
        public const TOPBAR_START = 'panels::topbar.start';
    }
}

namespace Filament\Support\Facades {
    class FilamentView
    {
        /** @var array<int, array{0: string, 1: \Closure}> */
        public static array $hooks = [];

        public static function registerRenderHook(string $name, \Closure $hook, string|array|null $scopes = null): void
        {
            self::$hooks[] = [$name, $hook];
        }
    }
}

namespace Illuminate\Support {
    abstract class ServiceProvider
    {
        public function __construct(protected mixed $app)
        {
        }
    }
}

namespace App\Models {
    class Server
    {
        public function __construct(public string $uuid_short)
        {
        }
    }

    /** Pelican's User::can: a subuser permission the panel knows is checked against the user's grants on the server. */
    class User
    {
        /** @param string[] $held */
        public function __construct(private array $held)
        {
        }

        public function can(string $ability, mixed $arguments = []): bool
        {
            if ($arguments instanceof Server && Subuser::doesPermissionExist($ability)) {
                [$group] = explode('.', $ability, 2);

                return in_array('*', $this->held, true) || in_array($ability, $this->held, true) || in_array("{$group}.*", $this->held, true);
            }

            return false;
        }
    }

    /** Pelican's Subuser model without its registration method, whose signature depends on the release. */
    abstract class SubuserModel
    {
        /** Two of Pelican's own groups, as SubuserPermission's cases give them. */
        public const CORE = [
            'control' => ['icon' => 'tabler-terminal-2', 'permissions' => ['console', 'start']],
            'websocket' => ['icon' => 'tabler-plug', 'permissions' => ['connect'], 'hidden' => true],
        ];

        /** @var array<string, array<string, mixed>> */
        public static array $customPermissions = [];

        public static function translationPrefixes(): bool
        {
            return getenv('PELICAN_SUBUSER') !== 'beta33';
        }

        /** @return array<int, array<string, mixed>> as Pelican's allPermissionData */
        public static function allPermissionData(): array
        {
            $allPermissions = [];
            foreach (self::CORE as $group => $data) {
                $allPermissions[$group] = ['name' => $group, 'hidden' => $data['hidden'] ?? false, 'icon' => $data['icon'], 'permissions' => $data['permissions']]
                    + (self::translationPrefixes() ? ['translation_prefix' => 'server/user.permissions'] : []);
            }
            foreach (static::$customPermissions as $customPermission) {
                $name = $customPermission['name'];
                $groupData = $allPermissions[$name] ?? [];
                $groupData = [
                    'name' => $name,
                    'hidden' => $customPermission['hidden'] ?? $groupData['hidden'] ?? false,
                    'icon' => $customPermission['icon'] ?? $groupData['icon'],
                    'permissions' => array_values(array_unique(array_merge($groupData['permissions'] ?? [], $customPermission['permissions']))),
                ] + (self::translationPrefixes() ? ['translation_prefix' => $customPermission['translation_prefix'] ?? $groupData['translation_prefix'] ?? 'server/user.permissions'] : []);
                $allPermissions[$name] = $groupData;
            }

            return array_values($allPermissions);
        }

        /** @return string[] */
        public static function allPermissionKeys(): array
        {
            $keys = [];
            foreach (static::allPermissionData() as $data) {
                foreach ($data['permissions'] as $permission) {
                    $keys[] = $data['name'] . '.' . $permission;
                }
            }

            return array_values(array_unique($keys));
        }

        public static function doesPermissionExist(string $permission): bool
        {
            return str_contains($permission, '.') && in_array($permission, static::allPermissionKeys(), true);
        }
    }

    if (getenv('PELICAN_SUBUSER') === 'beta33') {
        class Subuser extends SubuserModel
        {
            /** @param string[] $permissions */
            public static function registerCustomPermissions(string $name, array $permissions, ?string $icon = null, ?bool $hidden = null): void
            {
                $customPermission = static::$customPermissions[$name] ?? [];
                $customPermission['name'] = $name;
                $customPermission['permissions'] = array_merge($customPermission['permissions'] ?? [], $permissions);
                if (!is_null($icon)) {
                    $customPermission['icon'] = $icon;
                }
                if (!is_null($hidden)) {
                    $customPermission['hidden'] = $hidden;
                }
                static::$customPermissions[$name] = $customPermission;
            }
        }
    } else {
        class Subuser extends SubuserModel
        {
            /** @param string[] $permissions */
            public static function registerCustomPermissions(string $name, array $permissions, ?string $translationPrefix = null, null|string|\BackedEnum $icon = null, ?bool $hidden = null): void
            {
                $customPermission = static::$customPermissions[$name] ?? [];
                $customPermission['name'] = $name;
                $customPermission['permissions'] = array_merge($customPermission['permissions'] ?? [], $permissions);
                if (!is_null($translationPrefix)) {
                    $customPermission['translation_prefix'] = $translationPrefix;
                }
                if (!is_null($icon)) {
                    $customPermission['icon'] = $icon;
                }
                if (!is_null($hidden)) {
                    $customPermission['hidden'] = $hidden;
                }
                static::$customPermissions[$name] = $customPermission;
            }
        }
    }
}

namespace {
    /** Runs `$action`; its result, or what it threw. */
    function attempt(callable $action): mixed
    {
        try {
            return ['ok' => $action()];
        } catch (Throwable $error) {
            return ['error' => get_class($error) . ': ' . $error->getMessage()];
        }
    }

    $folder = $argv[1] ?? '';
    /** @var array<string, string> $pageKinds */
    $pageKinds = json_decode($argv[2] ?? '{}', true) ?: [];
    $requestData = json_decode($argv[3] ?? '{}', true) ?: [];
    $plugin = json_decode((string) file_get_contents($folder . '/plugin.json'), true, 512, JSON_THROW_ON_ERROR);
    // Pelican's PluginService: PSR-4 autoloading of src/ under the plugin's namespace, `lang/` as `<id>::`.
    spl_autoload_register(function (string $class) use ($folder, $plugin): void {
        $prefix = $plugin['namespace'] . '\\';
        if (str_starts_with($class, $prefix)) {
            require $folder . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        }
    });
    Illuminate\Translation\Translator::$namespaces[$plugin['id']] = $folder . '/lang';

    $registration = new ReflectionMethod(App\Models\Subuser::class, 'registerCustomPermissions');
    $providerClass = $plugin['namespace'] . '\\Providers\\HostPluginProvider';
    $provider = new $providerClass(null);
    $registered = attempt(function () use ($provider) {
        $provider->register();
        $provider->boot();

        return App\Models\Subuser::$customPermissions;
    });

    // Pelican's permission lookups, each as Pelican's code asks it.
    $lookups = [
        'allPermissionData' => attempt(fn () => App\Models\Subuser::allPermissionData()),
        'allPermissionKeys' => attempt(fn () => App\Models\Subuser::allPermissionKeys()),
    ];
    $permissionsFile = json_decode((string) @file_get_contents($folder . '/permissions.json'), true) ?: [];
    foreach ($permissionsFile['permissions'] ?? [] as $name) {
        $lookups['doesPermissionExist'][$name] = attempt(fn () => App\Models\Subuser::doesPermissionExist($name));
        $lookups['can'][$name] = attempt(fn () => (new App\Models\User([$name]))->can($name, new App\Models\Server('5f0c2a1e')));
    }

    // The server's Users page (SubuserResource): one tab per visible group, a CheckboxList named by the group;
    // ticking every box and saving, then opening the subuser again.
    $form = attempt(function () {
        $tabs = [];
        $state = [];
        foreach (App\Models\Subuser::allPermissionData() as $data) {
            if ($data['hidden']) {
                continue;
            }
            $prefix = $data['translation_prefix'] ?? 'server/user.permissions';
            $options = [];
            $descriptions = [];
            foreach ($data['permissions'] as $permission) {
                $options[$permission] = headline($permission);
                $descriptions[$permission] = trans($prefix . '.' . $data['name'] . '_' . str_replace('-', '_', $permission));
            }
            $tabs[] = [
                'name' => $data['name'],
                'label' => trans($prefix . '.' . $data['name'] . '_title'),
                'description' => trans($prefix . '.' . $data['name'] . '_desc'),
                'icon' => $data['icon'],
                'options' => $options,
                'descriptions' => $descriptions,
            ];
            data_set_path($state, $data['name'], array_keys($options));
        }
        $saved = [];
        foreach ($state as $key => $permissions) {
            foreach ($permissions as $permission) {
                $saved[] = "$key.$permission";
            }
        }
        $saved[] = 'websocket.connect';
        $saved = array_values(array_unique($saved));
        $transformed = [];
        foreach ($saved as $permission) {
            [$group, $action] = explode('.', $permission, 2);
            $transformed[$group][] = $action;
        }
        $ticked = [];
        foreach ($tabs as $tab) {
            $ticked[$tab['name']] = data_get_path($transformed, $tab['name']) ?? [];
        }

        return ['tabs' => $tabs, 'saved' => $saved, 'ticked' => $ticked];
    });

    $pluginClass = $plugin['namespace'] . '\\' . $plugin['class'];
    // The order a Filament page emits its hooks in: the page view (x-filament-panels::page), its header's
    // action hooks, and what the page's own view puts in its body.
    $emitted = fn (string $kind): array => [
        'panels::page.start',
        'panels::page.header.actions.before',
        'panels::page.header.actions.after',
        'panels::page.header-widgets.before',
        'panels::page.header-widgets.after',
        ...($kind === 'list-records' ? ['panels::resource.pages.list-records.table.before', 'panels::resource.pages.list-records.table.after'] : []),
        'panels::page.footer-widgets.before',
        'panels::page.footer-widgets.after',
        'panels::page.end',
    ];
    $panels = [];
    $pages = [];
    $rendered = [];
    $navigation = [];
    foreach (['app', 'server', 'admin'] as $id) {
        $panel = new Filament\Panel($id);
        Filament\Facades\Filament::$panel = $panel;
        $instance = new $pluginClass();
        if (!$instance instanceof Filament\Contracts\Plugin) {
            throw new RuntimeException('the plugin class does not implement Filament\Contracts\Plugin');
        }
        $registeredHere = in_array($id, $plugin['panels'] ?? ['admin', 'app', 'server'], true);
        if ($registeredHere) {
            $instance->register($panel);
            $instance->boot($panel);
        }
        // As Filament's renderHook does: the closure is called with the rendering page's scopes (its class names).
        $panels[$id] = array_map(fn (array $hook): array => [
            'hook' => $hook[0],
            'html' => array_combine(array_keys($pageKinds), array_map(fn (string $page): string => (string) ($hook[1])(scopes: [$page]), array_keys($pageKinds))),
        ], $panel->hooks);
        foreach ($pageKinds as $page => $kind) {
            $html = '';
            foreach ($emitted($kind) as $name) {
                foreach ($panel->hooks as [$hookName, $closure]) {
                    if ($hookName === $name) {
                        $html .= (string) $closure(scopes: [$page]);
                    }
                }
            }
            preg_match_all('/data-host-slot="([^"]+)"/', $html, $matches);
            $rendered[$id][$page] = $matches[1];
        }
        $pluginId = $instance->getId();
        // As Filament does for each page of a panel: its routes inside the panel's group, and, on a request, its view.
        Illuminate\Support\Facades\Route::$groupName = "filament.{$id}.pages.";
        Illuminate\Support\Facades\Route::$groupPrefix = $id === 'server' ? '/server/{tenant}' : '';
        $pages[$id] = array_map(function (string $class) use ($panel): array {
            $before = count(Illuminate\Support\Facades\Route::$routes);
            $class::routes($panel);
            $routes = array_slice(Illuminate\Support\Facades\Route::$routes, $before);
            $page = new $class();
            $viewData = (new ReflectionMethod($page, 'getViewData'))->invoke($page);
            Filament\Facades\Filament::$tenant = $panel->getId() === 'server' ? new App\Models\Server('5f0c2a1e') : null;

            return [
                'class' => $class,
                'routes' => array_map(fn (Illuminate\Routing\Route $route): array => [
                    'uri' => $route->uri,
                    'action' => $route->action,
                    'where' => $route->wheres,
                    'middleware' => $route->middleware,
                    'name' => $route->name,
                ], $routes),
                'url' => attempt(fn () => $class::getUrl(['path' => 'acme/full/stats'])),
                'urlWithoutPath' => attempt(fn () => $class::getUrl()),
                'navigation' => $class::shouldRegisterNavigation(),
                'view' => $page->getView(),
                'title' => $page->getTitle(),
                'heading' => $page->getHeading(),
                'viewData' => $viewData,
            ];
        }, $panel->pages);

        // The navigation on the request asked for (when it is of this panel), else on the panel's home.
        $onThisPanel = ($requestData['panel'] ?? null) === $id;
        $route = null;
        if ($onThisPanel && isset($requestData['route'])) {
            foreach (Illuminate\Support\Facades\Route::$routes as $candidate) {
                if ($candidate->name === $requestData['route']) {
                    $route = clone $candidate;
                    $route->parameters = ['path' => $requestData['path'] ?? ''];
                }
            }
        }
        Illuminate\Http\Request::$current = new Illuminate\Http\Request($onThisPanel ? ($requestData['url'] ?? '/') : '/', $route);
        Filament\Facades\Filament::$tenant = $id === 'server' ? new App\Models\Server('5f0c2a1e') : null;
        Filament\Facades\Filament::$user = new App\Models\User($requestData['held'] ?? []);
        $navigation[$id] = attempt(fn () => array_map(fn (Filament\Navigation\NavigationItem $item): array => $item->toArray(), $panel->navigationItems));
    }

    echo json_encode([
        'pluginId' => $pluginId,
        'registration' => array_map(fn (ReflectionParameter $parameter): string => $parameter->getName(), $registration->getParameters()),
        'global' => array_map(fn (array $hook): array => ['hook' => $hook[0], 'html' => (string) ($hook[1])()], Filament\Support\Facades\FilamentView::$hooks),
        'panels' => $panels,
        'rendered' => $rendered,
        'pages' => $pages,
        'navigation' => $navigation,
        'permissions' => $registered,
        'lookups' => $lookups,
        'form' => $form,
    ], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
}
