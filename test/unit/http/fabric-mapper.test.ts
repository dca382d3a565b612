// The fabric API's views of stored records (issue 31): services with the fabric fields only, routers with what this
// node's control plane knows of them (listeners and version only while connected), terminators in the fabric's
// spelling, and the links of each as the real controller's fabric link factories make them. Each view is checked
// against the official fabric document's detail envelope. The filter rows of links and circuits hold every symbol.
// @see ziti controller/internal/routes/fabric_*_api_model.go, fabric_entity_api_model.go
import { describe, expect, it } from 'bun:test'
import { OFFLINE, SYNC_STATUS, type RouterPresence } from '../../../src/domain/router/router-presence.ts'
import type { Router, Service, Terminator } from '../../../src/domain/policy/policy-types.ts'
import { toFabricRouterDetail, toFabricServiceDetail, toFabricTerminatorDetail } from '../../../src/http/mappers/fabric-mapper.ts'
import { CIRCUIT_SYMBOLS, LINK_SYMBOLS, toCircuitRow, toLinkRow } from '../../../src/http/mappers/fabric-link-mapper.ts'
import { checkAnswer } from '../../support/spec-check.ts'

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5)
const detail = (path: string, data: unknown) =>
  checkAnswer({ method: 'GET', url: `/fabric/v1${path}`, status: 200, contentType: 'application/json', text: JSON.stringify({ data, meta: {} }) })

const router: Router = {
  id: 'r1', name: 'edge-1', isEdge: true, roleAttributes: ['a'], cost: 5, noTraversal: true, disabled: false, isTunnelerEnabled: true, appData: { x: 'y' },
  fingerprint: 'ab'.repeat(20), isVerified: true, enrollment: null, createdAt: T0, updatedAt: T0, tags: { k: 'v' },
}

const online: RouterPresence = {
  isOnline: true, hostname: 'h', supportedProtocols: { tls: 'tls://h:3022' }, syncStatus: SYNC_STATUS.Done,
  versionInfo: { version: 'v1.2.3', revision: 'abc', buildDate: '2026-01-01', os: 'linux', arch: 'amd64' }, capabilities: [],
  ctrlChanListeners: { 'tls:h:6262': ['default'] },
  linkListeners: [{ address: 'tls:h:4023', protocol: 'tls', groups: ['default'] }, { address: 'dtls:h:4024', protocol: 'dtls', groups: [] }],
}

describe('toFabricRouterDetail', () => {
  it('shows a connected router with its link listeners (address and protocol) and version, and no edge fields', () => {
    const v = toFabricRouterDetail(router, online)
    expect(v).toEqual({
      id: 'r1', createdAt: '2026-01-02T03:04:05.000Z', updatedAt: '2026-01-02T03:04:05.000Z', tags: { k: 'v' },
      _links: { self: { href: './routers/r1' }, terminators: { href: './routers/r1/terminators' } },
      name: 'edge-1', fingerprint: 'ab'.repeat(20), connected: true, cost: 5, noTraversal: true, disabled: false,
      listenerAddresses: [{ address: 'tls:h:4023', protocol: 'tls' }, { address: 'dtls:h:4024', protocol: 'dtls' }],
      versionInfo: { version: 'v1.2.3', revision: 'abc', buildDate: '2026-01-01', os: 'linux', arch: 'amd64' },
      ctrlChanListeners: { 'tls:h:6262': ['default'] },
    })
    expect(detail('/routers/r1', v).kind).toBe('checked')
  })

  it('shows an offline router without listeners or version, and "" for a router without a certificate', () => {
    const v = toFabricRouterDetail({ ...router, fingerprint: null }, { ...OFFLINE, capabilities: ['MULTICHANNEL'] })
    expect(v).toMatchObject({ connected: false, fingerprint: '', ctrlChanListeners: {} })
    expect('listenerAddresses' in v).toBe(false)
    expect('versionInfo' in v).toBe(false)
    expect(detail('/routers/r1', v).kind).toBe('checked')
  })
})

describe('toFabricServiceDetail and toFabricTerminatorDetail', () => {
  it('a service: name, strategy and idle time beside baseEntity, linking its terminators', () => {
    const s: Service = {
      id: 's1', name: 'svc', roleAttributes: ['x'], configs: ['c'], encryptionRequired: true, terminatorStrategy: 'weighted', maxIdleTimeMillis: 30_000,
      createdAt: T0, updatedAt: T0, tags: {},
    }
    const v = toFabricServiceDetail(s)
    expect(v).toEqual({
      id: 's1', createdAt: '2026-01-02T03:04:05.000Z', updatedAt: '2026-01-02T03:04:05.000Z', tags: {},
      _links: { self: { href: './services/s1' }, terminators: { href: './services/s1/terminators' } },
      name: 'svc', terminatorStrategy: 'weighted', maxIdleTimeMillis: 30_000,
    })
    expect(detail('/services/s1', v).kind).toBe('checked')
  })

  it('a terminator: instanceId for the stored instance id, the hosting identity, references with fabric links', () => {
    const t: Terminator = {
      id: 't1', serviceId: 's1', routerId: 'r1', binding: 'edge', address: 't1', identity: 'inst', identitySecret: 'AQI=', cost: 4, precedence: 'failed',
      hostId: 'host-ident', isSystem: true, peerData: {}, sourceCtrl: '', createdAt: T0, updatedAt: T0, tags: {},
    }
    const v = toFabricTerminatorDetail(t, { service: 'svc', router: 'edge-1' })
    expect(v).toMatchObject({ instanceId: 'inst', hostId: 'host-ident', cost: 4, dynamicCost: 4, precedence: 'failed', serviceId: 's1', routerId: 'r1' })
    expect(v._links).toEqual({ self: { href: './terminators/t1' } })
    expect(v.service).toEqual({ entity: 'services', id: 's1', name: 'svc', _links: { self: { href: './services/s1' }, terminators: { href: './services/s1/terminators' } } })
    expect(v.router).toEqual({ entity: 'routers', id: 'r1', name: 'edge-1', _links: { self: { href: './routers/r1' }, terminators: { href: './routers/r1/terminators' } } })
    expect('identitySecret' in v || 'instanceSecret' in v).toBe(false)
    expect(detail('/terminators/t1', v).kind).toBe('checked')
  })
})

describe('filter rows of links and circuits', () => {
  it('hold every symbol the lists declare, and nothing else', () => {
    const l = toLinkRow({
      id: 'l', srcRouterId: 'a', dstRouterId: 'b', protocol: 'tls', dialAddress: 'd', iteration: 2, mode: 'Failed', down: true,
      staticCost: 3, srcLatencyNs: 4, dstLatencyNs: 5, cost: 6, createdAt: T0, connections: [],
    })
    expect(Object.keys(l).sort()).toEqual(Object.keys(LINK_SYMBOLS).sort())
    expect(l).toMatchObject({ sourceRouter: 'a', destRouter: 'b', state: 'Failed', sourceLatency: 4, destLatency: 5 })
    const c = toCircuitRow({
      id: 'c', clientId: 'i', serviceId: 's', terminatorId: 't', path: { nodes: [], links: [], ingressId: '', egressId: '' }, tags: {}, createdAt: T0, updatedAt: T0 + 1,
    })
    expect(Object.keys(c).sort()).toEqual(Object.keys(CIRCUIT_SYMBOLS).sort())
    expect(c).toMatchObject({ service: 's', terminator: 't', createdAt: T0, updatedAt: T0 + 1 })
  })
})
