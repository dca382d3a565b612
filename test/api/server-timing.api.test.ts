// The server-timing header (docs/operators/health-metrics-logs.md, "Server timing"): off by default, so that no
// answer, an anonymous login's least of all, hands the client the server's own timing of its work; with the setting
// every answer carries `app;dur=<ms>`.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

const TIMING = /^app;dur=\d+(\.\d+)?$/

let plain: TestServer
let timed: TestServer
beforeAll(async () => {
  ;[plain, timed] = await Promise.all([startTestServer(), startTestServer({ serverTiming: true })])
})
afterAll(async () => {
  await Promise.all([plain.stop(), timed.stop()])
})

/** The answers whose headers are looked at: an anonymous login (right and wrong password), an admin read, a 404. */
async function sample(t: TestServer) {
  const login = await t.client.post('/authenticate?method=password', { username: ADMIN.username, password: ADMIN.password })
  expectStatus(login, 200)
  const wrong = await t.client.post('/authenticate?method=password', { username: ADMIN.username, password: 'not-the-password' })
  expectStatus(wrong, 401)
  const read = await t.mgmt.get('/identities')
  expectStatus(read, 200)
  const missing = await t.mgmt.get('/identities/nope')
  expectStatus(missing, 404)
  return { login, wrong, read, missing }
}

describe('server-timing', () => {
  it('case=off by default: no answer carries it, an anonymous login included', async () => {
    for (const [what, res] of Object.entries(await sample(plain))) {
      expect({ what, timing: res.headers.get('server-timing') }).toEqual({ what, timing: null })
      expect(res.headers.get('server')).toBe('edgeplane/0.1.0')
    }
  })

  it('case=with the setting every answer carries the time spent in the app', async () => {
    for (const [what, res] of Object.entries(await sample(timed))) {
      expect({ what, timing: res.headers.get('server-timing') }).toEqual({ what, timing: expect.stringMatching(TIMING) })
      expect(res.headers.get('ziti-instance-id')).toBeTruthy()
    }
    const version = await timed.raw.get('/version')
    expect(version.headers.get('server-timing')).toMatch(TIMING)
  })
})
