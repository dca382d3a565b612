// External JWT signers in the CA actor (edge-api management.yml externalJwtSignerCreate/Detail): the records, their
// certificate facts, the kid and issuer indexes a login picks a signer by, reload after a restart, and the delete
// flow's refusal of a signer a policy names (flows/ca/ca-jwt-signer-delete.ts).
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startCaActor, type CaActor } from '../../../src/actors/ca/ca-actor.ts'
import type { ExternalJwtSignerReads } from '../../../src/domain/ca/ca-jwt-signer-types.ts'
import { deleteExternalJwtSigner } from '../../../src/flows/ca/ca-jwt-signer-delete.ts'
import { makeTestCa } from '../../support/pki.ts'
import { codeOfAsync } from '../../support/api-error-code.ts'

const codeOf = (p: Promise<unknown>) => codeOfAsync(p, { withCause: true })
const change: ChangeContext = { author: 'test', source: 'rest' }
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'))

let dir: string
let store: Store
let ca: CaActor

async function start(): Promise<void> {
  store = await openStore(join(dir, 'db'))
  const deps: ActorSystemDeps = { store, clock, bus: new EventBus(), cloneMessages: true, failStop: (e) => { throw e } }
  ca = await startCaActor(join(dir, 'pki'), { hostname: 'ctrl.test', extraSans: [], clock }, deps)
}
async function stop(): Promise<void> {
  await ca.stop()
  await store.close()
}

const base = { enabled: true, audience: 'aud' }

describe('external JWT signers in the CA actor', () => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edgeplane-signers-'))
    await start()
  })
  afterEach(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('derive commonName, fingerprint and validity from certPem, and index kid and issuer', async () => {
    const test = await makeTestCa({ commonName: 'idp signing', clock })
    const { id } = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's1', issuer: 'https://a', kid: 'k1', certPem: test.certPem }, change })
    const reads: ExternalJwtSignerReads = ca.snapshot()
    expect(reads.jwtSigners.get(id)).toMatchObject({
      commonName: 'idp signing',
      fingerprint: test.view.fingerprintSha1,
      notBefore: test.view.notBefore,
      notAfter: test.view.notAfter,
      claimsProperty: 'sub',
      targetToken: 'ACCESS',
      createdAt: clock.now(),
    })
    expect(reads.jwtSignerByKid('k1')?.id).toBe(id)
    expect(reads.jwtSignerByIssuer('https://a')?.id).toBe(id)
  })

  it('move the indexes on update, so the old kid and issuer are free again', async () => {
    const { id } = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's1', issuer: 'https://a', kid: 'k1', jwksEndpoint: 'https://a/keys' }, change })
    await ca.ask({ type: 'jwtSigner.update', id, input: { issuer: 'https://b', kid: '' }, replace: false, change })
    const reads = ca.snapshot()
    expect(reads.jwtSignerByKid('k1')).toBeUndefined()
    expect(reads.jwtSignerByIssuer('https://a')).toBeUndefined()
    expect(reads.jwtSignerByIssuer('https://b')?.id).toBe(id)
    expect(reads.jwtSigners.get(id)?.kid).toBeNull()
    const other = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's2', issuer: 'https://a', kid: 'k1', jwksEndpoint: 'https://a/keys' }, change })
    expect(ca.snapshot().jwtSignerByKid('k1')?.id).toBe(other.id)
  })

  it('are refused whole: a failed update changes nothing', async () => {
    const { id } = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's1', issuer: 'https://a', jwksEndpoint: 'https://a/keys' }, change })
    const before = ca.snapshot().jwtSigners.get(id)
    expect(await codeOf(ca.ask({ type: 'jwtSigner.update', id, input: { name: 'renamed', certPem: 'junk' }, replace: false, change }))).toStartWith(
      '400 COULD_NOT_VALIDATE certPem',
    )
    expect(await codeOf(ca.ask({ type: 'jwtSigner.update', id, input: { name: 'renamed', certPem: 'junk', jwksEndpoint: null }, replace: false, change }))).toStartWith(
      '400 INVALID_CERT_PEM certPem',
    )
    expect(ca.snapshot().jwtSigners.get(id)).toBe(before!)
  })

  it('survive a restart with their indexes', async () => {
    const { id } = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's1', issuer: 'https://a', kid: 'k1', jwksEndpoint: 'https://a/keys' }, change })
    await stop()
    await start()
    expect(ca.snapshot().jwtSignerByKid('k1')?.id).toBe(id)
    expect(ca.snapshot().jwtSigners.byName('s1')?.id).toBe(id)
  })

  it('are deleted through the flow, which refuses one a policy names with 409 and keeps it', async () => {
    const { id } = await ca.ask({ type: 'jwtSigner.create', input: { ...base, name: 's1', issuer: 'https://a', jwksEndpoint: 'https://a/keys' }, change })
    const naming = (signerId: string) => (signerId === id ? ['policy-1'] : [])
    expect(await codeOf(deleteExternalJwtSigner({ ca, policiesNaming: naming }, id, change))).toBe(
      '409 CAN_NOT_DELETE_REFERENCED_ENTITY id: entity type externalJwtSigners referenced by authPolicies: [policy-1]',
    )
    expect(ca.snapshot().jwtSigners.has(id)).toBe(true)
    await deleteExternalJwtSigner({ ca, policiesNaming: () => [] }, id, change)
    expect(ca.snapshot().jwtSigners.has(id)).toBe(false)
    expect(ca.snapshot().jwtSignerByIssuer('https://a')).toBeUndefined()
    expect(await codeOf(deleteExternalJwtSigner({ ca, policiesNaming: () => [] }, id, change))).toBe('404 NOT_FOUND')
  })
})
