// A real browser for the console's end-to-end tests: Debian's chromium (installed by .ci/run), driven headless by
// puppeteer-core (no browser download). Tests start the real server (startTestServer) over HTTPS; the browser trusts
// nothing but is told to accept the test's self-signed certificate. Screenshots go to test/output/screenshots/console/
// (ignored by git, so a test run leaves the tree clean), or to EDGEPLANE_SCREENSHOTS: `bun run screenshots`
// (scripts/screenshots.ts) points it at test/screenshots/console/, the committed ones docs/api-users/console.md links to.
import { existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'bun:test'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import type { ServerOptions } from '../../src/server.ts'
import { ADMIN, startTestServer, type TestServer } from './harness.ts'

export const SCREENSHOTS = process.env.EDGEPLANE_SCREENSHOTS || join(import.meta.dir, '..', 'output', 'screenshots', 'console')

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']

/** The system's chromium, or undefined (then the browser tests skip, naming why; CI installs it). */
export function chromiumPath(): string | undefined {
  return process.env.EDGEPLANE_CHROMIUM ?? CANDIDATES.find((p) => existsSync(p))
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath()
  if (!executablePath) throw new Error('no chromium: apt-get install chromium (or set EDGEPLANE_CHROMIUM)')
  return puppeteer.launch({
    executablePath,
    headless: true,
    acceptInsecureCerts: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  })
}

/** A new page that records console errors and CSP violations (a test asserts there are none). */
export async function newPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 860 })
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(String(e)))
  return { page, problems }
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path: path as `${string}.png`, fullPage: true })
  return path
}

/** The input, textarea or select of the field whose label text is `label` (ui/common.tsx Field, or any <label>). */
export function fieldSelector(label: string): string {
  const q = label.includes("'") ? `"${label}"` : `'${label}'`
  return `xpath/.//label[normalize-space(span)=${q} or normalize-space(text())=${q}]//*[self::input or self::textarea or self::select]`
}

/** Replaces the text of the field labelled `label` with `value`, typing it as a user would. */
export async function fill(page: Page, label: string, value: string): Promise<void> {
  const handle = await page.waitForSelector(fieldSelector(label))
  await handle!.click({ count: 3 })
  await page.keyboard.press('Backspace')
  await handle!.type(value)
}

/** A button (or a link styled as one) whose text is `name`. */
export function buttonSelector(name: string): string {
  const q = name.includes("'") ? `"${name}"` : `'${name}'`
  return `xpath/.//*[self::button or self::a][normalize-space()=${q}]`
}

export async function clickButton(page: Page, name: string): Promise<void> {
  const b = await page.waitForSelector(buttonSelector(name))
  await b!.click()
}

/** Waits until the page's text includes `text`. */
export async function waitForText(page: Page, text: string, timeout = 10_000): Promise<void> {
  // runs in the page (the test's own types know no DOM)
  try {
    await page.waitForFunction((t: string) => (globalThis as any).document.body.innerText.includes(t), { timeout }, text)
  } catch (e) {
    // say what the page showed instead: its text and a screenshot beside the others
    const shown = await page.evaluate(() => (globalThis as any).document.body.innerText as string).catch(() => '(the page cannot be read)')
    const path = join(tmpdir(), `edgeplane-console-failed-${Date.now()}.png`)
    await page.screenshot({ path: path as `${string}.png`, fullPage: true }).catch(() => undefined)
    throw new Error(`the page never showed ${JSON.stringify(text)} within ${timeout} ms; it shows (${path}):\n${shown.slice(0, 1500)}`, { cause: e })
  }
}

/**
 * A test file's console fixture: registers beforeAll/afterAll that start a test server (with `opts`) and, when chromium
 * is there, a browser; `setUp` runs after both (data the file's tests share). Read them through the getters.
 */
export function consoleFixture(opts: Partial<ServerOptions> = {}, setUp?: (srv: TestServer) => Promise<void>): { readonly srv: TestServer; readonly browser: Browser } {
  let srv: TestServer | undefined
  let browser: Browser | undefined
  beforeAll(async () => {
    srv = await startTestServer(opts)
    if (chromiumPath()) browser = await launchBrowser()
    await setUp?.(srv)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await srv?.stop()
  })
  return {
    get srv() {
      if (!srv) throw new Error('the test server is not started yet')
      return srv
    },
    get browser() {
      if (!browser) throw new Error('no browser (chromium missing)')
      return browser
    },
  }
}

/** Opens the console at `route` and signs in as `who` (the default admin); the page shown next is the route's. */
export async function signIn(page: Page, baseUrl: string, route = '/', who: { username: string; password: string } = ADMIN): Promise<void> {
  await page.goto(`${baseUrl}/console/#${route}`)
  await fill(page, 'Username', who.username)
  await fill(page, 'Password', who.password)
  await clickButton(page, 'Sign in')
}
