// The etcd JSON-gateway client against a real 3-member etcd cluster (test/support/etcd.ts): create-if-absent and its
// safe retry, ranges, deletes, compaction, leases, status, watches (replay, failover after kill -9 of the member the
// watch used, compaction) and every endpoint being down. The tests share one cluster and run in order: a compaction is
// cluster-wide, so the tests after it only watch and read from revisions above it.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import {
  EtcdClient,
  EtcdCompactedError,
  type EtcdEvent,
  EtcdRequestError,
  EtcdUnavailableError,
} from '../../../src/cluster/etcd-client.ts'
import { type EtcdCluster, etcdAvailable, etcdSkipReason, startEtcdCluster } from '../../support/etcd.ts'

if (!etcdAvailable()) console.log(`skipping the etcd client tests: ${etcdSkipReason()}`)

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/** A loopback port nothing listens on (bound on port 0, then closed). */
async function closedPort(): Promise<number> {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

describe.skipIf(!etcdAvailable())('EtcdClient against a 3-member etcd', () => {
  let cluster: EtcdCluster
  let client: EtcdClient

  beforeAll(async () => {
    cluster = await startEtcdCluster({ members: 3 })
    client = new EtcdClient({ endpoints: cluster.endpoints })
  })

  afterAll(async () => {
    client?.close()
    await cluster?.stop()
  })

  it('creates a key once: a second putIfAbsent with another value answers created:false and the first revision', async () => {
    const first = await client.putIfAbsent('cmd/a/1', '{"op":"first"}')
    expect(first.created).toBe(true)
    const second = await client.putIfAbsent('cmd/a/1', '{"op":"second"}')
    expect(second).toEqual({ created: false, revision: first.revision })
    const kv = await client.get('cmd/a/1')
    expect(kv).toMatchObject({ key: 'cmd/a/1', value: '{"op":"first"}', version: 1, createRevision: first.revision })
  })

  it('answers created:true once for a submission whose first attempt was committed but timed out, without a second version', async () => {
    // an endpoint that passes the request on to a real member and never answers: the commit happens, the answer is lost
    const forwarded: string[] = []
    const blackHole = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      idleTimeout: 30,
      async fetch(req) {
        const url = new URL(req.url)
        forwarded.push(url.pathname)
        await fetch(`${cluster.endpoints[0]}${url.pathname}`, { method: 'POST', body: await req.text() })
        return new Promise<Response>(() => {})
      },
    })
    const retrying = new EtcdClient({ endpoints: [`http://127.0.0.1:${blackHole.port}`, cluster.endpoints[1]], timeoutMs: 500 })
    try {
      const before = await client.currentRevision()
      const result = await retrying.putIfAbsent('cmd/b/1', 'payload-b1')
      expect(forwarded).toEqual(['/v3/kv/txn'])
      expect(result.created).toBe(true)
      const kv = await client.get('cmd/b/1')
      expect(kv).toMatchObject({ value: 'payload-b1', version: 1, modRevision: result.revision })
      // the retried txn changed nothing: only the forwarded attempt wrote a revision
      expect(await client.currentRevision()).toBe(before + 1)
      // the client now starts with the endpoint that answered
      const again = await retrying.putIfAbsent('cmd/b/2', 'payload-b2')
      expect(again.created).toBe(true)
      expect(forwarded).toEqual(['/v3/kv/txn'])
    } finally {
      retrying.close()
      blackHole.stop(true)
    }
  })

  it('puts, reads a prefix in key order with limit and keysOnly, reads an old revision and deletes', async () => {
    const revs: number[] = []
    for (const k of ['r/c', 'r/a', 'r/b', 'r0', 'q']) revs.push((await client.put(k, `v:${k}`)).revision)
    expect(revs).toEqual([...revs].sort((a, b) => a - b))
    const all = await client.range('r/', { prefix: true })
    expect(all.kvs.map((kv) => kv.key)).toEqual(['r/a', 'r/b', 'r/c'])
    expect(all.kvs.map((kv) => kv.value)).toEqual(['v:r/a', 'v:r/b', 'v:r/c'])
    expect(all.more).toBe(false)
    expect(all.revision).toBeGreaterThanOrEqual(revs[4])
    const limited = await client.range('r/', { prefix: true, limit: 2, keysOnly: true })
    expect(limited.kvs.map((kv) => [kv.key, kv.value])).toEqual([
      ['r/a', ''],
      ['r/b', ''],
    ])
    expect(limited.more).toBe(true)
    const between = await client.range('r/b', { rangeEnd: 'r0' })
    expect(between.kvs.map((kv) => kv.key)).toEqual(['r/b', 'r/c'])
    expect(await client.get('r/none')).toBeUndefined()

    const overwritten = await client.put('r/a', 'v2')
    expect(await client.get('r/a')).toMatchObject({ value: 'v2', version: 2, modRevision: overwritten.revision, createRevision: revs[1] })
    const old = await client.range('r/a', { revision: revs[4] })
    expect(old.kvs[0]).toMatchObject({ value: 'v:r/a', version: 1 })

    const one = await client.deleteRange('r0')
    expect(one.deleted).toBe(1)
    // the range of the prefix r/: up to r0 ('0' follows '/')
    const gone = await client.deleteRange('r/', 'r0')
    expect(gone.deleted).toBe(3)
    expect(gone.revision).toBe(one.revision + 1)
    expect((await client.range('r/', { prefix: true })).kvs).toEqual([])
    expect(await client.deleteRange('r/none')).toMatchObject({ deleted: 0 })
  })

  it('turns etcd errors into thrown errors with their message', async () => {
    const current = await client.currentRevision()
    const err = await client.range('x', { revision: current + 1000 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EtcdRequestError)
    expect((err as EtcdRequestError).message).toContain('future revision')
    expect((err as EtcdRequestError).code).toBe(11)
  })

  it('replays a prefix from a revision in order, PUTs and DELETEs, one batch at a time', async () => {
    const start = (await client.put('w1/k0', '0')).revision
    for (let i = 1; i < 20; i++) await client.put(`w1/k${i}`, String(i))
    const del = await client.deleteRange('w1/k3')
    await client.put('elsewhere', 'not watched')
    // etcd's "0 = from now" cannot be resumed, so it is refused
    expect(() => client.watch('w1/', 0, { onEvents() {}, onCompacted() {} })).toThrow(TypeError)
    const seen: EtcdEvent[] = []
    let inHandler = 0
    let overlapped = false
    const watch = client.watch('w1/', start, {
      async onEvents(events) {
        if (inHandler++ > 0) overlapped = true
        await Bun.sleep(5)
        seen.push(...events)
        inHandler--
      },
      onCompacted() {
        throw new Error('unexpected compaction')
      },
    })
    try {
      await waitFor('21 events', () => seen.length >= 21)
      expect(overlapped).toBe(false)
      expect(seen.length).toBe(21)
      expect(seen.map((e) => e.kv.modRevision)).toEqual(Array.from({ length: 21 }, (_, i) => start + i))
      expect(seen.slice(0, 20).every((e) => e.type === 'PUT')).toBe(true)
      expect(seen[20]).toMatchObject({ type: 'DELETE', kv: { key: 'w1/k3', modRevision: del.revision } })
      expect(seen[5].kv).toMatchObject({ key: 'w1/k5', value: '5', version: 1 })
    } finally {
      watch.stop()
      await watch.done
    }
  })

  it('delivers a batch again when the events handler throws, and nothing twice once it took it', async () => {
    const start = (await client.put('w2/a', 'a')).revision
    await client.put('w2/b', 'b')
    const seen: number[] = []
    let failures = 0
    const states: string[] = []
    const watch = client.watch('w2/', start, {
      onEvents(events) {
        if (failures === 0) {
          failures++
          throw new Error('handler failure')
        }
        seen.push(...events.map((e) => e.kv.modRevision))
      },
      onCompacted() {},
      onState(s, detail) {
        states.push(`${s}${s === 'retrying' ? `: ${detail}` : ''}`)
      },
    })
    try {
      await waitFor('both events', () => seen.length >= 2)
      await client.put('w2/c', 'c')
      await waitFor('the third event', () => seen.length >= 3)
      expect(seen).toEqual([start, start + 1, start + 2])
      expect(states.some((s) => s.includes('handler failure'))).toBe(true)
    } finally {
      watch.stop()
      await watch.done
    }
  })

  it('resumes a watch on another member after the member it used (the leader) is killed with SIGKILL, without gaps or duplicates', async () => {
    // the watch starts on the leader, so the kill also makes the writer live through an election
    const leader = await cluster.leader()
    const watcher = new EtcdClient({ endpoints: [leader.clientUrl, ...cluster.endpoints.filter((e) => e !== leader.clientUrl)] })
    const start = (await client.currentRevision()) + 1
    const seen: EtcdEvent[] = []
    const states: string[] = []
    let connectedTo: string | undefined
    const watch = watcher.watch('fail/', start, {
      onEvents(events) {
        seen.push(...events)
      },
      onCompacted() {
        throw new Error('unexpected compaction')
      },
      onState(s, detail) {
        states.push(s)
        if (s === 'connected') connectedTo = detail
      },
    })
    await waitFor('the watch to connect', () => connectedTo !== undefined)
    const victim = cluster.members.find((m) => m.clientUrl === connectedTo)!
    expect(victim).toBe(leader)
    // the writer submits through the other members, several rounds so that an election after the kill does not fail it
    const writer = new EtcdClient({ endpoints: cluster.endpoints.filter((e) => e !== victim.clientUrl), attemptsPerEndpoint: 4 })
    const written = new Map<string, number>()
    try {
      for (let i = 0; i < 150; i++) {
        if (i === 50) await victim.kill('SIGKILL')
        const key = `fail/${String(i).padStart(4, '0')}`
        const r = await writer.putIfAbsent(key, `v${i}`)
        expect(r.created).toBe(true)
        written.set(key, r.revision)
      }
      await waitFor('every event', () => seen.length >= 150)
      expect(states.filter((s) => s === 'retrying').length).toBeGreaterThanOrEqual(1)
      expect(states.filter((s) => s === 'connected').length).toBeGreaterThanOrEqual(2)
      const revisions = seen.map((e) => e.kv.modRevision)
      for (let i = 1; i < revisions.length; i++) expect(revisions[i]).toBeGreaterThan(revisions[i - 1])
      expect(seen.length).toBe(150)
      expect(new Map(seen.map((e) => [e.kv.key, e.kv.modRevision]))).toEqual(written)
      // the prefix holds nothing else (every write in it was seen) and the watched member comes back
      const stored = await writer.range('fail/', { prefix: true, keysOnly: true })
      expect(stored.kvs.length).toBe(150)
    } finally {
      watch.stop()
      await watch.done
      watcher.close()
      writer.close()
      if (!victim.isRunning()) await victim.start()
    }
  })

  it('shows one leader in every member status, the one the harness finds', async () => {
    const statuses = await client.status()
    expect(statuses.map((s) => s.endpoint)).toEqual(cluster.endpoints)
    expect(statuses.every((s) => s.ok)).toBe(true)
    const leaders = new Set(statuses.map((s) => s.leader))
    expect(leaders.size).toBe(1)
    const leaderId = [...leaders][0]
    const leaderStatuses = statuses.filter((s) => s.memberId === leaderId)
    expect(leaderStatuses.length).toBe(1)
    expect((await cluster.leader()).clientUrl).toBe(leaderStatuses[0].endpoint)
    expect(statuses[0].version).toMatch(/^3\./)
    expect(statuses[0].revision).toBeGreaterThan(0)
  })

  it('grants, renews and revokes a lease, and revoking deletes its keys', async () => {
    const lease = await client.leaseGrant(30)
    expect(lease).toMatch(/^[1-9][0-9]*$/)
    await client.put('lease/k', 'v', { lease })
    expect((await client.get('lease/k'))?.lease).toBe(lease)
    const created = await client.putIfAbsent('lease/c', 'v', { lease })
    expect(created.created).toBe(true)
    expect((await client.get('lease/c'))?.lease).toBe(lease)
    const ttl = await client.leaseKeepAlive(lease)
    expect(ttl).toBeGreaterThan(25)
    expect(ttl).toBeLessThanOrEqual(30)
    await client.leaseRevoke(lease)
    expect(await client.get('lease/k')).toBeUndefined()
    expect(await client.get('lease/c')).toBeUndefined()
    expect(await client.leaseKeepAlive(lease)).toBe(0)
    // revoking again is not an error
    await client.leaseRevoke(lease)
    expect((await client.get('cmd/a/1'))?.lease).toBeUndefined()
  })

  it('compacts: reads and watches below the compaction point fail with its revision, from it they work', async () => {
    const a = await client.put('cmp/a', '1')
    const b = await client.put('cmp/a', '2')
    await client.put('cmp/b', '3')
    await client.compact(b.revision, true)
    expect(await client.compactRevision()).toBe(b.revision)
    const err = await client.range('cmp/a', { revision: a.revision }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EtcdCompactedError)
    expect((err as EtcdCompactedError).compactRevision).toBe(b.revision)
    expect((await client.range('cmp/a', { revision: b.revision })).kvs[0]?.value).toBe('2')
    // compacting again at or below the point changes nothing and is not an error
    await client.compact(a.revision)

    let compactedAt: number | undefined
    const below = client.watch('cmp/', a.revision, {
      onEvents() {
        throw new Error('no event may come from below the compaction point')
      },
      onCompacted(rev) {
        compactedAt = rev
      },
    })
    await below.done
    expect(compactedAt).toBe(b.revision)

    const seen: number[] = []
    const from = client.watch('cmp/', b.revision, {
      onEvents(events) {
        seen.push(...events.map((e) => e.kv.modRevision))
      },
      onCompacted() {
        throw new Error('unexpected compaction')
      },
    })
    try {
      await waitFor('the replay from the compaction point', () => seen.length >= 2)
      expect(seen).toEqual([b.revision, b.revision + 1])
    } finally {
      from.stop()
      await from.done
    }
    expect(await client.currentRevision()).toBe(b.revision + 1)
  })

  it('throws EtcdUnavailableError naming every endpoint when none answers in time', async () => {
    const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 30, fetch: () => new Promise<Response>(() => {}) })
    const refused = `http://127.0.0.1:${await closedPort()}`
    const hanging = `http://127.0.0.1:${silent.port}`
    const dead = new EtcdClient({ endpoints: [refused, hanging], timeoutMs: 300, attemptsPerEndpoint: 2 })
    try {
      const t0 = performance.now()
      const err = await dead.put('k', 'v').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(EtcdUnavailableError)
      const message = (err as Error).message
      expect(message).toContain(refused)
      expect(message).toContain(`${hanging}: no answer within 300 ms`)
      // two rounds: two refusals at once and two 300 ms timeouts
      expect(performance.now() - t0).toBeLessThan(5_000)
    } finally {
      dead.close()
      silent.stop(true)
    }
  })

  it('ends a watch on a member that lost its quorum instead of leaving it silent, and retries', async () => {
    const leader = await cluster.leader()
    const [kept, other] = cluster.members.filter((m) => m !== leader)
    const watcher = new EtcdClient({ endpoints: [kept.clientUrl] })
    const states: string[] = []
    const watch = watcher.watch('lost/', (await client.currentRevision()) + 1, {
      onEvents() {},
      onCompacted() {},
      onState(s, detail) {
        states.push(`${s} ${detail}`)
      },
    })
    try {
      await waitFor('the watch to connect', () => states.length > 0)
      expect(states).toEqual([`connected ${kept.clientUrl}`])
      await Promise.all([leader.kill('SIGKILL'), other.kill('SIGKILL')])
      // etcd ends the stream once the member has seen no leader for a while (the watch asked for it), then the
      // retries are refused with "no leader"
      await waitFor('the watch to retry', () => states.some((s) => s.startsWith('retrying')), 20_000)
      await waitFor('a refusal', () => states.some((s) => s.includes('no leader')), 10_000)
    } finally {
      watch.stop()
      await watch.done
      watcher.close()
    }
  })

  it('throws EtcdUnavailableError within a few seconds once every member is killed, and the status says so', async () => {
    await Promise.all(cluster.members.map((m) => m.kill('SIGKILL')))
    const t0 = performance.now()
    const err = await client.putIfAbsent('after/kill', 'v').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EtcdUnavailableError)
    for (const endpoint of cluster.endpoints) expect((err as Error).message).toContain(endpoint)
    expect(performance.now() - t0).toBeLessThan(5_000)
    const statuses = await client.status()
    expect(statuses.map((s) => s.ok)).toEqual([false, false, false])
    expect(statuses.every((s) => typeof s.error === 'string' && s.error !== '')).toBe(true)
  })
})
