// A seeded fuzz of the /oidc tree and of bearer tokens on the edge APIs (issue 22): every OIDC endpoint with every
// method, hostile parameters (known names with huge, empty, repeated, non-UTF-8 and injection values), bodies of
// every content type (broken JSON, deep nesting, forms, garbage bytes), forged, truncated and foreign JWTs as bearer,
// Basic and subject tokens, odd Host headers; then clients that abort mid-body and dribble a login. No answer may be
// a 5xx, an OIDC error is a bare {code,message} or an OAuth {error,error_description}, the server lives on and still
// signs a client in. A failure prints its seed and request: FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollNewIdentity, type EnrolledIdentity } from '../support/enroll.ts'
import { decodeJwtPayload, oidcSdk, type OidcTokensAnswer } from '../support/oidc-sdk.ts'
import { openTls } from '../support/raw-wire.ts'
import { rng } from '../support/rng.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261126)
const REQUESTS = 3_000
const IN_FLIGHT = 12

const PATHS = [
  '/.well-known/openid-configuration', '/authorize', '/authorize/callback', '/login/username', '/login/password', '/login/cert',
  '/login/ext-jwt', '/login/totp', '/login/totp/enroll', '/login/totp/enroll/verify', '/login/auth-queries', '/oauth/token',
  '/keys', '/revoke', '/end_session', '/logged-out', '/nope', '', '/login/../keys',
]
const NAMES = [
  'client_id', 'redirect_uri', 'response_type', 'scope', 'code_challenge', 'code_challenge_method', 'state', 'nonce', 'prompt',
  'method', 'configTypes', 'id', 'authRequestID', 'username', 'password', 'code', 'grant_type', 'code_verifier', 'refresh_token',
  'subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'csr_pem', 'csrPem', 'token', 'id_token_hint',
  'post_logout_redirect_uri', 'envInfo', 'sdkInfo', '__proto__', 'constructor',
]

let srv: TestServer
let me: EnrolledIdentity
let tokens: OidcTokensAnswer

beforeAll(async () => {
  srv = await startTestServer()
  me = await enrollNewIdentity(srv, 'oidc-fuzz-device')
  tokens = await oidcSdk(srv, me).certLogin()
})
afterAll(async () => {
  await srv.stop()
})

describe(`OIDC fuzz (seed ${SEED})`, () => {
  it(`${REQUESTS} hostile requests to every /oidc endpoint and bearer tokens on the APIs: no 5xx, errors in their shapes`, async () => {
    const r = rng(SEED)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
    const b64 = (s: string) => Buffer.from(s).toString('base64url')
    const [h, p] = tokens.access_token.split('.')
    const values = (): string[] => [
      '', 'openziti', 'native', 'S256', 'plain', 'code', 'openid offline_access', 'authorization_code', 'refresh_token',
      'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:token-type:access_token',
      'http://localhost:20314/auth/callback', 'http://localhost:1@evil/auth/callback', 'javascript:alert(1)',
      '<script>alert(1)</script>', "' OR 1=1 --", '%00', '\u0000', '\ud800', 'x'.repeat(70_000), '00000000-0000-4000-8000-000000000000',
      tokens.access_token, tokens.refresh_token!, tokens.id_token!, `${h}.${p}.AAAA`, `${h}.${b64('{"z_t":"r","sub":"x"}')}.sig`,
      `${b64('{"alg":"none"}')}.${p}.`, 'a.b.c', '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----',
      '{"a":', String(r()), '[]', '{}',
    ]
    // a lone surrogate has no UTF-8: it goes out as the bytes a careless encoder would send (invalid UTF-8)
    const enc = (v: string) => {
      try {
        return encodeURIComponent(v)
      } catch {
        return '%ed%a0%80'
      }
    }
    const query = () => {
      const parts: string[] = []
      const n = Math.floor(r() * 6)
      for (let i = 0; i < n; i++) parts.push(`${enc(pick(NAMES))}=${r() < 0.1 ? '%ff%fe' : enc(pick(values()))}`)
      return parts.length ? `?${parts.join('&')}` : ''
    }
    const body = (): { type?: string; text?: string | Uint8Array } => {
      const kind = Math.floor(r() * 8)
      const fields = Array.from({ length: Math.floor(r() * 5) }, () => [pick(NAMES), pick(values())] as const)
      switch (kind) {
        case 0: return {}
        case 1: return { type: 'application/json', text: JSON.stringify(Object.fromEntries(fields)) }
        case 2: return { type: 'application/x-www-form-urlencoded', text: new URLSearchParams(fields.map(([k, v]): [string, string] => [k, v])).toString() }
        case 3: return { type: 'application/json', text: '{"sdkInfo":'.repeat(200) }
        case 4: return { type: 'application/json', text: JSON.stringify({ envInfo: pick(values()), sdkInfo: [1, 2], configTypes: { a: 1 }, id: 5, username: null }) }
        case 5: return { type: pick(['text/plain', 'application/xml', 'multipart/form-data; boundary=x', '']), text: pick(values()) }
        case 6: return { type: 'application/x-www-form-urlencoded', text: new Uint8Array([0xff, 0xfe, 0x3d, 0x26, 0x00, 0xc3]) }
        default: return { type: 'application/json', text: '[1,2,3]' }
      }
    }
    const authorization = () =>
      pick([undefined, `Bearer ${pick(values())}`, `Basic ${b64(pick(['openziti:', 'native:x', ':', 'nobody', '\u0000']))}`, 'Basic !!!', `Bearer ${tokens.access_token}, Bearer ${tokens.refresh_token}`, 'Negotiate x'])

    const failures: string[] = []
    const statuses = new Map<number, number>()
    let done = 0
    const one = async (i: number) => {
      const toApi = r() < 0.2
      const method = toApi ? 'GET' : pick(['GET', 'POST', 'POST', 'DELETE', 'PUT', 'HEAD'])
      const path = toApi ? pick(['/edge/client/v1/current-identity', '/edge/management/v1/current-api-session', '/edge/client/v1/services']) : `/oidc${pick(PATHS)}${query()}`
      const b = method === 'GET' || method === 'HEAD' ? {} : body()
      const headers: Record<string, string> = { accept: pick(['application/json', 'text/html', '*/*']) }
      // a header value cannot carry control characters (fetch refuses them; the transport fuzz sends such bytes raw)
      const auth = authorization()?.replace(/[^\u0020-\u007e]/g, '?')
      if (auth) headers.authorization = auth
      if (b.type) headers['content-type'] = b.type
      if (r() < 0.05) headers.host = pick(['evil.example', 'localhost:1', '[::1]:x', ''])
      const desc = `#${i} ${method} ${path.slice(0, 200)} ${JSON.stringify(headers).slice(0, 300)}`
      try {
        const res = await fetch(`${srv.url}${path}`, {
          method,
          headers,
          body: b.text,
          redirect: 'manual',
          tls: { ca: srv.caPem, ...(r() < 0.3 ? me : {}) },
        } as RequestInit)
        const text = await res.text()
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status >= 500) failures.push(`${desc} → ${res.status} ${text.slice(0, 300)}`)
        else if (method !== 'HEAD' && res.status >= 400 && (res.headers.get('content-type') ?? '').includes('json')) {
          const parsed = JSON.parse(text)
          const shaped = (typeof parsed.code === 'string' && typeof parsed.message === 'string') || typeof parsed.error === 'string' || typeof parsed.error?.code === 'string'
          if (!shaped) failures.push(`${desc} → ${res.status} error of no known shape: ${text.slice(0, 300)}`)
        }
      } catch (e) {
        failures.push(`${desc} → ${(e as Error).message}`)
      }
      done++
    }
    let next = 0
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < REQUESTS) await one(next++)
    }))
    expect(done).toBe(REQUESTS)
    // the fuzz reached the endpoints' own answers, not only the router's 404s
    for (const status of [200, 302, 400, 401, 404, 405, 415]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0)
    if (failures.length > 0) throw new Error(`seed ${SEED}: ${failures.length} bad answers, first: ${failures.slice(0, 5).join('\n')}`)
    // the server still signs a device in, and the first sign-in's tokens were not disturbed
    const again = await oidcSdk(srv, me).certLogin()
    expect(decodeJwtPayload(again.access_token).sub).toBe(me.id)
    expectStatus(await oidcSdk(srv, me).api(tokens.access_token, 'client').get('/current-identity'), 200)
  }, 120_000)

  it('clients that abort mid-body or dribble a login leave the controller answering', async () => {
    const port = Number(new URL(srv.url).port)
    const targets = ['/oidc/oauth/token', '/oidc/login/password?id=x', '/oidc/login/cert?id=x', '/oidc/authorize', '/oidc/revoke']
    for (const target of targets) {
      // declares a body, sends half of it, goes away
      const conn = await openTls(port, me)
      await conn.write(`POST ${target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 1000\r\n\r\ngrant_type=refresh_token&refresh_token=`)
      conn.destroy()
      // dribbles a body a byte at a time, then completes it: answered like any other
      const slow = await openTls(port)
      const text = 'grant_type=authorization_code&client_id=openziti&code=nope&code_verifier=x'
      await slow.write(`POST ${target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n`)
      for (const ch of text.slice(0, 12)) {
        await slow.write(ch)
        await Bun.sleep(5)
      }
      await slow.write(text.slice(12))
      await slow.until((bytes) => bytes.includes('\r\n\r\n'), 5_000)
      expect(slow.status()).toBeGreaterThanOrEqual(200)
      expect(slow.status()).toBeLessThan(500)
      slow.destroy()
    }
    // a sign-in still completes, and the admin still logs in the legacy way
    expect((await oidcSdk(srv, me).certLogin()).token_type).toBe('Bearer')
    expect(typeof (await srv.login(ADMIN.username, ADMIN.password))).toBe('string')
  })
})
