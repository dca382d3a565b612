// The console in a real browser: served at /console/ with its security headers, sign-in and sign-out.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser } from 'puppeteer-core'
import { ADMIN, startTestServer, type TestServer } from '../support/harness.ts'
import { buttonSelector, chromiumPath, clickButton, fill, launchBrowser, newPage, screenshot, waitForText } from '../support/browser.ts'

let srv: TestServer
let browser: Browser

beforeAll(async () => {
  srv = await startTestServer()
  if (chromiumPath()) browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await srv?.stop()
})

describe.skipIf(!chromiumPath())('the console', () => {
  it('is served with a strict CSP and no framing, and signs an admin in and out', async () => {
    const res = await fetch(`${srv.url}/console/`, { tls: { ca: srv.caPem } } as RequestInit)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const { page, problems } = await newPage(browser)
    await page.goto(`${srv.url}/console/`)
    await fill(page, 'Username', ADMIN.username)
    await fill(page, 'Password', ADMIN.password)
    await screenshot(page, '01-sign-in')
    await clickButton(page, 'Sign in')
    await waitForText(page, 'Overview')
    await screenshot(page, '02-overview')
    await clickButton(page, 'Sign out')
    await page.waitForSelector(buttonSelector('Sign in'))
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})
