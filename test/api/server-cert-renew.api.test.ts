// The server certificate's end (issue 12, part G): a start within 30 days of it logs a warning naming the renewal;
// a start with renewServerCert (edgeplane run --renew-server-cert) issues a new one from the same intermediate, with the
// same key, a new validity from the (fake) clock and the SANs asked for now; clients that trust the CA keep working.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../src/lib/clock.ts'
import { expectStatus, startTestServer } from '../support/harness.ts'

const DAY_MS = 24 * 60 * 60_000
const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-renew-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** The warnings a start logged, by message. */
/** Now on the fake clock as a certificate says it: whole seconds. */
const certNow = (clock: FakeClock) => Math.floor(clock.now() / 1000) * 1000
const warningsOf = (lines: string[]) => lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn').map((l) => l.msg as string)

describe('server certificate expiry and renewal', () => {
  // the PKI is made 350 days ago on the fake clock, so the certificate ends in 15 days of real time: the test's HTTPS
  // client checks validity at the real time, the server at the fake one
  const clock = new FakeClock(Date.now() - 350 * DAY_MS)

  it('case=warns at start within 30 days of the end, and renews from the intermediate without changing the CA', async () => {
    const first = await startTestServer({ dataDir, clock })
    const before = first.server.pki
    await first.stop()

    clock.set(Date.now())
    const lines: string[] = []
    const near = await startTestServer({ dataDir, clock, log: (l) => lines.push(l) })
    expect(warningsOf(lines).filter((w) => w.includes('server certificate'))).toEqual([
      expect.stringMatching(/^warning: the server certificate .*server\.cert\.pem: expires in 1[45] days .*\(edgeplane run --renew-server-cert\)$/),
    ])
    await near.stop()

    const renewedLines: string[] = []
    const renewed = await startTestServer({ dataDir, clock, renewServerCert: true, sans: ['controller.example.test'], log: (l) => renewedLines.push(l) })
    try {
      const after = renewed.server.pki
      expect(after.root.view.fingerprintSha1).toBe(before.root.view.fingerprintSha1)
      expect(after.intermediate.view.fingerprintSha1).toBe(before.intermediate.view.fingerprintSha1)
      expect(after.server.view.fingerprintSha1).not.toBe(before.server.view.fingerprintSha1)
      expect(after.server.view.notAfter).toBe(certNow(clock) + 365 * DAY_MS)
      expect(after.server.view.dnsNames).toContain('controller.example.test')
      expect(warningsOf(renewedLines).filter((w) => w.includes('server certificate'))).toEqual([])
      // a client that trusts the root reaches the renewed listener
      expectStatus(await renewed.mgmt.get('/identities'), 200)
    } finally {
      await renewed.stop()
    }
    // the renewal was written: the next ordinary start serves it
    const again = await startTestServer({ dataDir, clock })
    try {
      expect(again.server.pki.server.view.notAfter).toBe(certNow(clock) + 365 * DAY_MS)
    } finally {
      await again.stop()
    }
  }, 30_000)
})
