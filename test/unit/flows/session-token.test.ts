// Service session tokens (src/flows/sessions/session-token.ts), decoded as a real edge router decodes them
// (ziti router/state/manager.go ParseServiceSessionJwt and pubKeyLookup, router/state/token.go NewServiceSessionToken,
// common/oidc_tokens.go ServiceAccessClaims; router-control-plane.md §3.4 and §9 trap 6): the header's kid names a
// key of the router's data model with usage JWTValidation (the real controller's: kid = SHA-1 hex of its server
// certificate's DER, data = that DER), the signature verifies with that certificate's key, and the claims are those
// of ServiceAccessClaims: sub = service id, jti = session id, z_asid = the API session the router holds, z_iid, z_t
// "s", z_st Dial|Bind, z_leg, aud ["openziti"]; controller-behaviour.md §7: iss, iat, exp = iat + 1 year.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createHash, X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compactVerify, decodeJwt, decodeProtectedHeader, importX509 } from 'jose'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { startCaActor, type CaActor } from '../../../src/actors/ca/ca-actor.ts'
import { createSessionTokens, type SessionTokens } from '../../../src/flows/sessions/session-token.ts'
import { createTokenKeys } from '../../../src/flows/oidc/oidc-keys.ts'
import { decodePem } from '../../../src/lib/pem.ts'

let dir: string
let store: Store
let ca: CaActor
let tokens: SessionTokens
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'))
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-tokens-'))
  store = await openStore(join(dir, 'db'))
  const deps = { store, clock, bus: new EventBus(), cloneMessages: true, failStop: (e: unknown) => { throw e } }
  ca = await startCaActor(join(dir, 'pki'), { hostname: 'ctrl.test', extraSans: [], clock }, deps)
  const keys = createTokenKeys({ own: () => ca.snapshot().jwtVerifiers.server, issuers: () => [ca.snapshot().pki.intermediate.certPem], now: () => clock.now(), log: () => {} })
  tokens = createSessionTokens(ca, () => 'https://ctrl.test:1280', keys.keys)
})
afterAll(async () => {
  await ca.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const claims = { sessionId: 's-1', apiSessionId: 'as-1', identityId: 'i-1', serviceId: 'svc-1', type: 'Dial' } as const

/** The router's public key of the data model: the server certificate's DER, kid = its SHA-1 (sync_instant.go newPublicKey). */
function routerPublicKey() {
  const der = decodePem(ca.snapshot().pki.server.certPem)[0].der
  return { data: der, kid: createHash('sha1').update(der).digest('hex') }
}

/** What a router does with a service session JWT, in TypeScript: find the key by kid, check the signature and the claims. */
async function parseAsRouter(jwt: string, apiSessionIdHeld: string) {
  const header = decodeProtectedHeader(jwt)
  const pk = routerPublicKey()
  if (header.kid !== pk.kid) throw new Error('public key not found')
  const cert = new X509Certificate(pk.data)
  // golang-jwt checks the algorithm against the key type: ES256 for a P-256 key, RS256 for RSA
  const expected = cert.publicKey.asymmetricKeyType === 'rsa' ? 'RS256' : ({ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' } as Record<string, string>)[cert.publicKey.asymmetricKeyDetails!.namedCurve!]
  expect(header.alg).toBe(expected)
  await compactVerify(jwt, await importX509(cert.toString(), header.alg!))
  const p = decodeJwt(jwt) as Record<string, unknown>
  if (p.z_t !== 's') throw new Error(`invalid service session token type: ${String(p.z_st)}`)
  if (p.z_asid !== apiSessionIdHeld) throw new Error('api session id does not match service session api session id')
  if (typeof p.exp !== 'number' || p.exp * 1000 <= clock.now()) throw new Error('token is expired')
  return p
}

describe('service session tokens', () => {
  it('are signed with the server certificate\'s key under its kid and parse as a router parses them', async () => {
    const token = await tokens.sign(claims, clock.now())
    const iat = Math.floor(clock.now() / 1000)
    expect(decodeProtectedHeader(token)).toEqual({ alg: decodeProtectedHeader(token).alg, typ: 'JWT', kid: ca.snapshot().pki.server.view.fingerprintSha1 })
    const p = await parseAsRouter(token, 'as-1')
    expect(p).toEqual({
      z_asid: 'as-1', z_iid: 'i-1', z_t: 's', z_st: 'Dial', z_leg: true,
      iss: 'https://ctrl.test:1280', sub: 'svc-1', aud: ['openziti'], iat, exp: iat + 365 * 24 * 3600, jti: 's-1',
    })
    await expect(parseAsRouter(token, 'another-api-session')).rejects.toThrow('api session id does not match')
    expect(await tokens.verify(token, clock.now())).toEqual({ ...claims, legacy: true, iat })
  })

  it('tells a stored session\'s token (z_leg true) from an OIDC sign-in\'s (false)', async () => {
    const token = await tokens.sign({ ...claims, legacy: false }, clock.now())
    expect((await tokens.verify(token, clock.now()))?.legacy).toBe(false)
  })

  it('carry z_leg false and the Bind type for a Bind session of an OIDC sign-in', async () => {
    const token = await tokens.sign({ ...claims, type: 'Bind', legacy: false }, clock.now())
    expect(await parseAsRouter(token, 'as-1')).toMatchObject({ z_st: 'Bind', z_leg: false, z_t: 's' })
  })

  it('rejects a tampered, expired, unknown-kid or foreign token', async () => {
    const token = await tokens.sign(claims, clock.now())
    const [h, , s] = token.split('.')
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'other' })).toString('base64url')
    expect(await tokens.verify(`${h}.${forged}.${s}`, clock.now())).toBeUndefined()
    expect(await tokens.verify(token, clock.now() + 366 * 24 * 3600_000)).toBeUndefined()
    const otherKid = Buffer.from(JSON.stringify({ ...decodeProtectedHeader(token), kid: '00'.repeat(20) })).toString('base64url')
    expect(await tokens.verify(`${otherKid}.${token.split('.')[1]}.${s}`, clock.now())).toBeUndefined()
    // an OIDC access token is signed by the same key but is no service session token
    const access = await ca.ask({ type: 'ca.signJwt', key: 'server', claims: { ...decodeJwt(token), z_t: 'a' } })
    expect(await tokens.verify(access, clock.now())).toBeUndefined()
    expect(await tokens.verify('not a jwt', clock.now())).toBeUndefined()
  })

  it('still verifies a token an older edgeplane signed with the intermediate CA\'s key and no kid', async () => {
    const token = await tokens.sign(claims, clock.now())
    const older = await ca.ask({ type: 'ca.signJwt', key: 'signing-ca', claims: decodeJwt(token) })
    expect(decodeProtectedHeader(older).kid).toBeUndefined()
    expect(await tokens.verify(older, clock.now())).toMatchObject(claims)
  })
})
