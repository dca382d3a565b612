// The console's services, configs and policies pages in a real browser against a real controller over HTTPS: a
// service, a config whose data is checked against its config type's schema (the error shown at the field, then fixed),
// a Dial service policy and a service edge router policy made through the forms and read back over the API.
import { describe, expect, it } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { makeClientCert, makeTestCa } from '../support/pki.ts'
import { buttonSelector, chromiumPath, clickButton, consoleFixture, fieldSelector, fill, newPage, screenshot, signIn, waitForText } from '../support/browser.ts'

const fx = consoleFixture()

const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['hostname', 'port'],
  additionalProperties: false,
  properties: {
    hostname: { type: 'string', minLength: 1, description: 'where the database listens' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    protocol: { enum: ['tcp', 'udp'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
}

/** Signs in as the admin and waits for the overview. */
async function signInAdmin(page: Page): Promise<void> {
  await signIn(page, fx.srv.url)
  await waitForText(page, 'Overview')
}

/** Opens a page from the navigation. */
async function open(page: Page, nav: string): Promise<void> {
  const link = await page.waitForSelector(`xpath/.//nav[@aria-label='console']//a[normalize-space()='${nav}']`)
  await link!.click()
  await page.waitForSelector(`xpath/.//h1[normalize-space()='${nav}']`)
}

/** The text of the field error shown inside the field labelled `label`. */
async function errorAt(page: Page, label: string): Promise<string> {
  const h = await page.waitForSelector(`xpath/.//label[normalize-space(span)='${label}']//small[contains(@class,'field-error')]`)
  return (await h!.evaluate((n) => n.textContent)) ?? ''
}

/** Puts `text` into the field labelled `label` at once (a PEM is long to type), as an input event. */
async function pasteInto(page: Page, label: string, text: string): Promise<void> {
  const h = await page.waitForSelector(fieldSelector(label))
  await h!.evaluate((n: any, t: string) => {
    n.value = t
    n.dispatchEvent(new (n.ownerDocument.defaultView.Event)('input', { bubbles: true }))
  }, text)
}

/** Chooses the config type once the list of types has loaded. */
async function chooseType(page: Page, typeId: string): Promise<void> {
  await page.waitForSelector(`xpath/.//option[@value='${typeId}']`)
  await (await page.waitForSelector(fieldSelector('Config type')))!.select(typeId)
}

async function one(path: string, name: string): Promise<any> {
  const res = await fx.srv.mgmt.get(`${path}?filter=${encodeURIComponent(`name = "${name}"`)}`)
  expect(res.status).toBe(200)
  expect(res.body.data.length).toBe(1)
  return res.body.data[0]
}

describe.skipIf(!chromiumPath())('the console: services, configs and policies', () => {
  it('creates a service, a schema-checked config, a Dial policy and a service edge router policy through the forms', async () => {
    const typeId = await fx.srv.create('/config-types', { name: 'db-endpoint.v1', schema: SCHEMA })
    await fx.srv.create('/identities', { name: 'alice-laptop', type: 'Device', isAdmin: false, roleAttributes: ['sales'] })
    await fx.srv.create('/edge-routers', { name: 'er-public', roleAttributes: ['public'] })
    const { page, problems } = await newPage(fx.browser)
    await signInAdmin(page)

    // a service
    await open(page, 'Services')
    await clickButton(page, 'New service')
    // the form's title takes the focus, so the next Tab goes into the form
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.textContent === 'New service')
    await fill(page, 'Name', 'db-service')
    await fill(page, 'Role attributes', 'databases, internal')
    await screenshot(page, '30-service-form')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-service']`)
    const svc = await one('/services', 'db-service')
    expect(svc.roleAttributes.sort()).toEqual(['databases', 'internal'])
    expect(svc.encryptionRequired).toBe(true)

    // a config: the schema's error at the field first (nothing sent), then fixed
    await open(page, 'Configs')
    await clickButton(page, 'New config')
    await fill(page, 'Name', 'db-config')
    await chooseType(page, typeId)
    await fill(page, 'hostname', 'db.internal')
    await fill(page, 'port', '99999')
    await fill(page, 'tags', 'prod, eu')
    await clickButton(page, 'Save')
    expect(await errorAt(page, 'port')).toContain('65535')
    await screenshot(page, '31-config-schema-error')
    // at 200 % zoom (640 CSS pixels of a 1280 px window) the form wraps and nothing scrolls sideways
    await page.setViewport({ width: 640, height: 800, deviceScaleFactor: 2 })
    await screenshot(page, '47-config-schema-error-zoom-200')
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(640)
    await page.setViewport({ width: 1280, height: 860 })
    expect((await fx.srv.mgmt.get('/configs')).body.data.length).toBe(0)
    await fill(page, 'port', '5432')
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('.field-error'))
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-config']`)
    await screenshot(page, '32-configs-list')
    const cfg = await one('/configs', 'db-config')
    expect(cfg.data).toEqual({ hostname: 'db.internal', port: 5432, tags: ['prod', 'eu'] })

    // editing the config: its data comes back into the fields, and a change is saved with PUT
    await clickButton(page, 'db-config')
    await page.waitForSelector(`xpath/.//h1[normalize-space()='Edit config db-config']`)
    await fill(page, 'port', '5433')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-config']`)
    expect((await one('/configs', 'db-config')).data).toEqual({ hostname: 'db.internal', port: 5433, tags: ['prod', 'eu'] })

    // the API's own refusal at the field: a second config of the same name (the browser logs the 400 as an error)
    expect(problems).toEqual([])
    await clickButton(page, 'New config')
    await fill(page, 'Name', 'db-config')
    await chooseType(page, typeId)
    await fill(page, 'hostname', 'other')
    await fill(page, 'port', '1')
    await clickButton(page, 'Save')
    expect(await errorAt(page, 'Name')).not.toBe('')
    expect(problems.splice(0)).toEqual([expect.stringContaining('status of 400')])
    await clickButton(page, 'Cancel')

    // the config attached on the service's form
    await open(page, 'Services')
    await clickButton(page, 'db-service')
    await page.waitForSelector(`xpath/.//h1[normalize-space()='Edit service db-service']`)
    expect(page.url()).toEndWith(`#/services/${svc.id}`)
    const box = await page.waitForSelector(`xpath/.//fieldset[legend='Configs']//label[contains(normalize-space(),'db-config')]/input`)
    await box!.click()
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-service']`)
    await screenshot(page, '33-services-list')
    expect((await one('/services', 'db-service')).configs).toEqual([cfg.id])

    // a Dial service policy: #sales from the attributes in use, the service by @name
    await open(page, 'Service policies')
    await clickButton(page, 'New service policy')
    await fill(page, 'Name', 'dial-db')
    await clickButton(page, '#sales')
    await fill(page, 'Service roles', '@db-ser')
    await clickButton(page, '@db-service')
    await page.waitForSelector(`xpath/.//ul[contains(@class,'chips')]//span[normalize-space()='@db-service']`)
    // the what-if panel: the policy would let alice-laptop (#sales) dial the service, before it is saved
    await waitForText(page, 'alice-laptop could Dial db-service')
    expect((await fx.srv.mgmt.get('/service-policies')).body.data).toEqual([])
    await screenshot(page, '34-service-policy-form')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='dial-db']`)
    await page.waitForSelector(`xpath/.//table//td[normalize-space()='@db-service']`)
    await screenshot(page, '35-service-policies-list')
    // the policy's form brings its roles back, @id shown by name
    await clickButton(page, 'dial-db')
    await page.waitForSelector(`xpath/.//ul[contains(@class,'chips')]//span[normalize-space()='@db-service']`)
    await page.waitForSelector(`xpath/.//ul[contains(@class,'chips')]//span[normalize-space()='#sales']`)
    await clickButton(page, 'Cancel')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='dial-db']`)
    const sp = await one('/service-policies', 'dial-db')
    expect(sp.type).toBe('Dial')
    expect(sp.semantic).toBe('AnyOf')
    expect(sp.identityRoles).toEqual(['#sales'])
    expect(sp.serviceRoles).toEqual([`@${svc.id}`])
    const access = await fx.srv.mgmt.get(`/services/${svc.id}/identities`)
    expect(access.body.data.map((i: any) => i.name)).toEqual(['alice-laptop'])

    // a service edge router policy (a router policy), roles typed
    await open(page, 'Service edge router policies')
    await clickButton(page, 'New service edge router policy')
    await fill(page, 'Name', 'db-routers')
    await fill(page, 'Service roles', '#databases')
    await page.keyboard.press('Enter')
    await fill(page, 'Edge router roles', '#public')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-routers']`)
    const serp = await one('/service-edge-router-policies', 'db-routers')
    expect(serp.serviceRoles).toEqual(['#databases'])
    expect(serp.edgeRouterRoles).toEqual(['#public'])
    expect(serp.semantic).toBe('AnyOf')

    // delete asks first, naming the policy
    await clickButton(page, 'Delete')
    await waitForText(page, 'Delete service edge router policy db-routers?')
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.textContent === 'Delete db-routers')
    await screenshot(page, '36-delete-confirmation')
    await clickButton(page, 'Delete db-routers')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='db-routers']`, { hidden: true })
    expect((await fx.srv.mgmt.get('/service-edge-router-policies')).body.data.map((p: any) => p.name)).not.toContain('db-routers')

    expect(problems).toEqual([])
    await page.close()
  }, 120_000)

  it('shows a new edge router\'s enrollment JWT and re-enrolls it, makes posture checks and auth policies, and verifies a CA', async () => {
    const { page, problems } = await newPage(fx.browser)
    await signInAdmin(page)

    // an edge router: its enrollment JWT on the page is the one the API holds; re-enroll makes a new one
    await open(page, 'Edge routers')
    await clickButton(page, 'New edge router')
    await fill(page, 'Name', 'er-branch')
    await fill(page, 'Role attributes', 'branch')
    await screenshot(page, '37-edge-router-form')
    await clickButton(page, 'Create and show the enrollment JWT')
    const pre = await page.waitForSelector('pre.jwt')
    const shown = ((await pre!.evaluate((n) => n.textContent)) ?? '').trim()
    await screenshot(page, '38-edge-router-enrollment-jwt')
    const er = await one('/edge-routers', 'er-branch')
    const detail = (await fx.srv.mgmt.get(`/edge-routers/${er.id}`)).body.data
    expect(shown).toBe(detail.enrollmentJwt)
    expect(detail.roleAttributes).toEqual(['branch'])
    await clickButton(page, 'Done')
    await clickButton(page, 'er-branch')
    await clickButton(page, 'Re-enroll')
    await clickButton(page, 'Re-enroll now')
    await page.waitForFunction((old: string) => {
      const n = (globalThis as any).document.querySelector('pre.jwt')
      return n && n.textContent.trim() !== old
    }, {}, shown)
    const again = (await fx.srv.mgmt.get(`/edge-routers/${er.id}`)).body.data.enrollmentJwt
    expect(again).not.toBe(shown)
    expect(((await (await page.$('pre.jwt'))!.evaluate((n) => n.textContent)) ?? '').trim()).toBe(again)
    await clickButton(page, 'Cancel')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='er-branch']`)
    await screenshot(page, '39-edge-routers-list')

    // a posture check (MFA) and an authentication policy
    await open(page, 'Posture checks')
    await clickButton(page, 'New posture check')
    await fill(page, 'Name', 'mfa-5min')
    await fill(page, 'Role attributes', 'mfa')
    await fill(page, 'Timeout (seconds)', '300')
    await screenshot(page, '48-posture-check-form')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='mfa-5min']`)
    const pc = await one('/posture-checks', 'mfa-5min')
    expect(pc.typeId).toBe('MFA')
    expect(pc.timeoutSeconds).toBe(300)
    expect(pc.roleAttributes).toEqual(['mfa'])

    await open(page, 'Authentication policies')
    await clickButton(page, 'New authentication policy')
    await fill(page, 'Name', 'strict')
    await fill(page, 'Minimum password length', '12')
    await (await page.waitForSelector(`xpath/.//label[contains(normalize-space(),'Require TOTP')]/input`))!.click()
    await screenshot(page, '44-auth-policy-form')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='strict']`)
    const ap = await one('/auth-policies', 'strict')
    expect(ap.primary.updb.minPasswordLength).toBe(12)
    expect(ap.secondary.requireTotp).toBe(true)

    // a CA: the verification token and the openssl commands, a wrong certificate refused at the field, the right one verifies
    const ca = await makeTestCa({ commonName: 'branch CA', clock: fx.srv.clock })
    await open(page, 'Certificate authorities')
    await clickButton(page, 'New CA')
    await fill(page, 'Name', 'branch-ca')
    await pasteInto(page, 'Certificate (PEM)', ca.certPem)
    await clickButton(page, 'Create')
    await waitForText(page, 'openssl req -new')
    const created = await one('/cas', 'branch-ca')
    const token = (await fx.srv.mgmt.get(`/cas/${created.id}`)).body.data.verificationToken
    expect(token).toBeTruthy()
    await waitForText(page, token)
    const wrong = await makeClientCert({ issuer: ca.signer, commonName: 'not the token', clock: fx.srv.clock })
    await pasteInto(page, 'Verification certificate (PEM)', wrong.certPem)
    await clickButton(page, 'Verify')
    expect(await errorAt(page, 'Verification certificate (PEM)')).toContain('refused by the controller')
    expect(problems.splice(0)).toEqual([expect.stringContaining('status of 400')])
    await screenshot(page, '45-ca-verification')
    const proof = await makeClientCert({ issuer: ca.signer, commonName: token, clock: fx.srv.clock })
    await pasteInto(page, 'Verification certificate (PEM)', proof.certPem)
    await clickButton(page, 'Verify')
    await waitForText(page, 'branch-ca is verified')
    expect((await fx.srv.mgmt.get(`/cas/${created.id}`)).body.data.isVerified).toBe(true)

    // an edge router policy: identities by attribute, the router by @name
    await open(page, 'Edge router policies')
    await clickButton(page, 'New edge router policy')
    await fill(page, 'Name', 'branch-staff')
    await fill(page, 'Identity roles', '#staff')
    await page.keyboard.press('Enter')
    await fill(page, 'Edge router roles', '@er-bra')
    await clickButton(page, '@er-branch')
    await page.waitForSelector(`xpath/.//ul[contains(@class,'chips')]//span[normalize-space()='@er-branch']`)
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='branch-staff']`)
    const erp = await one('/edge-router-policies', 'branch-staff')
    expect(erp.identityRoles).toEqual(['#staff'])
    expect(erp.edgeRouterRoles).toEqual([`@${er.id}`])
    // the router is shown by its name, as it was picked
    await page.waitForSelector(`xpath/.//table//td[normalize-space()='@er-branch']`)
    await screenshot(page, '49-edge-router-policies-list')

    // external JWT signers: the list and the form
    await open(page, 'External JWT signers')
    await clickButton(page, 'New external JWT signer')
    await fill(page, 'Name', 'corp-idp')
    await fill(page, 'Issuer', 'https://idp.example.com')
    await fill(page, 'Audience', 'edgeplane')
    // plain http to a host that is not loopback: the API refuses it, and the refusal is shown at the field
    await fill(page, 'JWKS endpoint', 'http://idp.example.com/keys')
    await clickButton(page, 'Save')
    expect(await errorAt(page, 'JWKS endpoint')).not.toBe('')
    expect(problems.splice(0)).toEqual([expect.stringContaining('status of 400')])
    await fill(page, 'JWKS endpoint', 'https://idp.example.com/keys')
    await clickButton(page, 'Save')
    await page.waitForSelector(`xpath/.//table//a[normalize-space()='corp-idp']`)
    const signer = await one('/external-jwt-signers', 'corp-idp')
    expect(signer.issuer).toBe('https://idp.example.com')
    expect(signer.jwksEndpoint).toBe('https://idp.example.com/keys')
    await screenshot(page, '46-external-jwt-signers-list')

    expect(problems).toEqual([])
    await page.close()
  }, 120_000)
})
