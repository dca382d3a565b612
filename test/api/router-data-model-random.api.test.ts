// The router data model under random writes of every kind it carries (identities with role attributes, locks and
// overrides, services with configs, config types, service policies of both types and semantics, posture checks,
// edge routers, revocations): after every round, the model a router keeps from the change sets it was pushed must
// equal (1) a fresh full state and (2) what the Management API says the network is: the records, and each service
// policy's identities, services and posture checks. No change set may be out of order or leave a gap.
// @see router-control-plane.md §3.2, §9 trap 10
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ContentType } from '../../src/control/pb/edge_ctrl_pb.ts'
import { expectStatus, startTestServer, type TestServer } from '../support/harness.ts'
import { enrollRouter, RouterEmulator, type RouterIdentity } from '../support/router-emulator.ts'
import { ReceivedModel, subscribe } from '../support/router-data-model.ts'
import { rng } from '../support/rng.ts'

const ATTRS = ['red', 'green', 'blue']
const r = rng(20261202)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
const attrs = () => ATTRS.filter(() => r() < 0.45)

let srv: TestServer
let follower: RouterEmulator
let checker: RouterEmulator
const model = new ReceivedModel()
let fed = 0
const live = { identity: [] as string[], service: [] as string[], policy: [] as string[], check: [] as string[], router: [] as string[], config: [] as string[] }
let n = 0

beforeAll(async () => {
  srv = await startTestServer({ ctrlListen: { host: '127.0.0.1', port: 0 } })
  const connect = (x: RouterIdentity) =>
    RouterEmulator.connect({ port: srv.server.control.port!, caPem: srv.server.pki.caBundlePem, tls: { cert: x.cert, key: x.key }, routerId: x.id })
  follower = await connect(await enrollRouter(srv, 'rdm-follower'))
  checker = await connect(await enrollRouter(srv, 'rdm-checker'))
  model.subscriptionId = 'follow'
  subscribe(follower, { subscriptionId: 'follow' })
  await follower.waitFor((f) => f.contentType === ContentType.DataStateType, 5_000, 'the first full state')
})
afterAll(async () => {
  follower.close()
  checker.close()
  await srv.stop()
})

const name = (p: string) => `${p}-${++n}`

function roles(ids: string[]): string[] {
  const x = r()
  if (x < 0.1) return ['#all']
  if (x < 0.25 && ids.length > 0) return [`@${pick(ids)}`]
  return attrs().map((a) => `#${a}`)
}

async function step(): Promise<void> {
  const x = Math.floor(r() * 16)
  const m = srv.mgmt
  switch (x) {
    case 0:
    case 1:
      live.identity.push(await srv.create('/identities', { name: name('id'), type: 'User', isAdmin: false, roleAttributes: attrs(), defaultHostingCost: Math.floor(r() * 100) }))
      return
    case 2:
      if (live.identity.length) expectStatus(await m.patch(`/identities/${pick(live.identity)}`, { roleAttributes: attrs(), appData: { n: String(n) } }), 200)
      return
    case 3:
      if (live.identity.length > 2) expectStatus(await m.del(`/identities/${live.identity.splice(Math.floor(r() * live.identity.length), 1)[0]}`), 200)
      return
    case 4:
    case 5: {
      const configs = live.config.length && r() < 0.5 ? [pick(live.config)] : []
      live.service.push(await srv.create('/services', { name: name('svc'), roleAttributes: attrs(), encryptionRequired: r() < 0.5, configs }))
      return
    }
    case 6:
      if (live.service.length) expectStatus(await m.patch(`/services/${pick(live.service)}`, { roleAttributes: attrs(), encryptionRequired: r() < 0.5 }), 200)
      return
    case 7:
      if (live.service.length > 2) expectStatus(await m.del(`/services/${live.service.splice(Math.floor(r() * live.service.length), 1)[0]}`), 200)
      return
    case 8:
    case 9:
      live.policy.push(
        await srv.create('/service-policies', {
          name: name('sp'),
          type: pick(['Dial', 'Bind']),
          semantic: pick(['AnyOf', 'AllOf']),
          identityRoles: roles(live.identity),
          serviceRoles: roles(live.service),
          postureCheckRoles: r() < 0.5 ? roles(live.check) : [],
        }),
      )
      return
    case 10:
      if (live.policy.length) {
        expectStatus(await m.patch(`/service-policies/${pick(live.policy)}`, { identityRoles: roles(live.identity), serviceRoles: roles(live.service) }), 200)
      }
      return
    case 11:
      if (live.policy.length > 1) expectStatus(await m.del(`/service-policies/${live.policy.splice(Math.floor(r() * live.policy.length), 1)[0]}`), 200)
      return
    case 12:
      live.check.push(
        r() < 0.5
          ? await srv.create('/posture-checks', { name: name('pc'), typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:0' + (n % 10)], roleAttributes: attrs() })
          : await srv.create('/posture-checks', { name: name('pc'), typeId: 'OS', operatingSystems: [{ type: 'Linux', versions: ['>=5.0.0'] }], roleAttributes: attrs() }),
      )
      return
    case 13: {
      const type = await srv.create('/config-types', { name: name('ct'), schema: {} })
      live.config.push(await srv.create('/configs', { name: name('cfg'), configTypeId: type, data: { port: n } }))
      if (live.identity.length && live.service.length) {
        const svc = pick(live.service)
        expectStatus(await m.post(`/identities/${pick(live.identity)}/service-configs`, [{ serviceId: svc, configId: live.config.at(-1) }]), 200)
      }
      return
    }
    case 14:
      if (live.identity.length) expectStatus(await m.post(`/identities/${pick(live.identity)}/disable`, { durationMinutes: r() < 0.5 ? 0 : 5 }), 200)
      return
    case 15: {
      if (r() < 0.5 || live.router.length === 0) live.router.push(await srv.create('/edge-routers', { name: name('er'), roleAttributes: attrs() }))
      else expectStatus(await m.patch(`/edge-routers/${pick(live.router)}`, { disabled: r() < 0.5 }), 200)
      return
    }
  }
}

/** The follower's model, brought up to the server's latest change set. */
async function caughtUp(): Promise<void> {
  const target = srv.server.control.dataModel!.index()
  const end = performance.now() + 5_000
  for (;;) {
    for (const f of follower.received.slice(fed)) model.take(f)
    fed = follower.received.length
    if (model.index >= target) return
    if (performance.now() > end) throw new Error(`the follower holds index ${model.index}, the controller ${target}`)
    await Bun.sleep(5)
  }
}

async function freshFullState(id: string): Promise<ReceivedModel> {
  const fresh = new ReceivedModel()
  fresh.subscriptionId = id
  const seen = new Set(checker.received)
  subscribe(checker, { subscriptionId: id })
  const f = await checker.waitFor((x) => !seen.has(x) && x.contentType === ContentType.DataStateType, 5_000, 'a full state')
  fresh.take(f)
  return fresh
}

/** What the Management API lists: ids of every collection, and each service policy's members. */
async function truth(): Promise<{ ids: Record<string, string[]>; members: Record<string, { identity: string[]; service: string[]; postureCheck: string[] }> }> {
  const list = async (path: string) => {
    const res = await srv.mgmt.get(`${path}${path.includes('?') ? '&' : '?'}limit=500`)
    expectStatus(res, 200)
    return (res.body.data as { id: string }[]).map((e) => e.id).sort()
  }
  const ids = {
    identity: await list('/identities'),
    service: await list('/services'),
    servicePolicy: await list('/service-policies'),
    postureCheck: await list('/posture-checks'),
    router: await list('/routers'),
  }
  const members: Record<string, { identity: string[]; service: string[]; postureCheck: string[] }> = {}
  for (const p of ids.servicePolicy) {
    members[p] = {
      identity: await list(`/service-policies/${p}/identities`),
      service: await list(`/service-policies/${p}/services`),
      postureCheck: await list(`/service-policies/${p}/posture-checks`),
    }
  }
  return { ids, members }
}

describe('the router data model under random writes', () => {
  for (let round = 1; round <= 8; round++) {
    it(`case=round ${round}: the pushed model equals a fresh full state and the Management API`, async () => {
      for (let i = 0; i < 15; i++) await step()
      await caughtUp()
      const fresh = await freshFullState(`check-${round}`)
      expect(model.dump()).toEqual(fresh.dump())
      const t = await truth()
      const dump = model.dump() as Record<string, Record<string, unknown>> & { memberships: Record<string, unknown> }
      for (const kind of ['identity', 'service', 'servicePolicy', 'postureCheck', 'router'] as const) {
        expect(Object.keys(dump[kind] ?? {}).sort()).toEqual(t.ids[kind])
      }
      expect(dump.memberships).toEqual(t.members)
    }, 60_000)
  }
})
