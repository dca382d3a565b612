// Policy graph cold start: 10,000 services, 500 routers and 1,000 policies read back whole, with their indexes. Its
// speed is a benchmark figure (`bun run bench policy`, cold start), not an assertion here.
import { afterAll, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { openStore, type WriteOp } from '../../../src/store/store-env.ts'
import { EventBus } from '../../../src/actors/runtime/event-bus.ts'
import { startPolicyGraphActor } from '../../../src/actors/policy-graph/policy-graph-actor.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-graph-load-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('case=loads 10,000 services, 500 routers and 1,000 policies quickly', async () => {
  const store = await openStore(dir)
  const ops: WriteOp[] = []
  const base = { tags: {}, createdAt: 1, updatedAt: 1 }
  for (let i = 0; i < 10_000; i++) {
    const id = `s${String(i).padStart(5, '0')}`
    ops.push({ db: 'services', key: id, value: { ...base, id, name: `svc-${i}`, roleAttributes: [`g${i % 50}`], configs: [], encryptionRequired: true, terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 0 } })
  }
  for (let i = 0; i < 500; i++) {
    const id = `r${String(i).padStart(4, '0')}`
    ops.push({ db: 'routers', key: id, value: { ...base, id, name: `er-${i}`, isEdge: true, roleAttributes: ['all'], cost: 0, noTraversal: false, disabled: false, isTunnelerEnabled: false, appData: null, fingerprint: null, isVerified: false } })
  }
  for (let i = 0; i < 1_000; i++) {
    const id = `p${String(i).padStart(4, '0')}`
    ops.push({ db: 'service-policies', key: id, value: { ...base, id, name: `sp-${i}`, type: 'Dial', semantic: 'AnyOf', identityRoles: ['#all'], serviceRoles: [`@s${String(i).padStart(5, '0')}`, `#g${i % 50}`], postureCheckRoles: [] } })
  }
  await store.commit(ops)
  await store.close()

  const reopened = await openStore(dir)
  const actor = await startPolicyGraphActor(reopened, { store: reopened, bus: new EventBus(), clock: new FakeClock(0), failStop: () => {} }, {
    identityExists: () => true,
    identityNameTaken: () => false,
  })
  const g = actor.snapshot()
  expect([g.services.size, g.edgeRouters.size, g.servicePolicies.size]).toEqual([10_000, 500, 1_000])
  expect(g.services.idsWithRole('g7').size).toBe(200)
  expect(g.policiesReferencing('service', 's00042')).toEqual([{ kind: 'service-policy', id: 'p0042' }])
  await actor.stop()
  await reopened.close()
})
