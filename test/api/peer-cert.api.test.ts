// The client-certificate seam: the listener requests (not requires) a client certificate over real TLS and hands the
// presented chain to handlers beside the Request, never in a header (STYLE.md "Reading the client certificate on Bun").
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'
import { systemClock } from '../../src/lib/clock.ts'
import { ensureControllerPki, type ControllerPki } from '../../src/pki/pki-bootstrap.ts'
import { readCertificateDer, toCertificateView } from '../../src/pki/pki-certs.ts'
import { startListener, type Listener } from '../../src/http/http-listener.ts'
import { fetchTls, makeClientCert, makeForeignClientCert } from '../support/pki.ts'

let dir: string
let pki: ControllerPki
let listener: Listener
let url: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-peer-'))
  pki = await ensureControllerPki(dir, { hostname: 'localhost', extraSans: [], clock: systemClock })
  listener = await startListener({
    host: '127.0.0.1',
    port: 0,
    tls: pki.tls,
    maxBodyBytes: 1024,
    log: () => {},
    handle: async (call) => {
      const peer = call.peer
      const views = peer.certChainDer.map((der) => toCertificateView(readCertificateDer(der)))
      const response = Response.json({
        forwardedHeader: call.headers.get('x-client-cert'),
        subjects: views.map((v) => v.subjectCn),
        fingerprints: views.map((v) => v.fingerprintSha1),
        remoteAddress: peer.remoteAddress,
        body: call.method === 'POST' && call.body ? new TextDecoder().decode(call.body) : null,
      })
      return { response, headers: [] }
    },
  })
  url = `https://127.0.0.1:${listener.port}`
})
afterAll(async () => {
  await listener.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('client certificates on the listener', () => {
  it('gives the handler the certificate a client presented', async () => {
    const client = await makeClientCert({ issuer: pki.signer, commonName: 'cert-client' })
    const res = await fetch(`${url}/x`, { tls: fetchTls(pki.root.certPem, client) } as RequestInit)
    const body = (await res.json()) as any
    expect(body.subjects[0]).toBe('cert-client')
    expect(body.fingerprints[0]).toBe(client.view.fingerprintSha1)
    expect(body.remoteAddress).toBe('127.0.0.1')
  })

  it('accepts a certificate from a foreign CA (the chain check is the handler\'s job)', async () => {
    const client = await makeForeignClientCert({ commonName: 'foreign-client' })
    const res = await fetch(`${url}/x`, { tls: fetchTls(pki.root.certPem, client) } as RequestInit)
    expect(((await res.json()) as any).subjects[0]).toBe('foreign-client')
  })

  it('serves clients without a certificate, with an empty chain', async () => {
    const res = await fetch(`${url}/x`, { tls: fetchTls(pki.root.certPem) } as RequestInit)
    expect(((await res.json()) as any).subjects).toEqual([])
  })

  it('does not take a certificate from a forged header', async () => {
    const res = await fetch(`${url}/x`, { headers: { 'x-client-cert': 'forged' }, tls: fetchTls(pki.root.certPem) } as RequestInit)
    const body = (await res.json()) as any
    expect(body.subjects).toEqual([])
    expect(body.forwardedHeader).toBe('forged')
  })

  it('keeps the connection alive across requests with the same certificate', async () => {
    const client = await makeClientCert({ issuer: pki.signer, commonName: 'keepalive' })
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/x${i}`, { tls: fetchTls(pki.root.certPem, client), keepalive: true } as RequestInit)
      expect(((await res.json()) as any).subjects[0]).toBe('keepalive')
    }
  })

  it('gives the handler the certificate on a new connection that resumes an earlier TLS session', async () => {
    const client = await makeClientCert({ issuer: pki.signer, commonName: 'resuming' })
    const tlsOptions = { host: '127.0.0.1', port: listener.port, servername: 'localhost', ca: pki.root.certPem, cert: client.certPem, key: client.keyPem }
    // one answer on a new connection (closed after it), with the session tickets the server sent meanwhile
    const exchange = (session?: Buffer) =>
      new Promise<{ subjects: string[]; reused: boolean; session?: Buffer }>((resolve, reject) => {
        let text = ''
        let ticket: Buffer | undefined
        let reused = false
        const socket = tls.connect({ ...tlsOptions, session }, () => {
          // read while the connection is up: a closed socket no longer knows
          reused = socket.isSessionReused()
          socket.write('GET /x HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n')
        })
        socket.on('session', (s: Buffer) => (ticket = s))
        socket.on('data', (d: Buffer) => (text += d.toString('utf8')))
        socket.on('error', reject)
        socket.on('close', () => {
          const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { subjects: string[] }
          resolve({ subjects: body.subjects, reused, session: ticket })
        })
      })
    const first = await exchange()
    expect(first).toMatchObject({ subjects: ['resuming'], reused: false })
    expect(first.session).toBeDefined()
    const resumed = await exchange(first.session)
    expect(resumed).toMatchObject({ subjects: ['resuming'], reused: true })
  })

  it('refuses a body over the limit with 413 before the handler runs', async () => {
    const res = await fetch(`${url}/x`, { method: 'POST', body: 'x'.repeat(2048), tls: fetchTls(pki.root.certPem) } as RequestInit)
    expect(res.status).toBe(413)
  })
})
