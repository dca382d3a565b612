// The console's Access page in a real browser (why an identity can or cannot reach a service, drawn as a chain with the
// missing link named; the what-if panel on a role-attribute change), the console's script budget and caching, the
// setting that turns it off, keyboard-only use, and 200 % zoom.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import { CONSOLE } from '../../src/console/console-assets.ts'
import { killChildren, startChild } from '../support/child-controller.ts'
import { ADMIN, startTestServer, type TestServer } from '../support/harness.ts'
import { chromiumPath, clickButton, fill, launchBrowser, newPage, screenshot, waitForText } from '../support/browser.ts'

let srv: TestServer
let browser: Browser
const ids: Record<string, string> = {}

beforeAll(async () => {
  srv = await startTestServer()
  ids.alice = await srv.create('/identities', { name: 'alice', type: 'User', isAdmin: false, roleAttributes: ['staff'] })
  ids.bob = await srv.create('/identities', { name: 'bob', type: 'User', isAdmin: false, roleAttributes: ['contractors'] })
  ids.payroll = await srv.create('/services', { name: 'payroll', encryptionRequired: true, roleAttributes: ['hr'] })
  ids.payrollDial = await srv.create('/service-policies', {
    name: 'payroll-dial', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#staff'], serviceRoles: ['#hr'],
  })
  ids.er1 = await srv.create('/edge-routers', { name: 'er-eu-1', roleAttributes: ['eu'] })
  ids.serp = await srv.create('/service-edge-router-policies', { name: 'all-services-eu', semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: ['#eu'] })
  ids.erp = await srv.create('/edge-router-policies', { name: 'staff-eu', semantic: 'AnyOf', identityRoles: ['#staff'], edgeRouterRoles: ['#eu'] })
  if (chromiumPath()) browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  killChildren()
  await browser?.close()
  await srv?.stop()
})

const fetchTls = (url: string) => fetch(url, { tls: { ca: srv.caPem } } as RequestInit)

async function signIn(page: Page): Promise<void> {
  await page.goto(`${srv.url}/console/`)
  await fill(page, 'Username', ADMIN.username)
  await fill(page, 'Password', ADMIN.password)
  await clickButton(page, 'Sign in')
  await waitForText(page, 'Overview')
}

/** Types `name` into the picker labelled `label`, waits for the matches to be only those, and chooses `name`. */
async function pick(page: Page, label: string, name: string): Promise<void> {
  await fill(page, label, name)
  await page.waitForFunction(
    (l: string, n: string) => {
      const list = (globalThis as any).document.querySelector(`ul[aria-label="${l}: matches"]`)
      const names = list ? [...list.querySelectorAll('button')].map((b: any) => b.textContent.trim()) : []
      return names.length > 0 && names.every((x: string) => x.includes(n))
    },
    {},
    label,
    name,
  )
  const b = await page.waitForSelector(`xpath/.//ul[@aria-label='${label}: matches']//button[normalize-space()='${name}']`)
  await b!.click()
}

/** The text of the access chain of `label` (the ordered list's items, in order). */
const chainText = (page: Page, label: string) =>
  page.$$eval(`ol[aria-label="${label}"] > li`, (lis) => lis.map((li) => `${li.getAttribute('aria-label') ?? ''}: ${(li as any).innerText.replace(/\s+/g, ' ').trim()}`))

describe.skipIf(!chromiumPath())('the console: access', () => {
  it('says why a second identity cannot reach a service, naming the missing policy, and draws the chain of one that can', async () => {
    const { page, problems } = await newPage(browser)
    await signIn(page)
    await clickButton(page, 'Access')
    await waitForText(page, 'Why can an identity reach')
    await pick(page, 'Identity', 'bob')
    await pick(page, 'Service', 'payroll')
    await waitForText(page, 'no Dial service policy names identity bob and service payroll')
    const chain = await chainText(page, 'Dial access chain')
    expect(chain[0]).toBe('identity: identity bob')
    expect(chain.filter((c) => c !== ':  →' && c !== ': →')).toContain('missing Dial service policy: Dial service policy no Dial service policy names identity bob and service payroll')
    // the API's smallest fix is shown: the attribute the policy lists
    await waitForText(page, 'give identity bob role attribute #staff (selected by payroll-dial)')
    // links go to each element's page
    expect(await page.$eval('ol[aria-label="Dial access chain"] a', (a) => a.getAttribute('href'))).toBe(`#/identities/${ids.bob}`)
    await screenshot(page, '40-access-missing-policy')

    await pick(page, 'Identity', 'alice')
    await waitForText(page, 'Dial: alice can dial payroll')
    const ok = await chainText(page, 'Dial access chain')
    expect(ok.filter((c) => !c.includes('→'))).toEqual([
      'identity: identity alice',
      'Dial service policy: Dial service policy payroll-dial (by attributes)',
      'service: service payroll',
      'edge router: edge router er-eu-1',
    ])
    await screenshot(page, '41-access-chain')

    // an edge router: the chain identity → edge router policy → edge router
    await page.click('xpath/.//label[contains(., "an edge router")]/input')
    await pick(page, 'Edge router', 'er-eu-1')
    await waitForText(page, 'alice can use edge router er-eu-1')
    expect(await chainText(page, 'edge router access chain')).toContain('edge router policy: edge router policy staff-eu (by attributes)')
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  it('previews a role-attribute change (the identity it would add), then saves it and the answer changes', async () => {
    const { page, problems } = await newPage(browser)
    await signIn(page)
    await page.goto(`${srv.url}/console/#/access?identity=${ids.bob}&service=${ids.payroll}`)
    await waitForText(page, 'no Dial service policy names identity bob and service payroll')
    await waitForText(page, 'Now: contractors')
    await fill(page, 'Role attributes', 'contractors, staff')
    await waitForText(page, 'Would gain access')
    const gains = await page.$$eval('ul[aria-label="Would gain access"] > li', (lis) => lis.map((li) => (li as any).innerText.trim()))
    expect(gains).toEqual(['bob could Dial payroll'])
    await waitForText(page, '1 identity and 1 service concerned: Dial +1 −0')
    await screenshot(page, '42-access-what-if')
    // a change the controller would refuse is shown as the API words it
    await fill(page, 'Role attributes', 'contractors, #staff')
    await page.waitForSelector('section.whatif p.error')
    const refusal = await page.$eval('section.whatif p.error', (p) => (p as any).innerText)
    expect(refusal).toContain('COULD_NOT_VALIDATE')
    await fill(page, 'Role attributes', 'contractors, staff')
    await waitForText(page, 'Would gain access')
    await clickButton(page, 'Save role attributes')
    await waitForText(page, 'Dial: bob can dial payroll')
    const saved = await srv.mgmt.get(`/identities/${ids.bob}`)
    expect(saved.body.data.roleAttributes).toEqual(['contractors', 'staff'])
    // the one error the browser logs is the refused preview's 400, asked on purpose above
    expect(problems).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)'])
    await page.close()
  }, 60_000)

  it('is reached with the keyboard alone, and at 200 % zoom no page scrolls sideways', async () => {
    const { page, problems } = await newPage(browser)
    await page.goto(`${srv.url}/console/`)
    await page.waitForSelector('input[name="username"]')
    const active = () => page.evaluate(() => {
      const a = (globalThis as any).document.activeElement
      return `${a?.tagName ?? ''}:${a?.getAttribute('name') ?? ''}:${(a?.textContent ?? '').trim()}`
    })
    await page.keyboard.press('Tab')
    expect(await active()).toBe('INPUT:username:')
    await page.keyboard.type(ADMIN.username)
    await page.keyboard.press('Tab')
    expect(await active()).toBe('INPUT:password:')
    await page.keyboard.type(ADMIN.password)
    await page.keyboard.press('Enter')
    await waitForText(page, 'Overview')
    let reached = false
    // from the overview's title the Tab order runs through its links (counts, what needs attention), then round to the
    // skip link and the navigation: as many presses as that takes
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = (await active()) === 'A::Access'
    }
    expect(reached).toBe(true)
    await page.keyboard.press('Enter')
    await waitForText(page, 'Why can an identity reach')
    expect(await page.evaluate(() => (globalThis as any).location.hash)).toBe('#/access')
    // the page's title has the focus, so the next Tab goes into the page
    await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'page-title')
    expect(await active()).toBe('H1::Access')

    // 200 % zoom of a 1280 px wide window: 640 CSS pixels
    await page.setViewport({ width: 640, height: 800, deviceScaleFactor: 2 })
    await pick(page, 'Identity', 'alice')
    await pick(page, 'Service', 'payroll')
    await waitForText(page, 'Dial: alice can dial payroll')
    await waitForText(page, 'Now: staff')
    await fill(page, 'Role attributes', 'staff, a-rather-long-attribute-name-that-must-wrap-somewhere-at-two-hundred-percent')
    await waitForText(page, 'Nobody would gain or lose access')
    await screenshot(page, '43-access-zoom-200')
    const routes = await page.$$eval('nav a[href^="#/"]', (as) => as.map((a) => a.getAttribute('href')!))
    expect(routes).toContain('#/access')
    for (const r of routes) {
      if (r !== '#/access') {
        await page.goto(`${srv.url}/console/${r}`)
        await page.waitForSelector('#page-title')
      }
      const wide = await page.evaluate(() => {
        const d = (globalThis as any).document.documentElement
        return { scroll: d.scrollWidth, client: d.clientWidth }
      })
      expect({ route: r, ...wide }).toEqual({ route: r, scroll: wide.client, client: wide.client })
    }
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})

describe('the console: files', () => {
  it('has under 200 KiB of script, no inline script, hashed assets cached for good and the page never', async () => {
    expect(CONSOLE.scriptBytes).toBeLessThan(200 * 1024)
    const res = await fetchTls(`${srv.url}/console/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const html = await res.text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="[^"]+"/)
      expect(body!.trim()).toBe('')
    }
    expect(html).not.toMatch(/<style\b/)
    expect(html).not.toMatch(/\son[a-z]+=/i)
    const refs = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(2)
    let served = 0
    for (const ref of refs) {
      expect(ref).toMatch(/[-.][0-9a-z]{8,}\.(js|css)$/)
      const a = await fetchTls(new URL(ref, `${srv.url}/console/`).href)
      expect(a.status).toBe(200)
      expect(a.headers.get('cache-control')).toContain('immutable')
      if (ref.endsWith('.js')) served += (await a.arrayBuffer()).byteLength
    }
    expect(served).toBeLessThanOrEqual(CONSOLE.scriptBytes)
  })

  it('is a plain 404 when turned off', async () => {
    const off = await startTestServer({ console: false })
    try {
      for (const path of ['/console/', '/console', '/console/index.html']) {
        const res = await fetch(`${off.url}${path}`, { tls: { ca: off.caPem }, redirect: 'manual' } as RequestInit)
        expect({ path, status: res.status }).toEqual({ path, status: 404 })
        expect(res.headers.get('content-type') ?? '').not.toContain('text/html')
      }
      // the API is still there
      expect((await off.mgmt.get('/version')).status).toBe(200)
    } finally {
      await off.stop()
    }
  }, 30_000)

  it('is off in a controller started with --no-console, or with console.enabled false in its config file, and on otherwise', async () => {
    const base = mkdtempSync(join(tmpdir(), 'edgeplane-console-off-'))
    try {
      const status = async (url: string, path: string) => (await fetch(`${url}${path}`, { tls: { rejectUnauthorized: false } } as RequestInit)).status
      const off = await startChild(join(base, 'off'), 'console-off-pass-1', { args: ['--no-console'] })
      expect(await status(off.url, '/console/')).toBe(404)
      off.proc.kill()
      await off.proc.exited
      const on = await startChild(join(base, 'on'), 'console-on-pass-1', { config: { console: { enabled: true } } })
      expect(await status(on.url, '/console/')).toBe(200)
      on.proc.kill()
      await on.proc.exited
      const offByFile = await startChild(join(base, 'file'), 'console-file-pass-1', { config: { console: { enabled: false } } })
      expect(await status(offByFile.url, '/console/')).toBe(404)
      offByFile.proc.kill()
      await offByFile.proc.exited
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  }, 60_000)
})
