<?php
// Loads Host's generated Pelican plugin (the folder given as the first argument) against minimal stand-ins
// of the Filament, Laravel and Pelican classes it uses, with the signatures of those projects' sources
// (Filament's Plugin contract, Panel::renderHook and Panel::pages, Page's routing and view methods,
// FilamentView::registerRenderHook, PanelsRenderHook's constants, Illuminate's ServiceProvider and Route,
// Pelican's Subuser::registerCustomPermissions), then runs it the way Pelican does: the provider's register
// and boot, the plugin's register and boot per panel, every render hook closure, and each page's routes and
// view. Prints what it emitted as JSON for test/panel-install/php.test.ts.
//
// FILAMENT_MAJOR=3 declares Filament 3's Page signatures (a one-argument `routes`, a heading that is never
// null) instead of Filament 4's: PHP checks an override against its parent when the class is loaded, so
// running under both proves the plugin's page classes load on either.

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

        /** @var array<int, class-string> */
        public array $pages = [];

        /** @param array<int, class-string> $pages */
        public function pages(array $pages): static
        {
            $this->pages = [...$this->pages, ...$pages];

            return $this;
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

        public function __construct(public string $uri, public mixed $action)
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
            $this->name = $name;

            return $this;
        }
    }
}

namespace Illuminate\Support\Facades {
    class Route
    {
        /** @var array<int, \Illuminate\Routing\Route> */
        public static array $routes = [];

        public static function get(string $uri, array|string|callable|null $action = null): \Illuminate\Routing\Route
        {
            return self::$routes[] = new \Illuminate\Routing\Route($uri, $action);
        }
    }
}

namespace Filament\Pages {
    use Filament\Panel;
    use Illuminate\Contracts\Support\Htmlable;

    class PageConfiguration
    {
    }

    /** What Filament 3 and 4 share of a page, besides the two methods whose signatures differ. */
    abstract class SharedPage
    {
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
    }

    if (getenv('FILAMENT_MAJOR') === '3') {
        abstract class Page extends SharedPage
        {
            public static function routes(Panel $panel): void
            {
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
    class Subuser
    {
        /** @var array<string, array{name: string, icon?: string, hidden?: bool, permissions: string[]}> */
        public static array $customPermissions = [];

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
}

namespace {
    $folder = $argv[1] ?? '';
    $plugin = json_decode((string) file_get_contents($folder . '/plugin.json'), true, 512, JSON_THROW_ON_ERROR);
    // Pelican's PluginService: PSR-4 autoloading of src/ under the plugin's namespace.
    spl_autoload_register(function (string $class) use ($folder, $plugin): void {
        $prefix = $plugin['namespace'] . '\\';
        if (str_starts_with($class, $prefix)) {
            require $folder . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        }
    });

    $providerClass = $plugin['namespace'] . '\\Providers\\HostPluginProvider';
    $provider = new $providerClass(null);
    $provider->register();
    $provider->boot();

    $pluginClass = $plugin['namespace'] . '\\' . $plugin['class'];
    /** @var string[] $pageClasses */
    $pageClasses = json_decode($argv[2] ?? '[]', true) ?: [];
    $panels = [];
    $pages = [];
    foreach (['app', 'server', 'admin'] as $id) {
        $panel = new Filament\Panel($id);
        // Pelican adds the plugin only to the panels plugin.json lists; run it on admin too, to see it add nothing there.
        $instance = new $pluginClass();
        if (!$instance instanceof Filament\Contracts\Plugin) {
            throw new RuntimeException('the plugin class does not implement Filament\Contracts\Plugin');
        }
        $instance->register($panel);
        $instance->boot($panel);
        // As Filament's renderHook does: the closure is called with the rendering page's scopes (its class
        // names); rendered here once per page class given on the command line.
        $panels[$id] = array_map(fn (array $hook): array => [
            'hook' => $hook[0],
            'html' => array_combine($pageClasses, array_map(fn (string $page): string => (string) ($hook[1])(scopes: [$page]), $pageClasses)),
        ], $panel->hooks);
        $pluginId = $instance->getId();
        // As Filament does for each page of a panel: its routes inside the panel's group, and, on a request, its view.
        $pages[$id] = array_map(function (string $class) use ($panel): array {
            Illuminate\Support\Facades\Route::$routes = [];
            $class::routes($panel);
            $page = new $class();
            $viewData = (new ReflectionMethod($page, 'getViewData'))->invoke($page);

            return [
                'class' => $class,
                'routes' => array_map(fn (Illuminate\Routing\Route $route): array => [
                    'uri' => $route->uri,
                    'action' => $route->action,
                    'where' => $route->wheres,
                    'middleware' => $route->middleware,
                    'name' => $route->name,
                ], Illuminate\Support\Facades\Route::$routes),
                'navigation' => $class::shouldRegisterNavigation(),
                'view' => $page->getView(),
                'title' => $page->getTitle(),
                'heading' => $page->getHeading(),
                'viewData' => $viewData,
            ];
        }, $panel->pages);
    }

    echo json_encode([
        'pluginId' => $pluginId,
        'global' => array_map(fn (array $hook): array => ['hook' => $hook[0], 'html' => (string) ($hook[1])()], Filament\Support\Facades\FilamentView::$hooks),
        'panels' => $panels,
        'pages' => $pages,
        'permissions' => App\Models\Subuser::$customPermissions,
    ], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
}
