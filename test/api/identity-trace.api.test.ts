// Data-flow tracing of identities (edge-api management.yml updateIdentityTracing, traceSpec, traceDetail; seed "Trace
// spec"): a trace starts with the given or a new trace id, runs for its duration (10m when none is given) and ends by
// itself on the clock, or at once with enabled false; an unknown identity is 404 and a bad spec a 400 on its field.
// Also the identity facts kept true: hasApiSession follows the API sessions, hasEdgeRouterConnection stays false
// while no router reports connections.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { createPasswordUser, passwordLogin } from '../support/auth-policy.ts'

let srv: TestServer
let userId: string
beforeAll(async () => {
  srv = await startTestServer()
  userId = (await createPasswordUser(srv, 'traced-user', 'traced-pass-1')).id
})
afterAll(async () => {
  await srv.stop()
})

const trace = (body: unknown, id = userId) => srv.mgmt.put(`/identities/${id}/trace`, body)
const iso = (ms: number) => new Date(ms).toISOString()
const NOT_TRACED = { enabled: false, traceId: '', until: '0001-01-01T00:00:00.000Z' }

describe('PUT /identities/:id/trace', () => {
  it('starts a trace with the given id and duration; it ends by itself when the duration is over', async () => {
    const at = srv.clock.now()
    const res = await trace({ enabled: true, duration: '90s', traceId: 'trace-one', channels: ['edge', 'edge'] })
    expectStatus(res, 200)
    expect(res.body.data).toEqual({ enabled: true, traceId: 'trace-one', until: iso(at + 90_000) })

    srv.clock.advance(89_000)
    // still running: disabling it names the trace it ended and when
    expect((await trace({ enabled: false })).body.data).toEqual({ enabled: false, traceId: 'trace-one', until: iso(at + 89_000) })

    expectStatus(await trace({ enabled: true, duration: '90s', traceId: 'trace-two' }), 200)
    srv.clock.advance(90_000)
    // over by itself: nothing left to end (an empty id and the zero time, which `ziti edge trace identity --disable` reads)
    expect((await trace({ enabled: false })).body.data).toEqual(NOT_TRACED)
  })

  it('runs ten minutes with a new trace id when the spec names neither; a new spec replaces the running trace', async () => {
    const at = srv.clock.now()
    const first = (await trace({ enabled: true })).body.data
    expect(first.until).toBe(iso(at + 10 * 60_000))
    expect(first.traceId).toMatch(/^[0-9a-f-]{36}$/)
    const second = (await trace({ enabled: true, duration: '1h' })).body.data
    expect(second.traceId).not.toBe(first.traceId)
    expect(second.until).toBe(iso(at + 3_600_000))
    srv.clock.advance(20 * 60_000)
    expect((await trace({})).body.data).toEqual({ enabled: false, traceId: second.traceId, until: iso(at + 20 * 60_000) })
  })

  it('ends with its identity', async () => {
    const { id } = await createPasswordUser(srv, 'traced-then-gone', 'traced-pass-1')
    expectStatus(await trace({ enabled: true }, id), 200)
    expectStatus(await srv.mgmt.del(`/identities/${id}`), 200)
    expectError(await trace({ enabled: false }, id), 404, 'NOT_FOUND')
  })

  it('answers 404 for an unknown identity', async () => {
    expectError(await trace({ enabled: true }, 'no-such-identity'), 404, 'NOT_FOUND')
  })

  const badSpecs: [string, unknown, string | undefined][] = [
    ['a duration that is not one', { enabled: true, duration: 'ten minutes' }, 'duration'],
    ['a zero duration', { enabled: true, duration: '0s' }, 'duration'],
    ['a duration over a day', { enabled: true, duration: '25h' }, 'duration'],
    ['a string enabled', { enabled: 'yes' }, undefined],
    ['channels that are not strings', { enabled: true, channels: [1] }, undefined],
    ['a body that is not an object', [], undefined],
  ]
  for (const [what, body, field] of badSpecs) {
    it(`refuses ${what} with 400 COULD_NOT_VALIDATE and starts nothing`, async () => {
      const res = await trace(body)
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      if (field) expect(JSON.stringify(res.body.error)).toContain(field)
      expect((await trace({ enabled: false })).body.data).toEqual(NOT_TRACED)
    })
  }

  it('is admin only', async () => {
    const token = (await passwordLogin(srv, 'traced-user', 'traced-pass-1')).body.data.token
    expectError(await srv.as(token, 'management').put(`/identities/${userId}/trace`, { enabled: true }), 401, 'UNAUTHORIZED')
    expectError(await srv.raw.put(`/edge/management/v1/identities/${userId}/trace`, { enabled: true }), 401, 'UNAUTHORIZED')
  })
})

describe('identity facts', () => {
  it('hasApiSession follows the identity\'s API sessions in the list and the detail; hasEdgeRouterConnection stays false', async () => {
    const { id } = await createPasswordUser(srv, 'facts-user', 'facts-pass-1')
    const facts = async () => {
      const detail = (await srv.mgmt.get(`/identities/${id}`)).body.data
      const row = (await srv.mgmt.get(`/identities?filter=${encodeURIComponent(`id="${id}"`)}`)).body.data[0]
      return { detail: [detail.hasApiSession, detail.hasEdgeRouterConnection], row: [row.hasApiSession, row.hasEdgeRouterConnection] }
    }
    expect(await facts()).toEqual({ detail: [false, false], row: [false, false] })
    const token = (await passwordLogin(srv, 'facts-user', 'facts-pass-1')).body.data.token
    expect(await facts()).toEqual({ detail: [true, false], row: [true, false] })
    expectStatus(await srv.as(token, 'client').del('/current-api-session'), 200)
    expect(await facts()).toEqual({ detail: [false, false], row: [false, false] })
  })
})
