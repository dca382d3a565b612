/**
 * What a cluster node tells the others about itself, outside the log, and what it learns of them:
 * - `<prefix>/nodes/<name>`: a key under a 5 s lease, rewritten every second while the node applies the log: its
 *   applied revision, lag and API address. Present = the node is up and applying (`GET /controllers` `isOnline`).
 * - `<prefix>/applied/<name>`: its applied revision without a lease, every 10 s: compaction never goes past the
 *   lowest of these, so a node that is down (not removed) can still catch up by replay when it comes back.
 * - The peers' keys are read every second into memory: reads of `/controllers` and `cluster status` never wait on etcd.
 * - Janitor (every 30 s): this node deletes the keys of its own commands every registered node has applied, and the
 *   first live node by name compacts etcd's history up to the lowest applied revision.
 * Failures only delay these: each step is retried at its next tick, and none can end the process.
 */
import { describeThrown } from '../lib/describe-thrown.ts'
import type { EtcdClient } from './etcd-client.ts'
import { logPrefixOf, type ClusterLog } from './cluster-log.ts'

/** A node as its liveness key shows it. */
export interface NodeLiveness {
  name: string
  revision: number
  lagRevisions: number
  state: string
  apiUrl: string
  /** Its clock when it wrote the key. */
  at: number
}

export interface MembershipOptions {
  client: EtcdClient
  prefix: string
  nodeName: string
  apiUrl: string
  log: ClusterLog
  /** The applied revision stored in LMDB (meta `clusterApplied`). */
  storedRevision: () => number
  note: (line: string) => void
  /** Tests shorten the ticks. */
  heartbeatEveryMs?: number
  janitorEveryMs?: number
}

export const nodesPrefixOf = (prefix: string) => `${prefix}/nodes/`
export const appliedPrefixOf = (prefix: string) => `${prefix}/applied/`

/** Every this many janitor ticks, the first node deletes leftover command keys of every proposer. */
const LEFTOVER_SWEEP_EVERY = 10

/** Compaction waits until this many revisions can go. */
const COMPACT_STEP = 1_000
/** It compacts this many revisions per call, with this pause between calls. */
const COMPACT_CHUNK = 2_000
const COMPACT_PAUSE_MS = 100

export class ClusterMembership {
  private lease: string | undefined
  private readonly peers = new Map<string, NodeLiveness>()
  private peersReadAt = 0
  private timers: ReturnType<typeof setInterval>[] = []
  private lastAppliedWritten = -1
  private compactedTo = 0
  private compactionKnown = false
  private sweeping = false
  private etcdReachable = true
  private lastError = ''
  private beating = false
  private ticks = 0

  constructor(private readonly o: MembershipOptions) {}

  /** Writes this node's applied revision once (before catching up: compaction must not pass it meanwhile). */
  /**
   * Writes the revision this node has stored (not the one it applied in memory, which runs ahead of its commits for a
   * moment): compaction up to it never takes what a crash now would need replayed.
   */
  async registerApplied(): Promise<number> {
    const revision = this.o.storedRevision()
    await this.o.client.put(`${appliedPrefixOf(this.o.prefix)}${this.o.nodeName}`, String(revision))
    return revision
  }

  start(): void {
    const beat = setInterval(() => void this.heartbeat(), this.o.heartbeatEveryMs ?? 1_000)
    const janitor = setInterval(() => void this.janitor(), this.o.janitorEveryMs ?? 30_000)
    beat.unref?.()
    janitor.unref?.()
    this.timers = [beat, janitor]
    void this.heartbeat()
  }

  /** The live nodes as last read (this one included once its first heartbeat went out). */
  live(): ReadonlyMap<string, NodeLiveness> {
    return this.peers
  }

  /** Whether etcd answered the last heartbeat, and what it said when it did not. */
  get etcd(): { reachable: boolean; error: string; peersReadAt: number } {
    return { reachable: this.etcdReachable, error: this.lastError, peersReadAt: this.peersReadAt }
  }

  async heartbeat(): Promise<void> {
    if (this.beating) return
    this.beating = true
    try {
      const c = this.o.client
      if (this.o.log.state === 'live') {
        if (this.lease === undefined) this.lease = await c.leaseGrant(5)
        else if ((await c.leaseKeepAlive(this.lease)) <= 0) this.lease = await c.leaseGrant(5)
        const me: NodeLiveness = {
          name: this.o.nodeName,
          revision: this.o.log.revision,
          lagRevisions: this.o.log.lagRevisions,
          state: this.o.log.state,
          apiUrl: this.o.apiUrl,
          at: Date.now(),
        }
        await c.put(`${nodesPrefixOf(this.o.prefix)}${this.o.nodeName}`, JSON.stringify(me), { lease: this.lease })
      }
      const { kvs } = await c.range(nodesPrefixOf(this.o.prefix), { prefix: true })
      this.peers.clear()
      for (const kv of kvs) {
        try {
          const n = JSON.parse(kv.value) as NodeLiveness
          if (typeof n.name === 'string') this.peers.set(n.name, n)
        } catch {
          // a key someone else wrote: not a node
        }
      }
      this.peersReadAt = Date.now()
      this.etcdReachable = true
      this.lastError = ''
    } catch (e) {
      this.etcdReachable = false
      this.lastError = e instanceof Error ? e.message : String(e)
      this.lease = undefined
    } finally {
      this.beating = false
    }
  }

  async janitor(): Promise<void> {
    // a long run (many chunks of compaction) is never overlapped by the next tick
    if (this.sweeping) return
    this.sweeping = true
    try {
      const c = this.o.client
      const log = this.o.log
      if (log.state !== 'live') return
      if (this.o.storedRevision() !== this.lastAppliedWritten) this.lastAppliedWritten = await this.registerApplied()
      const { kvs } = await c.range(appliedPrefixOf(this.o.prefix), { prefix: true })
      const applied = kvs.map((kv) => Number(kv.value)).filter((n) => Number.isFinite(n))
      if (applied.length === 0) return
      const lowest = Math.min(...applied)
      // this node's own command keys that every registered node applied: one range delete
      const own = log.ownKeys
      let n = 0
      while (n < own.length && own[n].revision <= lowest) n++
      if (n > 0) {
        await c.deleteRange(own[0].key, `${own[n - 1].key}\u0000`)
        own.splice(0, n)
      }
      const first = [...this.peers.keys()].sort()[0]
      // keys no running node deletes (an earlier run of a node, `edgeplane cluster remove`): the first node, now and then
      if (first === this.o.nodeName && this.ticks++ % LEFTOVER_SWEEP_EVERY === 0) await this.sweepLeftovers(lowest)
      if (first === this.o.nodeName && lowest - this.compactedTo >= COMPACT_STEP) {
        // where etcd stands (this process may be new to the job); then in chunks with a pause between: etcd holds its
        // writes while it compacts, for a time that grows with the revisions compacted at once (~280 ms for 15,000
        // on two shared cores)
        if (!this.compactionKnown) {
          this.compactedTo = Math.max(this.compactedTo, await c.compactRevision())
          this.compactionKnown = true
        }
        const from = this.compactedTo
        while (this.compactedTo < lowest && this.timers.length > 0) {
          const to = Math.min(lowest, this.compactedTo + COMPACT_CHUNK)
          await c.compact(to)
          this.compactedTo = to
          if (to < lowest) await Bun.sleep(COMPACT_PAUSE_MS)
        }
        if (this.compactedTo > from) this.o.note(`cluster: etcd's history compacted from revision ${from} up to ${this.compactedTo} (the lowest revision a registered node applied is ${lowest})`)
      }
    } catch (e) {
      // retried at the next tick
      this.lastError = e instanceof Error ? e.message : describeThrown(e)
    } finally {
      this.sweeping = false
    }
  }

  /**
   * Deletes every command key that every registered node applied, whoever proposed it. Keys are grouped by proposer
   * run (`<node>/<boot>.` or `cli-…/`), and within a group their order is their order in the log, so each group's
   * deletable keys are its first ones: one range delete from the group's first key to just after its last deletable
   * one can never take a key appended since (it sorts after).
   */
  private async sweepLeftovers(lowest: number): Promise<void> {
    const c = this.o.client
    const prefix = logPrefixOf(this.o.prefix)
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)
    let start = prefix
    for (let page = 0; page < 50; page++) {
      const { kvs, more } = await c.range(start, { rangeEnd: end, limit: 2_000, keysOnly: true })
      const groups = new Map<string, { first: string; last: string | null; blocked: boolean }>()
      for (const kv of kvs) {
        const cut = Math.max(kv.key.lastIndexOf('.'), kv.key.lastIndexOf('/'))
        const group = kv.key.slice(0, cut)
        let g = groups.get(group)
        if (!g) groups.set(group, (g = { first: kv.key, last: null, blocked: false }))
        if (g.blocked) continue
        if (kv.modRevision <= lowest) g.last = kv.key
        else g.blocked = true
      }
      for (const g of groups.values()) if (g.last !== null) await c.deleteRange(g.first, `${g.last}\u0000`)
      if (!more || kvs.length === 0) return
      start = `${kvs[kvs.length - 1].key}\u0000`
    }
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t)
    this.timers = []
    // `cluster status` then shows where a stopped node stands, not where it stood at the last janitor tick
    await this.registerApplied().catch(() => undefined)
    if (this.lease !== undefined) {
      // the node leaves the live set at once rather than when its lease runs out
      await this.o.client.leaseRevoke(this.lease).catch(() => undefined)
      this.lease = undefined
    }
  }
}
