// Service session tokens (src/flows/sessions/session-token.ts): signed through the CA actor, verified with the public
// key it shows (controller-behaviour.md §7: claims iss, sub, aud ["openziti"], iat, exp = iat + 1 year, jti, z_*).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { startCaActor, type CaActor } from '../../../src/actors/ca/ca-actor.ts'
import { createSessionTokens } from '../../../src/flows/sessions/session-token.ts'

let dir: string
let store: Store
let ca: CaActor
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'))
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-tokens-'))
  store = await openStore(join(dir, 'db'))
  const deps = { store, clock, bus: new EventBus(), cloneMessages: true, failStop: (e: unknown) => { throw e } }
  ca = await startCaActor(join(dir, 'pki'), { hostname: 'ctrl.test', extraSans: [], clock }, deps)
})
afterAll(async () => {
  await ca.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const claims = { sessionId: 's-1', apiSessionId: 'as-1', identityId: 'i-1', serviceId: 'svc-1', type: 'Dial' } as const

describe('service session tokens', () => {
  it('round-trips the claims of a token the CA signed', async () => {
    const tokens = createSessionTokens(ca, () => 'https://ctrl.test:1280')
    const token = await tokens.sign(claims, clock.now())
    const iat = Math.floor(clock.now() / 1000)
    expect(decodeJwt(token)).toEqual({
      z_asid: 'as-1', z_iid: 'i-1', z_t: 's', z_st: 'Dial', z_leg: true,
      iss: 'https://ctrl.test:1280', sub: 'svc-1', aud: ['openziti'], iat, exp: iat + 365 * 24 * 3600, jti: 's-1',
    })
    expect(await tokens.verify(token, clock.now())).toEqual({ ...claims, legacy: true, iat })
  })

  it('tells a stored session\'s token (z_leg true) from an OIDC sign-in\'s (false)', async () => {
    const tokens = createSessionTokens(ca, () => 'https://ctrl.test:1280')
    const token = await tokens.sign({ ...claims, legacy: false }, clock.now())
    expect((await tokens.verify(token, clock.now()))?.legacy).toBe(false)
  })

  it('rejects a tampered, expired or foreign token', async () => {
    const tokens = createSessionTokens(ca, () => 'https://ctrl.test:1280')
    const token = await tokens.sign(claims, clock.now())
    const [h, , s] = token.split('.')
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'other' })).toString('base64url')
    expect(await tokens.verify(`${h}.${forged}.${s}`, clock.now())).toBeUndefined()
    expect(await tokens.verify(token, clock.now() + 366 * 24 * 3600_000)).toBeUndefined()
    const signedByServerKey = await ca.ask({ type: 'ca.signJwt', key: 'server', claims: decodeJwt(token) })
    expect(await tokens.verify(signedByServerKey, clock.now())).toBeUndefined()
  })
})
