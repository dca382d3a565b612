// The cluster check of /health-checks and the `GET /cluster` answer from a cluster node's read view
// (http/http-cluster.ts): healthy only while the log is live and etcd answered; a stale node says why; a node that is
// down shows the revision it last registered and how far behind it is; joined records and live keys are both nodes.
import { describe, expect, it } from 'bun:test'
import { clusterStatus, clusterVerdict, type ClusterView, type LiveNode } from '../../../src/http/http-cluster.ts'

function view(over: Partial<ClusterView> & { liveNodes?: LiveNode[]; online?: string[] } = {}): ClusterView {
  const live = new Map((over.liveNodes ?? []).map((n) => [n.name, n]))
  return {
    nodeName: 'node-a',
    clusterId: 'c-1',
    state: () => 'live',
    staleDetail: () => '',
    appliedRevision: () => 40,
    lagRevisions: () => 2,
    etcd: () => ({ reachable: true, error: '' }),
    live: () => live,
    isOnline: (name) => (over.online ?? ['node-a']).includes(name),
    endpointStatus: async () => [{ endpoint: 'http://127.0.0.1:1', ok: true }],
    registeredRevisions: async () => new Map([['node-c', 30]]),
    digest: async () => ({ revision: 40, digest: 'ab', records: 3 }),
    ...over,
  }
}

describe('clusterVerdict', () => {
  it('is healthy while the log is live and etcd answered, with the node, revision, lag and etcd in its details', () => {
    expect(clusterVerdict(view())).toEqual({ healthy: true, details: 'node node-a, applied revision 40, 2 revisions behind, etcd reachable' })
  })

  it('is unhealthy when etcd did not answer the last heartbeat, saying what it answered', () => {
    const v = clusterVerdict(view({ etcd: () => ({ reachable: false, error: 'every endpoint failed' }) }))
    expect(v.healthy).toBe(false)
    expect(v.details).toContain('etcd unreachable: every endpoint failed')
  })

  it('is unhealthy on a stale node with the stale detail, and on a log that is not live', () => {
    const stale = clusterVerdict(view({ state: () => 'stale', staleDetail: () => 'etcd compacted it at revision 90: restore a newer backup' }))
    expect(stale).toEqual({ healthy: false, details: 'node node-a is stale: etcd compacted it at revision 90: restore a newer backup' })
    const stopped = clusterVerdict(view({ state: () => 'stopped' }))
    expect(stopped.healthy).toBe(false)
    expect(stopped.details).toStartWith('the log is stopped')
  })
})

describe('clusterStatus', () => {
  const records = [
    { id: 'node-a', apiAddresses: { 'edge-client': [{ url: 'https://a:1280/edge/client/v1' }] } },
    { id: 'node-c', apiAddresses: { 'edge-client': [{ url: 'https://c:1280/edge/client/v1' }] } },
  ]

  it('shows every joined or live node: this one from its log, a live one from its key, a down one from its registered revision', async () => {
    const s = await clusterStatus(
      view({
        online: ['node-a', 'node-b'],
        liveNodes: [
          { name: 'node-a', revision: 39, lagRevisions: 0, apiUrl: 'https://a:1280' },
          { name: 'node-b', revision: 41, lagRevisions: 1, apiUrl: 'https://b:1280' },
        ],
      }),
      records,
    )
    expect(s.nodes).toEqual([
      { name: 'node-a', revision: 40, lagRevisions: 2, isOnline: true, apiUrl: 'https://a:1280' },
      { name: 'node-b', revision: 41, lagRevisions: 1, isOnline: true, apiUrl: 'https://b:1280' },
      // head = 40 applied + 2 behind
      { name: 'node-c', revision: 30, lagRevisions: 12, isOnline: false, apiUrl: 'https://c:1280' },
    ])
    expect(s).toMatchObject({ nodeName: 'node-a', clusterId: 'c-1', state: 'live', appliedRevision: 40, lagRevisions: 2 })
    expect(s.etcd).toEqual({ reachable: true, error: '', endpoints: [{ endpoint: 'http://127.0.0.1:1', ok: true }] })
    expect(s.digest).toEqual({ revision: 40, digest: 'ab', records: 3 })
    expect('staleDetail' in s).toBe(false)
  })

  it('shows a live key whose node is no longer vouched for as offline, and a node never registered with no revision', async () => {
    const s = await clusterStatus(
      view({ online: ['node-a'], liveNodes: [{ name: 'node-b', revision: 41, lagRevisions: 0, apiUrl: 'https://b:1280' }], registeredRevisions: async () => new Map() }),
      records,
    )
    expect(s.nodes.find((n) => n.name === 'node-b')).toEqual({ name: 'node-b', revision: null, lagRevisions: null, isOnline: false, apiUrl: 'https://b:1280' })
    expect(s.nodes.find((n) => n.name === 'node-c')).toMatchObject({ revision: null, isOnline: false })
  })

  it('says why a stale node is stale', async () => {
    const s = await clusterStatus(view({ state: () => 'stale', staleDetail: () => 'compacted' }), [])
    expect(s).toMatchObject({ state: 'stale', staleDetail: 'compacted' })
    expect(s.nodes.map((n) => n.name)).toEqual(['node-a'])
  })
})
