// The transports of bench/floor-server.ts (`bun run bench` baselines, `bun run bench transports`): every mode answers
// the same bytes, to two requests on one connection, from a client presenting a certificate, also on the path that
// makes the modes able to read the client's chain read it.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFloor } from '../../../bench/bench-floor.ts'
import { connectMtls } from '../../../bench/bench-pki.ts'
import { FLOOR_MODES } from '../../../bench/floor-server.ts'
import { systemClock } from '../../../src/lib/clock.ts'
import { ensureControllerPki } from '../../../src/pki/pki-bootstrap.ts'
import { issueClientCertificate } from '../../../src/pki/pki-certs.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../../src/pki/pki-keys.ts'

const BODY = JSON.stringify({ data: { version: 'v-floor-test' }, meta: {} })
let dir: string
let client: { cert: string; key: string }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-floor-test-'))
  const pki = await ensureControllerPki(join(dir, 'pki'), { hostname: 'localhost', extraSans: [], clock: systemClock })
  const keys = await generateKeyPair('ec-p256')
  const now = Date.now()
  const cert = await issueClientCertificate({ issuer: pki.signer, publicKey: keys.publicKey, commonName: 'floor-client', notBefore: now - 60_000, notAfter: now + 3_600_000 })
  client = { cert, key: await exportPrivateKeyPem(keys.privateKey) }
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Sends `requests` on one new mTLS connection, the last one closing it; resolves with everything the server sent. */
function exchange(port: number, requests: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = ''
    void connectMtls(port, client, (socket, done) => {
      socket.on('data', (d: Buffer) => (got += d.toString('latin1')))
      socket.on('end', () => {
        done(true)
        resolve(got)
      })
      socket.write(requests.join(''))
    }).then((ok) => ok || reject(new Error(`connection failed after ${JSON.stringify(got)}`)))
  })
}

describe('floor server modes', () => {
  for (const mode of FLOOR_MODES) {
    it(`${mode}: answers every request with the same bytes`, async () => {
      const floor = await startFloor(mode, dir, BODY)
      try {
        const port = Number(new URL(floor.url).port)
        const got = await exchange(port, [
          'GET /version HTTP/1.1\r\nhost: localhost\r\n\r\n',
          'GET /peer HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n',
        ])
        const answers = got.split(/(?=HTTP\/1\.1 )/)
        expect(answers).toHaveLength(2)
        for (const answer of answers) {
          expect(answer.startsWith('HTTP/1.1 200')).toBe(true)
          expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(BODY)
        }
      } finally {
        await floor.stop()
      }
    })
  }
})
