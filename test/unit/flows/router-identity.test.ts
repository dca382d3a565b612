// The router-identity flow (src/flows/routers/router-identity.ts): a tunneler-enabled edge router and its identity
// live in two actors; its failure story is tested here by stopping after the graph's write (a crash between the two
// writes), restarting and reconciling as start-up does.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import {
  createRouter,
  deleteRouter,
  reconcileRouterIdentities,
  routerIdentityDrift,
  updateRouter,
} from '../../../src/flows/routers/router-identity.ts'
import { change, openCore, type Core } from './flows-support.ts'
import { codeOfAsync as codeOf } from '../../support/api-error-code.ts'

let core: Core
beforeEach(async () => {
  core = await openCore()
})
afterEach(async () => {
  await core.close()
})

/** The flow's deps: the core plus a router enrollment maker (unsigned: these tests never redeem it). */
const withEnrollments = (c: Core) => ({
  ...c,
  routerEnrollments: { newEnrollment: async () => ({ token: crypto.randomUUID(), jwt: 'unsigned', expiresAt: c.clock.now() + 60_000 }) },
})
const drift = () => routerIdentityDrift(core.graph.snapshot().routers, core.identities.snapshot())
const identity = (id: string) => core.identities.snapshot().identity(id)
/** The graph's write alone: what is on disk when the process dies before the identity follows. */
const graphOnly = (msg: Parameters<Core['graph']['ask']>[0]) => core.graph.ask(msg)

describe('the router-identity flow', () => {
  it('gives a tunneler-enabled edge router an identity with its id and name, marked as the router\'s', async () => {
    const { id } = await createRouter(withEnrollments(core), { name: 'er-1', isTunnelerEnabled: true }, true, change)
    expect(identity(id)).toMatchObject({ id, name: 'er-1', typeId: 'Router', isAdmin: false, isRouterIdentity: true })
    await updateRouter(core, id, { name: 'er-1b' }, false, change)
    expect(identity(id)?.name).toBe('er-1b')
    await updateRouter(core, id, { isTunnelerEnabled: false }, false, change)
    expect(identity(id)).toBeUndefined()
    expect(drift()).toEqual([])
  })

  it('refuses an admin delete of a router identity; deleting the router removes it', async () => {
    const { id } = await createRouter(withEnrollments(core), { name: 'er-guard', isTunnelerEnabled: true }, true, change)
    expect(await codeOf(core.identities.ask({ type: 'identity.delete', id, change }))).toBe('400 ENTITY_CAN_NOT_BE_DELETED')
    expect(identity(id)).toBeDefined()
    await deleteRouter(core, id, change)
    expect(identity(id)).toBeUndefined()
  })

  it('reserves a tunneler router\'s name for its identity while the identity has not followed yet', async () => {
    const { id } = (await graphOnly({ type: 'router.create', input: { name: 'er-race', isTunnelerEnabled: true }, isEdge: true, change })) as { id: string }
    // an identity request that slipped in between the two writes is refused, so the second write cannot be
    expect(await codeOf(core.identities.ask({ type: 'identity.create', input: { name: 'er-race' }, change }))).toBe('400 COULD_NOT_VALIDATE')
    const other = await core.identities.ask({ type: 'identity.create', input: { name: 'someone' }, change })
    expect(await codeOf(core.identities.ask({ type: 'identity.update', id: other.id, input: { name: 'er-race' }, replace: false, change }))).toBe(
      '400 COULD_NOT_VALIDATE',
    )
    expect(drift()).toEqual([{ routerId: id, name: 'er-race', present: true }])
    await reconcileRouterIdentities(core, change)
    expect(identity(id)?.name).toBe('er-race')
  })
})

describe('a crash between the graph\'s write and the identity\'s, then a restart', () => {
  it('a created tunneler router gets its identity', async () => {
    const { id } = (await graphOnly({ type: 'router.create', input: { name: 'er-c', isTunnelerEnabled: true }, isEdge: true, change })) as { id: string }
    await core.restart()
    expect(drift()).toEqual([{ routerId: id, name: 'er-c', present: true }])
    expect(await reconcileRouterIdentities(core, change)).toHaveLength(1)
    expect(identity(id)).toMatchObject({ name: 'er-c', typeId: 'Router', isRouterIdentity: true })
    expect(drift()).toEqual([])
  })

  it('a renamed router renames its identity', async () => {
    const { id } = await createRouter(withEnrollments(core), { name: 'er-r', isTunnelerEnabled: true }, true, change)
    await graphOnly({ type: 'router.update', id, input: { name: 'er-r2' }, replace: false, change })
    await core.restart()
    await reconcileRouterIdentities(core, change)
    expect(identity(id)?.name).toBe('er-r2')
    expect(drift()).toEqual([])
  })

  it('a deleted router, or one whose tunneling was turned off, loses its identity; other Router-typed identities stay', async () => {
    const a = await createRouter(withEnrollments(core), { name: 'er-d', isTunnelerEnabled: true }, true, change)
    const b = await createRouter(withEnrollments(core), { name: 'er-off', isTunnelerEnabled: true }, true, change)
    const manual = await core.identities.ask({ type: 'identity.create', input: { name: 'typed-router', typeId: 'Router' }, change })
    await graphOnly({ type: 'router.delete', id: a.id, change })
    await graphOnly({ type: 'router.update', id: b.id, input: { isTunnelerEnabled: false }, replace: false, change })
    await core.restart()
    expect(drift()).toHaveLength(2)
    await reconcileRouterIdentities(core, change)
    expect(identity(a.id)).toBeUndefined()
    expect(identity(b.id)).toBeUndefined()
    expect(identity(manual.id)?.name).toBe('typed-router')
    expect(drift()).toEqual([])
  })

  it('a reconcile with nothing to do writes nothing', async () => {
    await createRouter(withEnrollments(core), { name: 'er-ok', isTunnelerEnabled: true }, true, change)
    await createRouter(withEnrollments(core), { name: 'fabric', isTunnelerEnabled: false }, false, change)
    await core.restart()
    expect(await reconcileRouterIdentities(core, change)).toEqual([])
  })
})
