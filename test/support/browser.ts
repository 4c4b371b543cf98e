import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { type PanelUserName, request, type RunningServer, startServer, tokens, writePanelConfig } from "../http/helpers.js"
import { repoRoot, tempDir } from "./cli.js"
import { describeNeeding, findProgram, programsRequired, requirePrograms } from "./programs.js"

// The shared browser harness (real Chromium through playwright-core): a temp panel root served by
// `host serve` on 127.0.0.1:0, signed-in pages for the users of test/http/helpers.ts, and screenshots
// under test-results/. Browser tests run whenever chromium exists; without it they skip, except with
// HOST_TEST_BROWSER=1 (CI), where they fail instead.

// A suite skipped for want of a browser is named in the run's closing line (test/support/programs.ts), as
// is one that needs php or nginx; HOST_TEST_REQUIRE_PROGRAMS=1 requires the browser too.
export const chromiumPath = process.env.HOST_CHROMIUM_PATH ?? findProgram("chromium") ?? "/usr/bin/chromium"
export const browserAvailable = process.env.HOST_CHROMIUM_PATH === undefined ? findProgram("chromium") !== undefined : existsSync(chromiumPath)
export const browserRequired = process.env.HOST_TEST_BROWSER === "1" || programsRequired

/** `describe` when the browser tests should run (or must fail for want of a browser), else `describe.skip`. */
export const describeBrowser = (name: string, fn: () => void): void => {
  const check = requirePrograms(["chromium"], name, { isMissing: () => !browserAvailable, required: browserRequired })
  describeNeeding(check, name, fn)
}

export const launchBrowser = (): Promise<Browser> => {
  if (!browserAvailable) {
    return Promise.reject(new Error(`no Chromium at ${chromiumPath} (HOST_TEST_BROWSER=1 requires one: apt-get install chromium, or set HOST_CHROMIUM_PATH)`))
  }
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}

export const viewports = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 }
} as const
export type ViewportName = keyof typeof viewports

export interface PanelHarness {
  readonly root: string
  readonly server: RunningServer
  readonly browser: Browser
  readonly url: string
  /** Stops the browser and the server and removes the root. */
  readonly stop: () => Promise<void>
}

/**
 * A temp panel root (the users and servers of `writePanelConfig`, plus `extraPanelYaml`), prepared by
 * `setup` (install extensions, …) before `host serve` starts, and a browser.
 */
export const startPanel = async (
  options: {
    readonly extraPanelYaml?: string
    readonly setup?: (root: string) => Promise<void>
    readonly env?: Readonly<Record<string, string>>
    readonly pollMs?: number
  } = {}
): Promise<PanelHarness> => {
  const root = tempDir("host-browser-")
  writePanelConfig(root.path, options.extraPanelYaml)
  let server: RunningServer | undefined
  let browser: Browser | undefined
  try {
    await options.setup?.(root.path)
    server = await startServer(root.path, {
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs })
    })
    browser = await launchBrowser()
  } catch (error) {
    await server?.stop()
    root.cleanup()
    throw error
  }
  const running = server
  const open = browser
  return {
    root: root.path,
    server: running,
    browser: open,
    url: running.url,
    stop: async () => {
      await open.close().catch(() => undefined)
      await running.stop()
      root.cleanup()
    }
  }
}

let signIns = 0

/**
 * The session cookie of `user`, from the JSON sign-in (the form's own flow is tested in test/panel-app).
 * Each call signs in as its own client (a fresh X-Forwarded-For through the loopback, a trusted proxy):
 * a suite opens more pages per user than the sign-in rate limit allows one client a minute (docs/http.md
 * "Rate limits"; the limit itself is tested in test/http/client-address.test.ts).
 */
export const sessionCookie = async (url: string, user: PanelUserName): Promise<{ name: string; value: string }> => {
  signIns++
  const response = await fetch(`${url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": `198.18.${Math.floor(signIns / 250) % 250}.${(signIns % 250) + 1}` },
    body: JSON.stringify({ username: user, token: tokens[user] })
  })
  const header = response.headers.get("set-cookie") ?? ""
  const match = /^([^=;]+)=([^;]*)/.exec(header)
  if (response.status !== 200 || match === null) throw new Error(`signing in as ${user} failed: ${response.status} ${await response.text()}`)
  return { name: match[1]!, value: match[2]! }
}

export interface SignedInPage {
  readonly context: BrowserContext
  readonly page: Page
  /** Uncaught errors of the page (pageerror) and console.error messages, in order. */
  readonly errors: Array<string>
  readonly consoleMessages: Array<{ readonly type: string; readonly text: string }>
}

/**
 * A new browser context signed in as `user` (or signed out with `user: undefined`), at `path` when given.
 * `clock`: the page runs on Playwright's controllable clock (it flows as usual until the test moves it).
 */
export const openPage = async (
  harness: PanelHarness,
  options: { readonly user?: PanelUserName; readonly path?: string; readonly viewport?: ViewportName; readonly clock?: boolean } = {}
): Promise<SignedInPage> => {
  const context = await harness.browser.newContext({ viewport: viewports[options.viewport ?? "desktop"] })
  if (options.clock === true) await context.clock.install()
  if (options.user !== undefined) {
    const cookie = await sessionCookie(harness.url, options.user)
    await context.addCookies([{ ...cookie, url: harness.url }])
  }
  const page = await context.newPage()
  const errors: Array<string> = []
  const consoleMessages: Array<{ type: string; text: string }> = []
  page.on("pageerror", (error) => errors.push(error.message))
  page.on("console", (message) => {
    consoleMessages.push({ type: message.type(), text: message.text() })
    if (message.type() === "error") errors.push(message.text())
  })
  if (options.path !== undefined) await page.goto(`${harness.url}${options.path}`)
  return { context, page, errors, consoleMessages }
}

export const resultsDirectory = join(repoRoot, "test-results")

/** Saves a full-page screenshot as test-results/<name>.png and returns its path. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(resultsDirectory, { recursive: true })
  const file = join(resultsDirectory, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}

/** The `data-host-slot` ids present on the page right now (hidden ones included). */
export const slotIdsOnPage = (page: Page): Promise<ReadonlyArray<string>> =>
  page.$$eval("[data-host-slot]", (elements) => elements.map((element) => element.getAttribute("data-host-slot") ?? ""))

export { request, tokens }
export type { PanelUserName }
