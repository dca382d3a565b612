// The console in a real browser: served at /console/ with its security headers, sign-in and sign-out.
import { describe, expect, it } from 'bun:test'
import { ADMIN } from '../support/harness.ts'
import { buttonSelector, chromiumPath, clickButton, consoleFixture, fill, newPage, screenshot, waitForText } from '../support/browser.ts'

const fx = consoleFixture()

describe.skipIf(!chromiumPath())('the console', () => {
  it('is served with a strict CSP and no framing, and signs an admin in and out', async () => {
    const res = await fetch(`${fx.srv.url}/console/`, { tls: { ca: fx.srv.caPem } } as RequestInit)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const { page, problems } = await newPage(fx.browser)
    await page.goto(`${fx.srv.url}/console/`)
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
