// The what-if panel on an identity's role-attribute form: before saving, it names the service the change would give.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Browser } from 'puppeteer-core'
import { ADMIN, startTestServer, type TestServer } from '../support/harness.ts'
import { chromiumPath, clickButton, fill, launchBrowser, newPage, screenshot, waitForText } from '../support/browser.ts'

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

describe.skipIf(!chromiumPath())('the what-if panel on an identity', () => {
  it('names the service a new role attribute would give, before it is saved, and saving gives it', async () => {
    const wiki = await srv.create('/services', { name: 'wiki', encryptionRequired: true })
    await srv.create('/service-policies', { name: 'engineers-dial-wiki', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#engineers'], serviceRoles: [`@${wiki}`] })
    const dev = await srv.create('/identities', { name: 'dev-1', type: 'Device', isAdmin: false })
    const { page, problems } = await newPage(browser)
    await page.goto(`${srv.url}/console/`)
    await fill(page, 'Username', ADMIN.username)
    await fill(page, 'Password', ADMIN.password)
    await clickButton(page, 'Sign in')
    await waitForText(page, 'Overview')
    await page.goto(`${srv.url}/console/#/identities/${dev}`)
    await waitForText(page, 'Identity dev-1')
    await fill(page, 'Add attribute', 'engineers')
    await clickButton(page, 'Add')
    await waitForText(page, 'Would gain access')
    const text = await page.evaluate(() => (globalThis as any).document.body.innerText as string)
    expect(text).toContain('dev-1')
    expect(text).toContain('wiki')
    await screenshot(page, '19-identity-role-attributes-what-if')
    // nothing saved yet
    expect((await srv.mgmt.get(`/identities/${dev}`)).body.data.roleAttributes ?? []).toEqual([])
    await clickButton(page, 'Save role attributes')
    await waitForText(page, 'Role attributes saved.')
    expect((await srv.mgmt.get(`/identities/${dev}`)).body.data.roleAttributes).toEqual(['engineers'])
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})
