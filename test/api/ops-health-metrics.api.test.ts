// Health checks and Prometheus metrics over HTTPS (issue 12, part G): GET /health-checks without a session in the
// shape of the real controller's health-checks API (200, or 503 naming the failing check), /metrics for admins only on
// the listener and without a session on a separate address, with the request, actor, store, session and login series.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser, passwordLogin } from '../support/auth-policy.ts'

const NOT_EDGE_API = 'the health-checks API and /metrics are not operations of the edge APIs (no edge spec describes them)'
const DAY_MS = 24 * 60 * 60_000

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ metricsListen: { host: '127.0.0.1', port: 0 } })
})
afterAll(() => t.stop())

/** The metrics text as an admin reads it on the listener. */
async function scrape(): Promise<string> {
  const res = await t.raw('GET', '/metrics', { session: await t.login(ADMIN.username, ADMIN.password), offSpec: NOT_EDGE_API })
  expectStatus(res, 200)
  return res.text
}

describe('GET /metrics', () => {
  it('case=refuses anyone but an admin on the listener with 401', async () => {
    expectError(await t.raw('GET', '/metrics', { offSpec: NOT_EDGE_API }), 401, 'UNAUTHORIZED')
    await createPasswordUser(t, 'metrics-reader', 'reader-pass-1')
    const token = (await passwordLogin(t, 'metrics-reader', 'reader-pass-1')).body.data.token
    expectError(await t.raw('GET', '/metrics', { session: token, offSpec: NOT_EDGE_API }), 401, 'UNAUTHORIZED')
  })

  it('case=counts requests per route template, method and status, with latency histograms', async () => {
    const id = await t.create('/identities', { name: 'metrics-target', type: 'User', isAdmin: false })
    expectStatus(await t.mgmt.get(`/identities/${id}`), 200)
    expectError(await t.mgmt.get('/identities/no-such-id'), 404, 'NOT_FOUND')
    const text = await scrape()
    const route = 'method="GET",route="/edge/management/v1/identities/:id"'
    expect(text).toMatch(new RegExp(`^edgeplane_http_requests_total\\{${route},status="200"\\} [1-9]`, 'm'))
    expect(text).toMatch(new RegExp(`^edgeplane_http_requests_total\\{${route},status="404"\\} 1$`, 'm'))
    expect(text).toMatch(new RegExp(`^edgeplane_http_request_duration_seconds_bucket\\{${route},status="404",le="\\+Inf"\\} 1$`, 'm'))
    expect(text).toContain('# TYPE edgeplane_http_request_duration_seconds histogram')
    // the identity's id is not a label: one series per template
    expect(text).not.toContain(id)
  })

  it('case=shows actor mailboxes and handler times, LMDB commits and size, sessions, services, service lists and logins', async () => {
    await passwordLogin(t, ADMIN.username, 'wrong-pass')
    expectStatus(await t.as(await t.login(ADMIN.username, ADMIN.password, 'client'), 'client').get('/services'), 200)
    const text = await scrape()
    for (const actor of ['identity', 'session-registry', 'policy-graph', 'ca']) {
      expect(text).toMatch(new RegExp(`^edgeplane_actor_mailbox_depth\\{actor="${actor}"\\} \\d+$`, 'm'))
    }
    expect(text).toMatch(/^edgeplane_actor_handler_seconds_count\{actor="identity"\} [1-9]/m)
    expect(text).toMatch(/^edgeplane_lmdb_commit_seconds_count [1-9]/m)
    expect(text).toMatch(/^edgeplane_lmdb_size_bytes [1-9]\d*$/m)
    expect(text).toMatch(/^edgeplane_api_sessions [1-9]\d*$/m)
    expect(text).toMatch(/^edgeplane_services 0$/m)
    expect(text).toMatch(/^edgeplane_client_service_list_size_bucket\{le="0"\} 1$/m)
    expect(text).toMatch(/^edgeplane_logins_total\{method="password",outcome="success"\} [1-9]/m)
    expect(text).toMatch(/^edgeplane_logins_total\{method="password",outcome="failure"\} 1$/m)
    expect(text).toMatch(/^edgeplane_auth_window\{kind="size"\} 250$/m)
  })

  it('case=serves the same text without a session on the separate metrics address, and nothing else there', async () => {
    const url = t.server.metricsUrl!
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const res = await fetch(`${url}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(await res.text()).toContain('edgeplane_logins_total')
    expect((await fetch(`${url}/edge/management/v1/identities`)).status).toBe(404)
  })
})

// last: these move the clock past the server certificate's end (every session expires)
describe('GET /health-checks', () => {
  it('case=answers 200 without a session, each check healthy with its time and details', async () => {
    const res = await t.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expectStatus(res, 200)
    expect(res.body.data.healthy).toBe(true)
    expect(res.body.meta).toEqual({})
    expect(res.body.data.checks.map((c: { id: string }) => c.id)).toEqual(['lmdb', 'actors', 'server-certificate'])
    for (const c of res.body.data.checks) {
      expect(c).toMatchObject({ healthy: true, consecutiveFailures: 0, lastCheckTime: new Date(t.clock.now()).toISOString() })
      expect(c.lastCheckDuration).toMatch(/^\d+\.\d{3}ms$/)
      expect(c.failingSince).toBeUndefined()
    }
    expect(res.body.data.checks[0].details).toMatch(/^open at schema version \d+/)
  })

  it('case=warns in the details within 30 days of the server certificate end, still healthy', async () => {
    t.clock.set(t.server.pki.server.view.notAfter - 10 * DAY_MS)
    const res = await t.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expectStatus(res, 200)
    expect(res.body.data.checks[2].details).toMatch(/^warning: expires in 10 days/)
  })

  it('case=answers 503 once the server certificate has expired, naming the check and counting its failures', async () => {
    t.clock.set(t.server.pki.server.view.notAfter + 1)
    const first = await t.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expect(first.status).toBe(503)
    expect(first.body.data.healthy).toBe(false)
    const failing = first.body.data.checks.filter((c: { healthy: boolean }) => !c.healthy)
    expect(failing.map((c: { id: string }) => c.id)).toEqual(['server-certificate'])
    expect(failing[0].details).toMatch(/^expired at /)
    const second = await t.raw('GET', '/health-checks', { offSpec: NOT_EDGE_API })
    expect(second.body.data.checks[2]).toMatchObject({ consecutiveFailures: 2, failingSince: failing[0].failingSince })
  })
})
