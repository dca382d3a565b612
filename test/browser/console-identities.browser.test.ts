// The console's identities and overview pages in a real browser against the real server over HTTPS: sign-in (and with
// the TOTP step owed), an identity created through the form with an ott enrollment whose JWT (text and QR code) is
// read from the page and redeemed over the API, then shown as enrolled; the filter's syntax error; a name with
// `<script>` shown as text; a session ended behind the console's back; disable, delete with its confirmation; the
// overview's counts, health checks and what needs attention.
import { describe, expect, it } from 'bun:test'
import jsQR from 'jsqr'
import { Secret, TOTP } from 'otpauth'
import { PNG } from 'pngjs'
import type { Page } from 'puppeteer-core'
import { generateKeyPair } from '../../src/pki/pki-keys.ts'
import { ADMIN, expectStatus } from '../support/harness.ts'
import { makeClientCert, makeCsrPem, makeTestCa } from '../support/pki.ts'
import { buttonSelector, chromiumPath, clickButton, consoleFixture, fill, newPage, screenshot, signIn, waitForText } from '../support/browser.ts'

const fx = consoleFixture()


/** The text of the first element matching `selector` (runs in the page). */
async function textOf(page: Page, selector: string): Promise<string> {
  await page.waitForSelector(selector)
  return page.$eval(selector, (e) => (e as unknown as { textContent: string }).textContent)
}

/** The text of the list's row that names `name`, once the list shows it. */
async function rowText(page: Page, name: string): Promise<string> {
  const row = await page.waitForFunction(
    (n: string) => [...(globalThis as any).document.querySelectorAll('tbody tr')].map((r: { innerText: string }) => r.innerText).find((t: string) => t.includes(n)),
    { timeout: 10_000 },
    name,
  )
  return (await row.jsonValue()) as string
}

describe.skipIf(!chromiumPath())('the console: identities', () => {
  it('creates an identity with an ott enrollment through the form; its JWT and QR code are on the page; enrolled over the API it shows as enrolled', async () => {
    await fx.srv.create('/identities', { name: 'existing-phone', type: 'Device', isAdmin: false, roleAttributes: ['phones'] })
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url)
    await waitForText(page, 'Health checks')
    await clickButton(page, 'Identities')
    await waitForText(page, 'existing-phone')
    await clickButton(page, 'New identity')
    await fill(page, 'Name', 'laptop-1')
    await fill(page, 'Add attribute', 'laptops')
    await clickButton(page, 'Add')
    await fill(page, 'Add attribute', 'phones')
    await page.keyboard.press('Enter')
    await page.waitForSelector('button[aria-label="Remove laptops"]')
    await page.waitForSelector('button[aria-label="Remove phones"]')
    await screenshot(page, '12-identity-create')
    await clickButton(page, 'Create')
    await waitForText(page, 'Enrollment (ott)')
    await waitForText(page, 'not yet: enrollment outstanding (ott)')
    const jwt = (await textOf(page, 'pre.jwt')).trim()
    // the JWT on the page is the identity's enrollment
    const list = await fx.srv.mgmt.get(`/identities?filter=${encodeURIComponent('name = "laptop-1"')}`)
    const identity = list.body.data[0]
    expect(identity.roleAttributes.sort()).toEqual(['laptops', 'phones'])
    expect(jwt).toBe(identity.enrollment.ott.jwt)
    // the QR code encodes the same JWT
    const canvas = await page.waitForSelector('canvas.qr')
    const png = PNG.sync.read(Buffer.from(await canvas!.screenshot({ type: 'png' })))
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)
    expect(decoded?.data).toBe(jwt)
    // Copy puts it on the clipboard (allowed to this origin, as a user would allow it)
    await fx.browser.defaultBrowserContext().overridePermissions(fx.srv.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write'])
    await clickButton(page, 'Copy')
    await waitForText(page, 'Copied to the clipboard.')
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText() as Promise<string>)).toBe(jwt)
    // the download link names the file after the identity
    expect(await page.$eval('a[download]', (a) => (a as unknown as { download: string }).download)).toBe('laptop-1.jwt')
    await screenshot(page, '13-identity-created-jwt-qr')
    // at 200 % zoom (half the width in CSS pixels) nothing runs off the side
    await page.setViewport({ width: 640, height: 860, deviceScaleFactor: 2 })
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(640)
    await screenshot(page, '18-identity-created-zoom-200')
    await page.setViewport({ width: 1280, height: 860 })
    // an SDK redeems the token it read from the page
    const token = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).jti
    const keys = await generateKeyPair('ec-p256')
    expectStatus(await fx.srv.client.post('/enroll/ott', { token, clientCsr: await makeCsrPem(keys, { commonName: 'laptop-1' }) }, { session: null }), 200)
    await page.reload()
    await waitForText(page, 'enrolled (cert)')
    expect(await page.$('pre.jwt')).toBeNull()
    await screenshot(page, '14-identity-detail')
    // its role attributes change from its page
    await page.click('button[aria-label="Remove phones"]')
    await clickButton(page, 'Save role attributes')
    await waitForText(page, 'Role attributes saved.')
    expect((await fx.srv.mgmt.get(`/identities/${identity.id}`)).body.data.roleAttributes).toEqual(['laptops'])
    // the list shows it enrolled
    await clickButton(page, 'All identities')
    const row = await rowText(page, 'laptop-1')
    expect(row).toContain('yes')
    expect(row).toContain('#laptops')
    expect(row).not.toContain('#phones')
    await screenshot(page, '11-identities-list')
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  it('creates identities with an ottca enrollment (the CA picked from the list) and an updb enrollment (the username refused at its field, then taken)', async () => {
    const ca = await makeTestCa({ commonName: 'console CA', clock: fx.srv.clock })
    const caId = await fx.srv.create('/cas', { name: 'partner-ca', certPem: ca.certPem, isAuthEnabled: true, isAutoCaEnrollmentEnabled: false, isOttCaEnrollmentEnabled: true, identityRoles: [] })
    const verificationToken = (await fx.srv.mgmt.get(`/cas/${caId}`)).body.data.verificationToken
    const proof = await makeClientCert({ issuer: ca.signer, commonName: verificationToken, clock: fx.srv.clock })
    expectStatus(await fx.srv.mgmt('POST', `/cas/${caId}/verify`, { rawBody: proof.certPem, headers: { 'content-type': 'text/plain' } }), 200)
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, '/identities/new')
    await fill(page, 'Name', 'partner-device')
    await page.select('select[name="method"]', 'ottca')
    await page.waitForSelector('select[name="ca"] option[value="' + caId + '"]')
    await page.select('select[name="ca"]', caId)
    await clickButton(page, 'Create')
    await waitForText(page, 'Enrollment (ottca)')
    const ottca = (await fx.srv.mgmt.get(`/identities?filter=${encodeURIComponent('name = "partner-device"')}`)).body.data[0].enrollment.ottca
    expect(ottca.caId).toBe(caId)
    expect((await textOf(page, 'pre.jwt')).trim()).toBe(ottca.jwt)
    await page.goto(`${fx.srv.url}/console/#/identities/new`)
    await fill(page, 'Name', 'a-person')
    await page.select('select[name="type"]', 'User')
    await page.select('select[name="method"]', 'updb')
    await fill(page, 'Username', 'ab')
    await clickButton(page, 'Create')
    await page.waitForSelector('.field.invalid .field-error')
    expect(await textOf(page, '.field.invalid .field-error')).toContain('4 to 100 characters')
    await fill(page, 'Username', 'a.person')
    await clickButton(page, 'Create')
    await waitForText(page, 'username a.person')
    await waitForText(page, 'Enrollment (updb)')
    // the refused create's 400 is the browser's own console line; nothing else
    expect(problems.filter((p) => !p.includes('status of 400'))).toEqual([])
    await page.close()
  }, 60_000)

  it('shows the API error of a filter with a syntax error, with a caret where it is', async () => {
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, '/identities')
    await waitForText(page, 'existing-phone')
    await fill(page, 'Filter', 'name = ')
    await clickButton(page, 'Apply')
    await waitForText(page, 'Unexpected symbol')
    expect(await textOf(page, 'pre.caret')).toBe('name =\n      ^')
    await screenshot(page, '15-identities-filter-error')
    await fill(page, 'Filter', 'name contains "phone"')
    await clickButton(page, 'Apply')
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('pre.caret'))
    await waitForText(page, '1–1 of 1')
    // sorting by type is the API's too
    await fill(page, 'Filter', '')
    await clickButton(page, 'Apply')
    await clickButton(page, 'Type')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('th[aria-sort="ascending"]')?.innerText.startsWith('Type'))
    expect(await rowText(page, 'Default Admin')).toContain('Default')
    expect(await page.$('[role="alert"]')).toBeNull()
    // the refused filter's 400 is the browser's own console line; nothing else
    expect(problems.filter((p) => !p.includes('status of 400'))).toEqual([])
    await page.close()
  }, 60_000)

  it('shows a name with <script> as text and runs nothing', async () => {
    const name = '<script>alert(1)</script>'
    const id = await fx.srv.create('/identities', { name, type: 'User', isAdmin: false, roleAttributes: ['<img src=x onerror=alert(2)>'] })
    const { page, problems } = await newPage(fx.browser)
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    await signIn(page, fx.srv.url, '/identities')
    await waitForText(page, name)
    await clickButton(page, name)
    await waitForText(page, `Identity ${name}`)
    await waitForText(page, '<img src=x onerror=alert(2)>')
    expect(await page.$$eval('script', (s) => s.length)).toBe(1) // the console's own
    expect(await page.$$eval('img', (s) => s.length)).toBe(0)
    expect(page.url()).toContain(`#/identities/${id}`)
    expect(dialogs).toEqual([])
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  it('disables and enables an identity, and deletes one after a confirmation naming its authenticators, enrollments, sessions and the policies that name it', async () => {
    const id = await fx.srv.create('/identities', { name: 'to-go', type: 'User', isAdmin: false, enrollment: { ott: true } })
    expectStatus(await fx.srv.mgmt.post('/authenticators', { identityId: id, method: 'updb', username: 'to-go-user', password: 'to-go-pass-1' }), 201)
    await fx.srv.login('to-go-user', 'to-go-pass-1', 'client')
    await fx.srv.create('/service-policies', { name: 'names-to-go', type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${id}`], serviceRoles: ['#all'] })
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, `/identities/${id}`)
    await waitForText(page, 'enrolled (updb: to-go-user)')
    await fill(page, 'Disable for minutes (0: until enabled)', '0')
    await clickButton(page, 'Disable')
    await waitForText(page, 'yes, until enabled')
    expect((await fx.srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(true)
    await clickButton(page, 'Enable')
    await page.waitForSelector(buttonSelector('Disable'))
    expect((await fx.srv.mgmt.get(`/identities/${id}`)).body.data.disabled).toBe(false)
    await fx.srv.login('to-go-user', 'to-go-pass-1', 'client') // disabling ended its sessions: a new one
    await clickButton(page, 'Delete')
    await waitForText(page, 'service policy names-to-go')
    const what = await textOf(page, '#delete-what')
    expect(what).toContain('Authenticators: updb (to-go-user)')
    expect(what).toContain('Enrollments: ott')
    expect(what).toContain('API sessions: 1')
    await screenshot(page, '16-identity-delete-confirm')
    await clickButton(page, 'Delete for good')
    await waitForText(page, 'existing-phone')
    expect((await fx.srv.mgmt.get(`/identities/${id}`)).status).toBe(404)
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  it('re-enrolls an enrolled identity (a new ott enrollment replaces its certificate) and renews an outstanding enrollment', async () => {
    const id = await fx.srv.create('/identities', { name: 'phone-2', type: 'Device', isAdmin: false, enrollment: { ott: true } })
    const enrollment = (await fx.srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott
    const keys = await generateKeyPair('ec-p256')
    expectStatus(await fx.srv.client.post('/enroll/ott', { token: enrollment.token, clientCsr: await makeCsrPem(keys, { commonName: 'phone-2' }) }, { session: null }), 200)
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, `/identities/${id}`)
    await waitForText(page, 'enrolled (cert)')
    await clickButton(page, 'Re-enroll')
    await waitForText(page, 'Enrollment (ott)')
    const after = (await fx.srv.mgmt.get(`/identities/${id}`)).body.data
    expect(after.authenticators).toEqual({})
    expect((await textOf(page, 'pre.jwt')).trim()).toBe(after.enrollment.ott.jwt)
    fx.srv.clock.advance(60_000)
    await clickButton(page, 'Renew enrollment')
    await waitForText(page, 'renewed for three hours')
    const renewed = (await fx.srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott
    expect(Date.parse(renewed.expiresAt)).toBe(fx.srv.clock.now() + 3 * 3600_000)
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  it('signs in an admin who owes a TOTP code', async () => {
    const id = await fx.srv.create('/identities', { name: 'second-admin', type: 'User', isAdmin: true })
    const who = { username: 'second-admin', password: 'second-admin-pass-1' }
    expectStatus(await fx.srv.mgmt.post('/authenticators', { identityId: id, method: 'updb', ...who }), 201)
    const own = fx.srv.as(await fx.srv.login(who.username, who.password), 'management')
    expectStatus(await own.post('/current-identity/mfa', {}), 201)
    const secret = new URL((await own.get('/current-identity/mfa')).body.data.provisioningUrl).searchParams.get('secret')!
    const code = () => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: fx.srv.clock.now() })
    expectStatus(await own.post('/current-identity/mfa/verify', { code: code() }), 200)
    fx.srv.clock.advance(30_000) // a code is taken once: the browser gets the next one
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, '/identities', who)
    await page.waitForSelector(buttonSelector('Verify'))
    await fill(page, 'TOTP code', code())
    await screenshot(page, '17-sign-in-totp')
    await clickButton(page, 'Verify')
    await waitForText(page, 'existing-phone') // the page it was opened on
    expect(problems).toEqual([])
    await page.close()
    // the default admin resets that MFA from the identity's page
    const admin = await newPage(fx.browser)
    await signIn(admin.page, fx.srv.url, `/identities/${id}`)
    await waitForText(admin.page, 'TOTP enabled')
    await clickButton(admin.page, 'Reset MFA')
    await waitForText(admin.page, 'MFA was reset.')
    expect((await fx.srv.mgmt.get(`/identities/${id}`)).body.data.isMfaEnabled).toBe(false)
    expect(admin.problems).toEqual([])
    await admin.page.close()
  }, 60_000)

  it('a session that ends brings back the sign-in page, and signing in again returns to the same page', async () => {
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url, '/identities')
    await waitForText(page, 'existing-phone')
    await clickButton(page, 'existing-phone')
    await waitForText(page, 'Identity existing-phone')
    const route = new URL(page.url()).hash
    const token = await page.evaluate(() => (globalThis as any).sessionStorage.getItem('edgeplane.console.session') as string)
    expectStatus(await fx.srv.as(token, 'management').del('/current-api-session'), 200)
    await page.reload()
    await page.waitForSelector(buttonSelector('Sign in'))
    expect(new URL(page.url()).hash).toBe(route)
    await fill(page, 'Username', ADMIN.username)
    await fill(page, 'Password', ADMIN.password)
    await clickButton(page, 'Sign in')
    await waitForText(page, 'Identity existing-phone')
    // the 401 of the ended session is the browser's own console line; nothing else
    expect(problems.filter((p) => !p.includes('401'))).toEqual([])
    await page.close()
  }, 60_000)

  it('the overview shows counts, health checks with the server certificate, and what needs attention', async () => {
    const late = await fx.srv.create('/identities', { name: 'late-tablet', type: 'Device', isAdmin: false, enrollment: { ott: true } })
    const off = await fx.srv.create('/identities', { name: 'switched-off', type: 'Device', isAdmin: false })
    expectStatus(await fx.srv.mgmt.post(`/identities/${off}/disable`, { durationMinutes: 0 }), 200)
    await fx.srv.create('/edge-routers', { name: 'router-never-enrolled', roleAttributes: [] })
    // the ott enrollment (3 h) expires; a new admin session is opened after the jump
    fx.srv.clock.advance(4 * 3600_000)
    const { page, problems } = await newPage(fx.browser)
    await signIn(page, fx.srv.url)
    await waitForText(page, 'server-certificate')
    // a year from the start of the server's clock (the day the run began)
    await waitForText(page, `valid until ${new Date(fx.srv.server.pki.server.view.notAfter).toISOString().slice(0, 10)}`)
    await waitForText(page, 'router-never-enrolled')
    await waitForText(page, 'switched-off')
    await waitForText(page, 'late-tablet (ott, expired')
    const counts = await textOf(page, 'ul.counts')
    const total = (await fx.srv.as(await fx.srv.login(ADMIN.username, ADMIN.password), 'management').get('/identities?limit=1')).body.meta.pagination.totalCount
    expect(counts).toContain(`${total} Identities`)
    expect(counts).toContain('1 Edge routers')
    expect(await page.$(`a[href="#/identities/${late}"]`)).not.toBeNull()
    await screenshot(page, '10-overview')
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})
