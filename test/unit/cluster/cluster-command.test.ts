// `edgeplane cluster status|remove` against a real etcd (one member, test/support/etcd.ts) and real nodes (startServer
// with cluster settings): what status reports for an empty prefix, one node, two nodes (the second restored from a
// backup of the first, whose manifest names the cluster), a stopped node; remove refusing a live or unknown node and
// retiring a stopped one on every node's state (sealed with the key of a member's data directory, refused with
// another cluster's); `run` refusing a non-member data directory and a backup older than etcd's compaction point with
// its message (exit 1, no stack); etcd down. The tests share one etcd and run in order.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EtcdClient } from '../../../src/cluster/etcd-client.ts'
import { readClusterStatus, runClusterCommand, type ClusterStatusReport } from '../../../src/cluster/cluster-command.ts'
import { startServer, type RunningServer } from '../../../src/server.ts'
import { backupDataDir } from '../../../src/operate/operate-backup.ts'
import { restoreDataDir } from '../../../src/operate/operate-restore.ts'
import { readDataDirStatus } from '../../../src/operate/operate-status.ts'
import { type EtcdCluster, etcdAvailable, etcdSkipReason, startEtcdCluster } from '../../support/etcd.ts'

if (!etcdAvailable()) console.log(`skipping the cluster command tests: ${etcdSkipReason()}`)

const MAIN = join(import.meta.dir, '..', '..', '..', 'src', 'main.ts')
const PREFIX = '/cmdtest'

async function cli(argv: string[], env: Record<string, string> = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runClusterCommand(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), env })
  return { code, stdout, stderr }
}

/** The real command line in a child process (for `run`, whose failures exit the process). */
async function main(argv: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, ...argv], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe.skipIf(!etcdAvailable())('edgeplane cluster against a real etcd', () => {
  let etcd: EtcdCluster
  let client: EtcdClient
  let dir: string
  const servers: RunningServer[] = []
  let a: RunningServer
  let b: RunningServer
  let ep: string

  const startNode = async (dataDir: string, nodeName: string) => {
    const s = await startServer({
      dataDir,
      port: 0,
      adminUsername: 'admin',
      adminPassword: 'admin-pass-1',
      cluster: { endpoints: etcd.endpoints, nodeName, prefix: PREFIX, heartbeatEveryMs: 100 },
      log: () => undefined,
    })
    servers.push(s)
    return s
  }
  const status = () => readClusterStatus(client, etcd.endpoints, PREFIX)
  /** Polls the status until `check` holds (heartbeats are written every 100 ms here). */
  const statusWhen = async (what: string, check: (r: ClusterStatusReport) => boolean): Promise<ClusterStatusReport> => {
    for (let i = 0; i < 200; i++) {
      const r = await status()
      if (check(r)) return r
      await Bun.sleep(50)
    }
    throw new Error(`the cluster status never showed ${what}: ${JSON.stringify(await status())}`)
  }

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1 })
    client = new EtcdClient({ endpoints: etcd.endpoints })
    ep = etcd.endpoints.join(',')
    dir = mkdtempSync(join(tmpdir(), 'edgeplane-cluster-cmd-'))
  })

  afterAll(async () => {
    for (const s of servers) await s.stop().catch(() => undefined)
    client?.close()
    await etcd?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('case=empty prefix: etcd is healthy but no cluster is initialised there (exit 1, says so)', async () => {
    const r = await cli(['status', '--cluster-endpoints', ep, '--prefix', PREFIX])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('etcd: quorum ok')
    expect(r.stdout).toMatch(/\s+yes\s+\d+/) // the one member is the leader
    expect(r.stdout).toContain(`no cluster is initialised under prefix ${PREFIX}`)
    expect(r.stderr).toContain('not healthy')
  })

  it('case=one node: its cluster id, applied revision, lag and liveness; exit 0', async () => {
    a = await startNode(join(dir, 'a'), 'node-a')
    const r = await statusWhen('node-a live', (s) => s.nodes.some((n) => n.name === 'node-a' && n.live))
    expect(r.healthy).toBe(true)
    expect(r.cluster?.id).toBe(a.cluster!.clusterId)
    expect(r.cluster?.initialisedBy).toBe('node-a')
    expect(r.etcd.quorum).toBe(true)
    expect(r.etcd.members).toHaveLength(1)
    expect(r.etcd.members[0]).toMatchObject({ ok: true, isLeader: true, version: expect.stringMatching(/^3\./) })
    expect(r.etcd.compactRevision).toBe(0)
    const node = r.nodes.find((n) => n.name === 'node-a')!
    expect(node).toMatchObject({ registered: true, live: true, state: 'live', apiUrl: a.url })
    expect(node.appliedRevision).toBeGreaterThan(0)
    expect(node.appliedRevision!).toBeLessThanOrEqual(r.etcd.revision!)
    expect(node.lag).toBeGreaterThanOrEqual(0)
    const human = await cli(['status', '--prefix', PREFIX], { EDGEPLANE_CLUSTER_ENDPOINTS: ep })
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(`cluster ${a.cluster!.clusterId} (prefix ${PREFIX}, initialised by node-a`)
    expect(human.stdout).toMatch(/node-a\s+yes\s+\d+\s+\d+\s+live\s+https:\/\/127\.0\.0\.1:\d+/)
    expect(human.stdout).toContain('health: ok')
    const json = await cli(['status', '--prefix', PREFIX, '--cluster-endpoints', ep, '--json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ healthy: true, cluster: { id: a.cluster!.clusterId }, prefix: PREFIX })
  })

  it('case=two nodes: a backup of a member names its cluster and revision; the restored node joins and is listed', async () => {
    const archive = join(dir, 'a.tar.gz')
    const manifest = await backupDataDir({ dataDir: join(dir, 'a'), outFile: archive, now: new Date() })
    expect(manifest.cluster?.id).toBe(a.cluster!.clusterId)
    expect(manifest.cluster!.appliedRevision).toBeGreaterThan(0)
    expect(manifest.cluster!.appliedRevision).toBeLessThanOrEqual(a.cluster!.log.revision)
    await restoreDataDir(archive, join(dir, 'b'))
    const restored = await readDataDirStatus(join(dir, 'b'), Date.now())
    expect(restored.cluster).toEqual(manifest.cluster!)
    b = await startNode(join(dir, 'b'), 'node-b')
    const r = await statusWhen('both nodes live', (s) => s.nodes.filter((n) => n.live).length === 2)
    expect(r.healthy).toBe(true)
    expect(r.nodes.map((n) => n.name)).toEqual(['node-a', 'node-b'])
    // the status of a running member's data directory (read-only, another process) shows the same cluster
    const offline = await main(['status', '--data', join(dir, 'b')])
    expect(offline.stdout).toContain(`cluster: member of cluster ${a.cluster!.clusterId}, state at log revision `)
  })

  it('case=remove of a live node is refused without --force, and changes nothing', async () => {
    const r = await cli(['remove', 'node-b', '--cluster-endpoints', ep, '--prefix', PREFIX, '--data', join(dir, 'a')])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('node node-b is live')
    expect(r.stderr).toContain('stop it first')
    expect(await client.get(`${PREFIX}/applied/node-b`)).toBeDefined()
    expect((await status()).nodes.find((n) => n.name === 'node-b')?.live).toBe(true)
  })

  it('case=a stopped node: status exits 1 naming it and what to do', async () => {
    await b.stop()
    servers.splice(servers.indexOf(b), 1)
    const r = await statusWhen('node-b down', (s) => s.nodes.some((n) => n.name === 'node-b' && !n.live))
    expect(r.healthy).toBe(false)
    expect(r.problems.join('\n')).toContain('node node-b is not live')
    const human = await cli(['status', '--cluster-endpoints', ep, '--prefix', PREFIX])
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/node-b\s+no\s+\d+/)
    expect(human.stdout).toContain('edgeplane cluster remove node-b')
  })

  it('case=remove of a stopped node: every node drops it from its controllers, its keys go, status is healthy again', async () => {
    const before = await main(['status', '--data', join(dir, 'a'), '--json'])
    expect(JSON.parse(before.stdout).counts.controllers).toBe(2)
    const r = await cli(['remove', 'node-b', '--cluster-endpoints', ep, '--prefix', PREFIX], { EDGEPLANE_DATA: join(dir, 'a') })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const revision = Number(/at revision (\d+)/.exec(r.stdout)![1])
    expect(await client.get(`${PREFIX}/applied/node-b`)).toBeUndefined()
    expect(await client.get(`${PREFIX}/nodes/node-b`)).toBeUndefined()
    for (let i = 0; i < 200 && a.cluster!.log.revision < revision; i++) await Bun.sleep(20)
    expect(a.cluster!.log.revision).toBeGreaterThanOrEqual(revision)
    const after = await main(['status', '--data', join(dir, 'a'), '--json'])
    expect(JSON.parse(after.stdout).counts.controllers).toBe(1)
    const s = await status()
    expect(s.healthy).toBe(true)
    expect(s.nodes.map((n) => n.name)).toEqual(['node-a'])
  })

  it('case=remove of a name no node has is refused; --force appends it anyway', async () => {
    const member = ['--data', join(dir, 'a')]
    const r = await cli(['remove', 'node-z', '--cluster-endpoints', ep, '--prefix', PREFIX, ...member])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('no node node-z is registered')
    const forced = await cli(['remove', 'node-z', '--force', '--json', '--cluster-endpoints', ep, '--prefix', PREFIX, ...member])
    expect(forced.code).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({ name: 'node-z', wasLive: false, deletedKeys: 0 })
    const other = await cli(['remove', 'node-a', '--cluster-endpoints', ep, '--prefix', '/nothing-here', ...member])
    expect(other.code).toBe(1)
    expect(other.stderr).toContain('no cluster is initialised under prefix /nothing-here')
  })

  it('case=remove needs the data directory of a member of this cluster (its key seals the command), and changes nothing without it', async () => {
    const none = await cli(['remove', 'node-z', '--force', '--cluster-endpoints', ep, '--prefix', PREFIX, '--data', join(dir, 'nowhere')])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain(`${join(dir, 'nowhere')} holds no edgeplane data`)
    expect(none.stderr).toContain('give --data DIR')
    // a data directory of another cluster (initialised under another prefix)
    const other = await startServer({
      dataDir: join(dir, 'other'),
      port: 0,
      adminUsername: 'admin',
      adminPassword: 'admin-pass-1',
      cluster: { endpoints: etcd.endpoints, nodeName: 'other-1', prefix: '/other-cluster' },
      log: () => undefined,
    })
    await other.stop()
    const before = await client.currentRevision()
    const foreign = await cli(['remove', 'node-z', '--force', '--cluster-endpoints', ep, '--prefix', PREFIX, '--data', join(dir, 'other')])
    expect(foreign.code).toBe(1)
    expect(foreign.stderr).toContain(`belongs to cluster ${other.cluster!.clusterId}, but etcd prefix ${PREFIX} holds cluster ${a.cluster!.clusterId}`)
    const { kvs } = await client.range(`${PREFIX}/log/`, { prefix: true, keysOnly: true })
    expect(kvs.filter((kv) => kv.modRevision > before)).toEqual([])
  })

  it('case=run refuses a data directory that is no member (exit 1, the message, no stack)', async () => {
    const r = await main(['run', '--data', join(dir, 'stranger'), '--listen', '127.0.0.1:0', '--cluster-endpoints', ep, '--node-name', 'node-s'], {
      EDGEPLANE_CLUSTER_PREFIX: PREFIX,
      EDGEPLANE_ADMIN_PASSWORD: 'admin-pass-1',
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`edgeplane run: cannot start: etcd prefix ${PREFIX} holds cluster ${a.cluster!.clusterId}, and this data directory is not one of its members`)
    expect(r.stderr).toContain('edgeplane backup --data DIR --out FILE')
    expect(r.stderr).not.toMatch(/^\s+at /m)
    expect(r.stdout).not.toContain('listening on')
  })

  it('case=a backup older than the compaction point: run refuses it with what to do, and registers nothing', async () => {
    const archive = join(dir, 'old.tar.gz')
    const old = await backupDataDir({ dataDir: join(dir, 'a'), outFile: archive, now: new Date() })
    await restoreDataDir(archive, join(dir, 'c'))
    // a write on node-a moves the log past the backup; then etcd's history is compacted up to now
    const login = await fetch(`${a.url}/edge/management/v1/authenticate?method=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin-pass-1' }),
      tls: { rejectUnauthorized: false },
    } as RequestInit)
    expect(login.status).toBe(200)
    const head = await client.currentRevision()
    expect(head).toBeGreaterThan(old.cluster!.appliedRevision + 1)
    await client.compact(head, true)
    const r = await main(['run', '--data', join(dir, 'c'), '--listen', '127.0.0.1:0', '--cluster-endpoints', ep, '--node-name', 'node-c'], {
      EDGEPLANE_CLUSTER_PREFIX: PREFIX,
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`edgeplane run: cannot start: this data directory was backed up at revision ${old.cluster!.appliedRevision}, but etcd has compacted`)
    expect(r.stderr).toContain('edgeplane restore --from FILE --data DIR')
    expect(r.stderr).not.toMatch(/^\s+at /m)
    const s = await status()
    expect(s.etcd.compactRevision).toBe(head)
    expect(s.nodes.map((n) => n.name)).toEqual(['node-a'])
    expect(s.healthy).toBe(true)
    const human = await cli(['status', '--cluster-endpoints', ep, '--prefix', PREFIX])
    expect(human.stdout).toContain(`compacted up to revision ${head}`)
  })

  it('case=etcd down: status exits 1 saying no member answers', async () => {
    for (const s of servers) await s.stop()
    servers.length = 0
    await etcd.members[0].kill('SIGKILL')
    const r = await cli(['status', '--cluster-endpoints', ep, '--prefix', PREFIX])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('etcd: NO QUORUM')
    expect(r.stdout).toMatch(/down/)
    expect(r.stdout).toContain('no etcd member answers')
    const remove = await cli(['remove', 'node-a', '--cluster-endpoints', ep, '--prefix', PREFIX, '--data', join(dir, 'a')])
    expect(remove.code).toBe(1)
    expect(remove.stderr).toContain('edgeplane cluster remove: ')
  })
})
