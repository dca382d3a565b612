// The health checks' verdicts without a server: a stuck mailbox (its oldest message waiting too long) and a failing
// store make the answer 503 with that check named; the certificate verdict at its edges. Issue 12, part G.
import { describe, expect, it } from 'bun:test'
import { certificateVerdict, createHealthChecks } from '../../../src/http/http-health.ts'

const DAY_MS = 24 * 60 * 60_000
const mailbox = (name: string, waitMs: number) => ({ name, mailboxDepth: () => (waitMs > 0 ? 1 : 0), oldestWaitMs: () => waitMs })

describe('health checks', () => {
  it('case=a mailbox whose oldest message waited past the limit fails the actors check: 503 naming it', async () => {
    let wait = 0
    const answer = createHealthChecks({
      lmdb: () => ({ healthy: true, details: 'ok' }),
      mailboxes: [mailbox('identity', 0), { ...mailbox('graph', 0), oldestWaitMs: () => wait }],
      serverCertificate: () => ({ notBefore: 0, notAfter: 400 * DAY_MS }),
      now: () => DAY_MS,
      stuckAfterMs: 1000,
    })
    expect(answer().status).toBe(200)
    wait = 1500
    const res = answer()
    expect(res.status).toBe(503)
    const body = (await res.json()) as any
    const actors = body.data.checks.find((c: { id: string }) => c.id === 'actors')
    expect(actors).toMatchObject({ healthy: false, consecutiveFailures: 1, details: 'graph: a message has waited 1500 ms' })
    wait = 0
    expect(answer().status).toBe(200)
  })

  it('case=a store check that throws is a failing lmdb check with the error as details', async () => {
    const answer = createHealthChecks({
      lmdb: () => {
        throw new Error('EACCES: permission denied')
      },
      mailboxes: [],
      serverCertificate: () => ({ notBefore: 0, notAfter: 400 * DAY_MS }),
      now: () => DAY_MS,
    })
    const body = (await answer().json()) as any
    expect(body.data.healthy).toBe(false)
    expect(body.data.checks[0]).toMatchObject({ id: 'lmdb', healthy: false, details: 'EACCES: permission denied' })
  })

  it('case=certificate: not yet valid and expired fail; the last 30 days warn', () => {
    const v = { notBefore: 10 * DAY_MS, notAfter: 100 * DAY_MS }
    expect(certificateVerdict(v, 5 * DAY_MS).healthy).toBe(false)
    expect(certificateVerdict(v, 100 * DAY_MS).healthy).toBe(false)
    expect(certificateVerdict(v, 70 * DAY_MS)).toEqual({ healthy: true, details: `valid until ${new Date(100 * DAY_MS).toISOString()}` })
    expect(certificateVerdict(v, 70 * DAY_MS + 1).details).toMatch(/^warning: expires in 29 days/)
  })
})
