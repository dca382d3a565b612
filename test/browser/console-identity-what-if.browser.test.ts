// The what-if panel on an identity's role-attribute form: before saving, it names the service the change would give.
import { describe, expect, it } from 'bun:test'
import { chromiumPath, clickButton, consoleFixture, fill, newPage, screenshot, signIn, waitForText } from '../support/browser.ts'

const fx = consoleFixture()

describe.skipIf(!chromiumPath())('the what-if panel on an identity', () => {
  it('names the service a new role attribute would give, before it is saved, and saving gives it', async () => {
    const wiki = await fx.srv.create('/services', { name: 'wiki', encryptionRequired: true })
    await fx.srv.create('/service-policies', { name: 'engineers-dial-wiki', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#engineers'], serviceRoles: [`@${wiki}`] })
    const dev = await fx.srv.create('/identities', { name: 'dev-1', type: 'Device', isAdmin: false })
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, `/identities/${dev}`)
    await waitForText(page, 'Identity dev-1')
    await fill(page, 'Add attribute', 'engineers')
    await clickButton(page, 'Add')
    await waitForText(page, 'Would gain access')
    const text = await page.evaluate(() => (globalThis as any).document.body.innerText as string)
    expect(text).toContain('dev-1')
    expect(text).toContain('wiki')
    await screenshot(page, '19-identity-role-attributes-what-if')
    // nothing saved yet
    expect((await fx.srv.mgmt.get(`/identities/${dev}`)).body.data.roleAttributes ?? []).toEqual([])
    await clickButton(page, 'Save role attributes')
    await waitForText(page, 'Role attributes saved.')
    expect((await fx.srv.mgmt.get(`/identities/${dev}`)).body.data.roleAttributes).toEqual(['engineers'])
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})
