// The controllers actor's settings (actors/controllers/controllers-actor.ts) over a real LMDB store: global made once
// by the seed, overrides only of joined nodes, each write in one commit of `controller-settings`, a refusal writing
// nothing, the override removed with its node in the removal's commit, and everything loaded again at start.
import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type Store, type WriteOp } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import type { ActorSystemDeps, ChangeContext } from '../../../src/actors/runtime/actor-runtime.ts'
import { startControllersActor, type ControllersActor } from '../../../src/actors/controllers/controllers-actor.ts'

const change: ChangeContext = { author: 'test', source: 'rest' }
const SEED = { redirectUris: ['https://a.example/cb'], postLogoutUris: ['https://a.example/bye'] }

let dir: string
let store: Store
let clock: FakeClock
let controllers: ControllersActor
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
  const deps: ActorSystemDeps = { store: counting, bus: new EventBus(), clock, cloneMessages: true, failStop: (e) => { throw e } }
  controllers = startControllersActor(counting, deps)
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-controllers-'))
  store = await openStore(dir)
  clock = new FakeClock(1_767_225_600_000)
  commits = []
  start()
})
afterEach(async () => {
  await controllers.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const join2 = () =>
  controllers.ask({
    type: 'controller.join',
    controller: { id: 'node-2', name: 'node-2', certPem: 'pem', fingerprint: 'ff', apiAddresses: {}, ctrlAddress: null, tags: {} },
    change,
  })

describe('controller settings in the controllers actor', () => {
  it('the seed makes global once; a second seed changes nothing and writes nothing', async () => {
    expect(controllers.snapshot().effectiveSettings(undefined)).toBeUndefined()
    expect(await controllers.ask({ type: 'controllerSetting.seed', oidc: SEED, change })).toEqual({ created: true })
    expect(await controllers.ask({ type: 'controllerSetting.seed', oidc: { redirectUris: [], postLogoutUris: [] }, change })).toEqual({ created: false })
    expect(commits).toEqual([['controller-settings']])
    expect(controllers.snapshot().effectiveSettings(undefined)).toEqual({ oidc: SEED })
    expect(store.db('controller-settings').get('global')).toMatchObject({ id: 'global', oidc: SEED })
  })

  it('an override needs a joined node; a refused create writes nothing', async () => {
    await controllers.ask({ type: 'controllerSetting.seed', oidc: SEED, change })
    await expect(controllers.ask({ type: 'controllerSetting.create', controllerId: 'node-2', input: { oidc: { redirectUris: ['x'] } }, change })).rejects.toMatchObject({ code: 'COULD_NOT_VALIDATE' })
    expect(store.db('controller-settings').get('node-2')).toBeUndefined()
    await join2()
    await controllers.ask({ type: 'controllerSetting.create', controllerId: 'node-2', input: { oidc: { redirectUris: ['x'] } }, change })
    expect(controllers.snapshot().effectiveSettings('node-2')).toEqual({ oidc: { redirectUris: ['x'], postLogoutUris: SEED.postLogoutUris } })
    expect(controllers.snapshot().effectiveSettings('node-1')).toEqual({ oidc: SEED })
  })

  it('a removed node takes its override with it, in the same commit', async () => {
    await controllers.ask({ type: 'controllerSetting.seed', oidc: SEED, change })
    await join2()
    await controllers.ask({ type: 'controllerSetting.create', controllerId: 'node-2', input: { oidc: { redirectUris: ['x'] } }, change })
    commits = []
    await controllers.ask({ type: 'controller.remove', id: 'node-2', change })
    expect(commits).toEqual([['controller-settings', 'controllers']])
    expect(store.db('controller-settings').get('node-2')).toBeUndefined()
    expect(controllers.snapshot().settings.has('node-2')).toBe(false)
  })

  it('what was written is loaded again at start', async () => {
    await controllers.ask({ type: 'controllerSetting.seed', oidc: SEED, change })
    await join2()
    await controllers.ask({ type: 'controllerSetting.create', controllerId: 'node-2', input: { oidc: { postLogoutUris: [] } }, change })
    await controllers.ask({ type: 'controllerSetting.update', id: 'global', input: { tags: { k: 'v' } }, replace: false, change })
    const before = [...controllers.snapshot().settings.values()]
    await controllers.stop()
    start()
    expect([...controllers.snapshot().settings.values()]).toEqual(before)
    expect(controllers.snapshot().effectiveSettings('node-2')).toEqual({ oidc: { redirectUris: SEED.redirectUris, postLogoutUris: [] } })
  })
})
