// The identity actor's revocations (actors/identity/identity-revocation-apply.ts) over a real LMDB store: stored in
// one commit with the change that makes them (disable, lockout, delete, authenticator delete), replaced with a new
// cut-off, refused whole when an admin's request fails its checks, announced as `revocation.created`, pruned once
// expired, and loaded again at start.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store, type WriteOp } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startIdentityActor, type IdentityActor } from '../../../src/actors/identity/identity-actor.ts'
import type { IdentityEvent } from '../../../src/actors/identity/identity-messages.ts'
import { PRUNE_BATCH } from '../../../src/actors/identity/identity-revocation-apply.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }
const REFRESH_MS = 3_600_000
const LIFETIME = REFRESH_MS + 60_000
const UUID_A = '0b7e1c2a-4f3d-4e5a-9b8c-7d6e5f4a3b2c'

let dir: string
let store: Store
let clock: FakeClock
let bus: EventBus
let identities: IdentityActor
/** The sub-dbs each commit wrote, in order. */
let commits: string[][]

const start = () => {
  const counting: Store = {
    ...store,
    commit: (ops: readonly WriteOp[]) => {
      commits.push([...new Set(ops.map((o) => o.db))].sort())
      return store.commit(ops)
    },
  }
  const deps: ActorSystemDeps = { store: counting, bus, clock, cloneMessages: true, failStop: (e) => { throw e } }
  identities = startIdentityActor(counting, deps, undefined, undefined, { refreshTokenMs: REFRESH_MS })
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-revocations-'))
  store = await openStore(dir)
  clock = new FakeClock(1_767_225_600_000)
  bus = new EventBus()
  commits = []
  start()
})
afterEach(async () => {
  await identities.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const createIdentity = async (name: string) =>
  (await identities.ask({ type: 'identity.create', input: { name, typeId: 'User', isAdmin: false }, updb: { username: name, passwordHash: 'h' }, change })).id
const stored = (id: string) => store.db('revocations').get(id)
const sec = (ms: number) => Math.floor(ms / 1000)

describe('revocation.create', () => {
  it('stores the revocations in one commit, each created now with the default lifetime, and announces them', async () => {
    const seen: IdentityEvent[] = []
    bus.subscribe<IdentityEvent>('revocation.created', (e) => seen.push(e))
    const reply = await identities.ask({
      type: 'revocation.create',
      revocations: [{ id: 'jti-1', type: 'JTI' }, { id: 'asid-1', type: 'API_SESSION', expiresAt: clock.now() + 5 }],
      change,
    })
    expect(reply).toEqual({ ids: ['jti-1', 'asid-1'] })
    expect(commits).toEqual([['revocations']])
    const now = clock.now()
    expect(identities.snapshot().revocation('jti-1')).toEqual({ id: 'jti-1', type: 'JTI', createdAt: now, updatedAt: now, expiresAt: now + LIFETIME, tags: {} })
    expect(stored('asid-1')).toMatchObject({ type: 'API_SESSION', expiresAt: now + 5 })
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ type: 'revocation.created', revocations: [{ id: 'jti-1' }, { id: 'asid-1' }] })
  })

  it('replaces a revocation of the same id: a new createdAt moves the identity cut-off', async () => {
    const id = await createIdentity('alice')
    await identities.ask({ type: 'revocation.create', revocations: [{ id, type: 'IDENTITY' }], change })
    const issuedBetween = sec(clock.now()) + 10
    expect(identities.snapshot().isTokenRevoked({ sub: id, iat: issuedBetween }, clock.now())).toBe(false)
    clock.advance(20_000)
    await identities.ask({ type: 'revocation.create', revocations: [{ id, type: 'IDENTITY' }], change })
    expect(identities.snapshot().isTokenRevoked({ sub: id, iat: issuedBetween }, clock.now())).toBe(true)
    expect(stored(id)).toMatchObject({ createdAt: clock.now() })
    expect([...identities.snapshot().revocations()].map((r) => r.id)).toEqual([id])
  })

  it('checks an admin\'s request before anything is stored: one bad revocation refuses them all', async () => {
    const ask = identities.ask({
      type: 'revocation.create',
      revocations: [{ id: UUID_A, type: 'JTI' }, { id: 'ghost', type: 'IDENTITY' }],
      validate: true,
      change,
    })
    await expect(ask).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect(identities.snapshot().revocation(UUID_A)).toBeUndefined()
    expect(commits).toEqual([])
    // without `validate` (the controller's own revocations) the same ids are taken
    await identities.ask({ type: 'revocation.create', revocations: [{ id: 'ghost', type: 'IDENTITY' }, { id: 'not-a-uuid', type: 'JTI' }], change })
    expect(identities.snapshot().revocation('ghost')?.type).toBe('IDENTITY')
  })
})

describe('the revocations an identity change makes, in the same commit', () => {
  it('disable, lockout, authenticator delete and identity delete each write the identity and its revocation together', async () => {
    const id = await createIdentity('bob')
    const authenticatorId = [...identities.snapshot().authenticatorsOf(id)][0].id
    const iatBefore = sec(clock.now())
    commits = []
    await identities.ask({ type: 'identity.disable', id, durationMinutes: 0, change })
    expect(commits.pop()).toEqual(['identities', 'revocations'])
    expect(identities.snapshot().isTokenRevoked({ sub: id, iat: iatBefore }, clock.now())).toBe(true)
    await identities.ask({ type: 'identity.enable', id, change })

    await identities.ask({ type: 'authPolicy.update', id: 'default', input: { primary: { updb: { maxAttempts: 1 } } }, replace: false, change })
    clock.advance(2_000)
    commits = []
    expect(await identities.ask({ type: 'identity.recordAuthFailure', id, change })).toEqual({ disabled: true })
    expect(commits.pop()).toEqual(['identities', 'revocations'])
    expect(stored(id)).toMatchObject({ type: 'IDENTITY', createdAt: clock.now() })

    clock.advance(2_000)
    await identities.ask({ type: 'authenticator.delete', id: authenticatorId, change })
    expect(commits.pop()).toEqual(['authenticators', 'revocations'])
    expect(stored(id)).toMatchObject({ createdAt: clock.now() })

    clock.advance(2_000)
    await identities.ask({ type: 'identity.delete', id, change })
    expect(commits.pop()).toContain('revocations')
    expect(identities.snapshot().identity(id)).toBeUndefined()
    expect(stored(id)).toMatchObject({ type: 'IDENTITY', createdAt: clock.now(), expiresAt: clock.now() + LIFETIME })
  })
})

describe('revocation.prune and the start-up load', () => {
  it('removes only the expired ones; the rest are loaded again at start', async () => {
    await identities.ask({ type: 'revocation.create', revocations: [{ id: 'short', type: 'JTI', expiresAt: clock.now() + 1_000 }, { id: 'long', type: 'JTI' }], change })
    expect(await identities.ask({ type: 'revocation.prune' })).toEqual({ removed: 0 })
    clock.advance(1_000)
    // expired: no longer revokes, still stored until pruned
    expect(identities.snapshot().isTokenRevoked({ jti: 'short', sub: 's', iat: 0 }, clock.now())).toBe(false)
    expect(identities.snapshot().revocation('short')).toBeDefined()
    expect(await identities.ask({ type: 'revocation.prune' })).toEqual({ removed: 1 })
    expect(stored('short')).toBeUndefined()
    await identities.stop()
    start()
    expect([...identities.snapshot().revocations()].map((r) => r.id)).toEqual(['long'])
    expect(identities.snapshot().isTokenRevoked({ jti: 'long', sub: 's', iat: 0 }, clock.now())).toBe(true)
  })

  it('removes at most PRUNE_BATCH a message', async () => {
    const many = Array.from({ length: PRUNE_BATCH + 5 }, (_, i) => ({ id: `j-${i}`, type: 'JTI' as const, expiresAt: clock.now() + 1 }))
    await identities.ask({ type: 'revocation.create', revocations: many, change })
    clock.advance(1)
    expect(await identities.ask({ type: 'revocation.prune' })).toEqual({ removed: PRUNE_BATCH })
    expect(await identities.ask({ type: 'revocation.prune' })).toEqual({ removed: 5 })
  })
})

describe('integrity.repair revocation.remove', () => {
  it('removes a stored revocation of an unknown type, and leaves a well-formed one', async () => {
    await identities.ask({ type: 'revocation.create', revocations: [{ id: 'good', type: 'JTI' }], change })
    await store.db('revocations').put('bad', { id: 'bad', type: 'TOKEN', createdAt: 1, updatedAt: 1, expiresAt: clock.now() + 60_000, tags: {} })
    await identities.stop()
    start()
    const repaired = await identities.ask({
      type: 'integrity.repair',
      repairs: [{ kind: 'revocation.remove', id: 'bad' }, { kind: 'revocation.remove', id: 'good' }, { kind: 'revocation.remove', id: 'never-stored' }],
      change,
    })
    expect(repaired).toBe(1)
    expect(stored('bad')).toBeUndefined()
    expect(identities.snapshot().revocation('bad')).toBeUndefined()
    expect(stored('good')).toBeDefined()
  })
})
