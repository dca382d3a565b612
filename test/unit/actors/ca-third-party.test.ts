// Third-party CAs in the CA actor (edge-api management.yml caCreate/caDetail; controller-behaviour.md §6 "CA
// verification"): the table the Management API lists, and the trust list (ThirdPartyCaReads) with its change event,
// which certificate login and CA enrollment read to refresh their trust without a restart.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../../src/errors/api-error.ts'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startCaActor, type CaActor } from '../../../src/actors/ca/ca-actor.ts'
import type { CaEvent } from '../../../src/actors/ca/ca-messages.ts'
import type { ThirdPartyCaReads } from '../../../src/domain/ca/ca-reads.ts'
import { decideExternalIdClaim, type ExternalIdClaimInput } from '../../../src/domain/ca/ca-decide.ts'
import { DEFAULT_IDENTITY_NAME_FORMAT } from '../../../src/domain/ca/ca-types.ts'
import { makeClientCert, makeTestCa } from '../../support/pki.ts'
import { codeOfAsync } from '../../support/api-error-code.ts'

const codeOf = (p: Promise<unknown>) => codeOfAsync(p, { withCause: true })

const change: ChangeContext = { author: 'test', source: 'rest' }
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'))
const pkiOpts = { hostname: 'ctrl.test', extraSans: [], clock }

let dir: string
let store: Store
let deps: ActorSystemDeps
let ca: CaActor
let events: CaEvent[]

let seq = 0
async function register(flags: { isAuthEnabled?: boolean; isAutoCaEnrollmentEnabled?: boolean; isOttCaEnrollmentEnabled?: boolean } = {}) {
  const test = await makeTestCa({ commonName: `third party ${++seq}`, clock })
  const input = {
    name: `ca-${seq}`,
    certPem: test.certPem,
    isAuthEnabled: flags.isAuthEnabled ?? true,
    isAutoCaEnrollmentEnabled: flags.isAutoCaEnrollmentEnabled ?? false,
    isOttCaEnrollmentEnabled: flags.isOttCaEnrollmentEnabled ?? false,
    identityRoles: ['from-ca'],
  }
  const { id } = await ca.ask({ type: 'ca.create', input, change })
  return { id, test, input }
}

describe('third-party CAs', () => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edgeplane-cas-'))
    store = await openStore(join(dir, 'db'))
    const bus = new EventBus()
    events = []
    bus.subscribe<CaEvent>('ca.trustChanged', (e) => events.push(e))
    bus.subscribe<CaEvent>('ca.deleted', (e) => events.push(e))
    deps = { store, clock, bus, cloneMessages: true, failStop: (e) => { throw e } }
    ca = await startCaActor(join(dir, 'pki'), pkiOpts, deps)
  })
  afterEach(async () => {
    await ca.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('are created unverified, with a UUID verification token and the default name format, and touch no trust', async () => {
    const { id, test } = await register()
    const reads: ThirdPartyCaReads = ca.snapshot()
    const rec = reads.cas.get(id)!
    expect(rec).toMatchObject({ isVerified: false, fingerprint: test.view.fingerprintSha1, identityNameFormat: DEFAULT_IDENTITY_NAME_FORMAT, externalIdClaim: null })
    expect(rec.verificationToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(reads.caByFingerprint(test.view.fingerprintSha1)?.id).toBe(id)
    expect(reads.verifiedCas()).toEqual([])
    expect(reads.trustVersion).toBe(0)
    expect(events).toEqual([])
  })

  it('refuse a taken name, a certificate registered already, and a certificate that is not a CA', async () => {
    const first = await register()
    expect(await codeOf(ca.ask({ type: 'ca.create', input: { ...first.input, certPem: (await makeTestCa({ clock })).certPem }, change }))).toBe(
      `400 COULD_NOT_VALIDATE name: duplicate value '${first.input.name}' in unique index on cas store`,
    )
    expect(await codeOf(ca.ask({ type: 'ca.create', input: { ...first.input, name: 'another' }, change }))).toBe(
      `400 COULD_NOT_VALIDATE certPem: certificate already used as CA ${first.id}`,
    )
    const leaf = await makeClientCert({ issuer: first.test.signer, clock })
    expect(await codeOf(ca.ask({ type: 'ca.create', input: { ...first.input, name: 'leaf', certPem: leaf.certPem }, change }))).toBe('400 CERTIFICATE_IS_NOT_CA')
    expect(ca.snapshot().cas.size).toBe(1)
  })

  it('announce the trust list when one is verified; authTrustAnchors keeps only the auth-enabled ones', async () => {
    const auth = await register({ isAuthEnabled: true })
    const enrollOnly = await register({ isAuthEnabled: false, isOttCaEnrollmentEnabled: true })
    await ca.ask({ type: 'ca.verify', id: auth.id, change })
    await ca.ask({ type: 'ca.verify', id: enrollOnly.id, change })
    const reads = ca.snapshot()
    expect(reads.verifiedCas().map((c) => c.id)).toEqual([auth.id, enrollOnly.id].sort())
    expect(reads.authTrustAnchors().map((c) => c.certPem)).toEqual([auth.test.certPem])
    expect(events.map((e) => e.type)).toEqual(['ca.trustChanged', 'ca.trustChanged'])
    const last = events[1] as Extract<CaEvent, { type: 'ca.trustChanged' }>
    expect(last.verified.map((c) => c.id)).toEqual(reads.verifiedCas().map((c) => c.id))
    expect(last.trustVersion).toBe(reads.trustVersion)
    expect(await codeOf(ca.ask({ type: 'ca.verify', id: auth.id, change }))).toBe('409 CA_ALREADY_VERIFIED')
    expect(await codeOf(ca.ask({ type: 'ca.verify', id: 'nope', change }))).toBe('404 NOT_FOUND')
  })

  it('announce a change of a verified CA, not of an unverified one', async () => {
    const verified = await register()
    const unverified = await register()
    await ca.ask({ type: 'ca.verify', id: verified.id, change })
    events = []
    const before = ca.snapshot().trustVersion
    await ca.ask({ type: 'ca.update', id: unverified.id, input: { isAuthEnabled: false }, replace: false, change })
    expect(events).toEqual([])
    await ca.ask({ type: 'ca.update', id: verified.id, input: { isAuthEnabled: false }, replace: false, change })
    expect(events.map((e) => e.type)).toEqual(['ca.trustChanged'])
    expect(ca.snapshot().trustVersion).toBe(before + 1)
    expect(ca.snapshot().authTrustAnchors()).toEqual([])
    expect(ca.snapshot().verifiedCas().map((c) => c.isAuthEnabled)).toEqual([false])
  })

  it('announce a delete with ca.deleted, and with ca.trustChanged when the CA was verified', async () => {
    const verified = await register()
    const unverified = await register()
    await ca.ask({ type: 'ca.verify', id: verified.id, change })
    events = []
    await ca.ask({ type: 'ca.delete', id: unverified.id, change })
    expect(events.map((e) => e.type)).toEqual(['ca.deleted'])
    await ca.ask({ type: 'ca.delete', id: verified.id, change })
    expect(events.map((e) => e.type)).toEqual(['ca.deleted', 'ca.deleted', 'ca.trustChanged'])
    expect((events[1] as Extract<CaEvent, { type: 'ca.deleted' }>).ca.id).toBe(verified.id)
    expect(ca.snapshot().verifiedCas()).toEqual([])
    expect(ca.snapshot().caByFingerprint(verified.test.view.fingerprintSha1)).toBeUndefined()
    expect(await codeOf(ca.ask({ type: 'ca.delete', id: verified.id, change }))).toBe('404 NOT_FOUND')
  })

  it('are loaded at start with their trust list', async () => {
    const verified = await register()
    await register()
    await ca.ask({ type: 'ca.verify', id: verified.id, change })
    await ca.stop()
    ca = await startCaActor(join(dir, 'pki'), pkiOpts, deps)
    const reads = ca.snapshot()
    expect(reads.cas.size).toBe(2)
    expect(reads.authTrustAnchors().map((c) => c.id)).toEqual([verified.id])
    expect(reads.caByFingerprint(verified.test.view.fingerprintSha1)?.isVerified).toBe(true)
  })

  it('PATCH lays externalIdClaim members over the stored claim ({} keeps it, none removes it); PUT without one removes it', async () => {
    const { id, input } = await register()
    const claim = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: null, index: 0 }
    await ca.ask({ type: 'ca.update', id, input: { externalIdClaim: {} }, replace: false, change })
    expect(ca.snapshot().cas.get(id)!.externalIdClaim).toBeNull()
    await ca.ask({ type: 'ca.update', id, input: { externalIdClaim: claim }, replace: false, change })
    await ca.ask({ type: 'ca.update', id, input: { externalIdClaim: { index: 1 } }, replace: false, change })
    expect(ca.snapshot().cas.get(id)!.externalIdClaim).toEqual({ ...claim, parserCriteria: '', index: 1 } as never)
    await ca.ask({ type: 'ca.update', id, input: { name: 'renamed', externalIdClaim: {} }, replace: false, change })
    expect(ca.snapshot().cas.get(id)!.externalIdClaim?.index).toBe(1)
    await ca.ask({ type: 'ca.update', id, input: { name: 'renamed again' }, replace: false, change })
    expect(ca.snapshot().cas.get(id)!.externalIdClaim).toBeNull()
    await ca.ask({ type: 'ca.update', id, input: { externalIdClaim: claim }, replace: false, change })
    const { certPem: _, ...put } = input
    await ca.ask({ type: 'ca.update', id, input: { ...put, identityNameFormat: '[commonName]' }, replace: true, change })
    expect(ca.snapshot().cas.get(id)).toMatchObject({ externalIdClaim: null, identityNameFormat: '[commonName]', tags: {} })
  })
})

describe('decideExternalIdClaim', () => {
  const valid: [ExternalIdClaimInput, object][] = [
    [{ location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE' }, { matcherCriteria: '', parserCriteria: '', index: 0 }],
    [{ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.test', parser: 'SPLIT', parserCriteria: '@', index: 0 }, {}],
    [{ location: 'COMMON_NAME', matcher: 'PREFIX', matcherCriteria: 'dev-', parser: 'NONE', index: 2 }, { index: 2 }],
    [{ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE' }, {}],
  ]
  for (const [input, expected] of valid) {
    it(`accepts ${input.location} ${input.matcher} ${input.parser}`, () => {
      expect(decideExternalIdClaim(input)).toMatchObject({ ...input, ...expected })
    })
  }

  const refused: [string, ExternalIdClaimInput, string, string][] = [
    ['a negative index', { location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE', index: -1 }, 'externalIdClaim.index', 'index must be greater than or equal to zero'],
    ['no location', { matcher: 'ALL', parser: 'NONE' }, 'externalIdClaim.location', 'unsupported location []'],
    ['SCHEME on a common name', { location: 'COMMON_NAME', matcher: 'SCHEME', matcherCriteria: 'x', parser: 'NONE' }, 'externalIdClaim', 'unsupported matcher [SCHEME] for location [COMMON_NAME]'],
    ['PREFIX on a SAN URI', { location: 'SAN_URI', matcher: 'PREFIX', matcherCriteria: 'x', parser: 'NONE' }, 'externalIdClaim', 'unsupported matcher [PREFIX] for location [SAN_URI]'],
    ['PREFIX without criteria', { location: 'SAN_EMAIL', matcher: 'PREFIX', parser: 'NONE' }, 'externalIdClaim', 'invalid criteria [] for matcher [PREFIX]'],
    ['no parser', { location: 'COMMON_NAME', matcher: 'ALL' }, 'externalIdClaim', 'unsupported parser [] for location [COMMON_NAME]'],
    ['SPLIT without a separator', { location: 'COMMON_NAME', matcher: 'ALL', parser: 'SPLIT' }, 'externalIdClaim', 'invalid criteria [] for parser [SPLIT]'],
  ]
  for (const [what, input, field, reason] of refused) {
    it(`refuses ${what}`, () => {
      try {
        decideExternalIdClaim(input)
        throw new Error('accepted')
      } catch (e) {
        expect(e).toBeInstanceOf(ApiError)
        expect((e as ApiError).apiCause).toMatchObject({ kind: 'field', field, reason })
      }
    })
  }
})
