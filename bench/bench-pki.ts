/**
 * The PKI figures of `bun run bench`, each read as a ratio to a baseline measured in the same run:
 * - ott enrollments/s with 50 concurrent clients (POST /enroll/ott: CSR check, issuance by the CA actor, the durable
 *   redeem) against raw certificate issuance/s in this process (the same CSR parse and signature check, and a client
 *   certificate signed with the controller's own intermediate key, 50 at once). Target >= 0.7.
 * - certificate logins/s, each over a NEW TLS connection presenting the client certificate, against raw mTLS
 *   handshakes/s (connect with the same certificate, then close) on the same listener. Target >= 0.6.
 * Each figure also prints the CPU per operation of the process doing the work (the controller, read from /proc; this
 * process for raw issuance); the certificate login ratio is also computed from CPU (handshake CPU / login CPU), which
 * holds steadier than the throughput ratio on a shared machine.
 * Identities, tokens, keys and CSRs are made before the timed parts.
 */
import tls from 'node:tls'
import { join } from 'node:path'
import { systemClock } from '../src/lib/clock.ts'
import { ensureControllerPki } from '../src/pki/pki-bootstrap.ts'
import { issueClientCertificate } from '../src/pki/pki-certs.ts'
import { parseCsrPem } from '../src/pki/pki-csr.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../src/pki/pki-keys.ts'
import { makeCsrPem } from '../test/support/pki.ts'
import { formatCpuPerOp, withCpuOf } from './bench-cpu.ts'
import { printFigure, runLoad } from './bench-load.ts'

const CONCURRENT_ENROLLMENTS = 50
export const CONCURRENT_LOGINS = 8
/** At most this many identities are prepared for the enrollment figure. */
const MAX_ENROLLMENTS = 6_000

export interface PkiBenchTarget {
  url: string
  /** The controller's process, whose CPU is read around each figure. */
  pid: number
  dataDir: string
  adminToken: string
  durationMs: number
}

const tlsOff = { rejectUnauthorized: false }
async function call(url: string, method: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { 'zt-session': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    tls: tlsOff,
  } as RequestInit)
  return { status: res.status, body: await res.json() }
}

/** Runs `fn` over `items` with `concurrency` at once. */
async function inParallel<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }))
  return out
}

/** `count` identities with an ott enrollment, each with its token and a CSR of a new P-256 key. */
async function prepareEnrollments(t: Pick<PkiBenchTarget, 'url' | 'adminToken'>, prefix: string, count: number): Promise<{ token: string; csr: string; key: string }[]> {
  const mgmt = `${t.url}/edge/management/v1`
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`)
  return inParallel(names, 16, async (name) => {
    const created = await call(`${mgmt}/identities`, 'POST', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } }, t.adminToken)
    if (created.status !== 201) throw new Error(`identity create answered ${created.status}`)
    const detail = await call(`${mgmt}/identities/${created.body.data.id}`, 'GET', undefined, t.adminToken)
    const keys = await generateKeyPair('ec-p256')
    return { token: detail.body.data.enrollment.ott.token, csr: await makeCsrPem(keys), key: await exportPrivateKeyPem(keys.privateKey) }
  })
}

export async function benchEnrollment(t: PkiBenchTarget): Promise<void> {
  // the controller's own intermediate: the key the CA actor signs enrolled certificates with
  const pki = await ensureControllerPki(join(t.dataDir, 'pki'), { hostname: 'localhost', extraSans: [], clock: systemClock })
  const csrs = await Promise.all(Array.from({ length: CONCURRENT_ENROLLMENTS }, async () => makeCsrPem(await generateKeyPair('ec-p256'))))
  const { result: raw, cpuSeconds: rawCpu } = await withCpuOf(process.pid, () => runLoad({
    concurrency: CONCURRENT_ENROLLMENTS,
    durationMs: t.durationMs,
    request: async (w, i) => {
      const csr = await parseCsrPem(csrs[w])
      const now = Date.now()
      const pem = await issueClientCertificate({
        issuer: pki.signer,
        publicKey: csr.publicKeySpki,
        commonName: `bench-${w}-${i}`,
        spiffeId: `spiffe://bench/identity/bench-${w}-${i}`,
        notBefore: now,
        notAfter: now + 3_600_000,
      })
      return pem.length > 0
    },
  }))
  printFigure(`raw certificate issuance (CSR check + sign), c=${CONCURRENT_ENROLLMENTS}`, raw.perSecond, 'op/s',
    `${formatCpuPerOp(rawCpu, raw.count)} (this process), p50 ${raw.p50Ms.toFixed(2)} ms`)

  const count = Math.min(MAX_ENROLLMENTS, Math.ceil((raw.perSecond * t.durationMs) / 1000 * 1.2) + CONCURRENT_ENROLLMENTS)
  const pool = await prepareEnrollments(t, 'bench-ott', count)
  const client = `${t.url}/edge/client/v1`
  let i = 0
  const { result: enroll, cpuSeconds: enrollCpu } = await withCpuOf(t.pid, () => runLoad({
    concurrency: CONCURRENT_ENROLLMENTS,
    durationMs: t.durationMs,
    maxRequests: pool.length,
    request: async () => {
      const { token, csr } = pool[i++]
      const res = await call(`${client}/enroll/ott`, 'POST', { token, clientCsr: csr })
      return res.status === 200
    },
  }))
  const note = enroll.count >= pool.length ? `; all ${pool.length} prepared tokens used` : ''
  printFigure(`ott enrollments, c=${CONCURRENT_ENROLLMENTS}`, enroll.perSecond, 'req/s',
    `${formatCpuPerOp(enrollCpu, enroll.count + enroll.errors)}, p50 ${enroll.p50Ms.toFixed(2)} ms, p99 ${enroll.p99Ms.toFixed(2)} ms, ${enroll.errors} errors, ratio to raw issuance ${(enroll.perSecond / raw.perSecond).toFixed(2)} (target >= 0.70)${note}`)
}

/** A certificate login, as a client sends it on a connection it closes after the answer. */
export const CERT_LOGIN_REQUEST = 'POST /edge/client/v1/authenticate?method=cert HTTP/1.1\r\nhost: localhost\r\n' +
  'content-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}'

/** A client's certificate and key (PEM), and the TLS session it offers for resumption, if any. */
export interface MtlsClient {
  cert: string
  key: string
  session?: Buffer
}

/** Opens a TLS connection presenting `cert` (resuming `session` when given); `then` runs once it is up and settles the promise. */
export function connectMtls(port: number, client: MtlsClient, then: (socket: tls.TLSSocket, done: (ok: boolean) => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ...client }, () => then(socket, finish))
    let settled = false
    function finish(ok: boolean) {
      if (settled) return
      settled = true
      socket.destroy()
      resolve(ok)
    }
    socket.on('error', () => finish(false))
  })
}

/** A new mTLS connection that sends `request` (raw HTTP/1.1) and settles true when the answer's status line starts with `okStatus`. */
export function requestOnNewConnection(port: number, client: MtlsClient, request: string, okStatus = 'HTTP/1.1 200'): Promise<boolean> {
  return connectMtls(port, client, (socket, done) => {
    let head = ''
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1')
      if (head.includes('\r\n')) done(head.startsWith(okStatus))
    })
    socket.on('end', () => done(false))
    socket.write(request)
  })
}

/** A TLS session ticket the server gives a client on one certificate login: what a client offers to resume. */
function sessionOf(port: number, client: MtlsClient): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let session: Buffer | undefined
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ...client }, () => socket.write(CERT_LOGIN_REQUEST))
    socket.on('session', (s: Buffer) => (session = s))
    socket.on('data', () => {})
    socket.on('close', () => resolve(session))
    socket.on('error', () => socket.destroy())
  })
}

/** A new identity enrolled by ott: its client certificate and key (PEM). */
export async function enrolledClient(t: Pick<PkiBenchTarget, 'url' | 'adminToken'>, name: string): Promise<{ cert: string; key: string }> {
  const [me] = await prepareEnrollments(t, name, 1)
  const enrolled = await call(`${t.url}/edge/client/v1/enroll/ott`, 'POST', { token: me.token, clientCsr: me.csr })
  if (enrolled.status !== 200) throw new Error(`enrollment answered ${enrolled.status}`)
  return { cert: enrolled.body.data.cert as string, key: me.key }
}

/** Prints the two figures; returns the login ratio from throughput and from CPU (handshake CPU / login CPU). */
export async function benchCertLogin(t: PkiBenchTarget): Promise<{ throughputRatio: number; cpuRatio: number }> {
  const client = await enrolledClient(t, 'bench-cert-login')
  const port = Number(new URL(t.url).port)

  const { result: handshakes, cpuSeconds: handshakeCpu } = await withCpuOf(t.pid, () => runLoad({
    concurrency: CONCURRENT_LOGINS,
    durationMs: t.durationMs,
    request: () => connectMtls(port, client, (_socket, done) => done(true)),
  }))
  const handshakeOps = handshakes.count + handshakes.errors
  printFigure(`raw mTLS handshakes (new connection each), c=${CONCURRENT_LOGINS}`, handshakes.perSecond, 'op/s',
    `${formatCpuPerOp(handshakeCpu, handshakeOps)}, p50 ${handshakes.p50Ms.toFixed(2)} ms`)

  const { result: logins, cpuSeconds: loginCpu } = await withCpuOf(t.pid, () => runLoad({
    concurrency: CONCURRENT_LOGINS,
    durationMs: t.durationMs,
    request: () => requestOnNewConnection(port, client, CERT_LOGIN_REQUEST),
  }))
  const loginOps = logins.count + logins.errors
  const throughputRatio = logins.perSecond / handshakes.perSecond
  const cpuRatio = (handshakeCpu / handshakeOps) / (loginCpu / loginOps)
  printFigure(`certificate logins (new TLS connection each), c=${CONCURRENT_LOGINS}`, logins.perSecond, 'req/s',
    `${formatCpuPerOp(loginCpu, loginOps)}, p50 ${logins.p50Ms.toFixed(2)} ms, ${logins.errors} errors, ` +
      `handshake CPU / login CPU ${cpuRatio.toFixed(2)} (throughput ratio ${throughputRatio.toFixed(2)}; target >= 0.60)`)

  // a client that kept the session ticket of an earlier connection skips the certificate exchange; the server still
  // has the certificate of the session, so the login is the same
  const resuming = { ...client, session: await sessionOf(port, client) }
  const resumes = resuming.session !== undefined && (await connectMtls(port, resuming, (socket, done) => done(socket.isSessionReused())))
  if (resumes) {
    const { result: resumed, cpuSeconds: resumedCpu } = await withCpuOf(t.pid, () => runLoad({
      concurrency: CONCURRENT_LOGINS,
      durationMs: t.durationMs,
      request: () => requestOnNewConnection(port, resuming, CERT_LOGIN_REQUEST),
    }))
    const resumedOps = resumed.count + resumed.errors
    printFigure(`certificate logins (new connection resuming a TLS session), c=${CONCURRENT_LOGINS}`, resumed.perSecond, 'req/s',
      `${formatCpuPerOp(resumedCpu, resumedOps)}, p50 ${resumed.p50Ms.toFixed(2)} ms, ${resumed.errors} errors, ` +
        `full handshake CPU / resumed login CPU ${((handshakeCpu / handshakeOps) / (resumedCpu / resumedOps)).toFixed(2)}`)
  } else console.log('  (the controller did not resume a TLS session: no figure for resumed certificate logins)')
  return { throughputRatio, cpuRatio }
}
