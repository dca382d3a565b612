/**
 * A test cluster: a 3-member etcd (etcd.ts) and edgeplane nodes on it, each on port 0 with a temp data directory and
 * real TLS. The first node initialises the cluster on a fresh etcd prefix; every other node starts from a backup of
 * a running member (`backupDataDir` + `restoreDataDir`, as `edgeplane backup` / `restore`) and catches up before it
 * answers. A node runs in this process (startServer) or as a child process (`bun src/main.ts run`, child-controller.ts)
 * that a test can kill -9 and start again on its data directory.
 *
 * Every JSON answer a node gives through `call` is checked against the official spec, as the harness checks its own
 * (spec-check.ts); the nodes' certificates are verified against the cluster's root CA (shared through the backups).
 * `stop` ends every node (children by pid) and every etcd member, and removes the directories: call it in afterAll.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type RunningServer } from '../../src/server.ts'
import { backupDataDir } from '../../src/operate/operate-backup.ts'
import { restoreDataDir } from '../../src/operate/operate-restore.ts'
import { openStore } from '../../src/store/store-env.ts'
import { stateDigest, type StateDigest } from '../../src/cluster/cluster-digest.ts'
import { EtcdClient } from '../../src/cluster/etcd-client.ts'
import { startEtcdCluster, type EtcdCluster } from './etcd.ts'
import { killChildren, startChild, type ChildController } from './child-controller.ts'
import { checkAnswer, specCheckTally } from './spec-check.ts'
import { ADMIN } from './harness.ts'

export { ADMIN }

export interface NodeAnswer<T = any> {
  status: number
  body: T
  text: string
}

export interface CallOptions {
  token?: string
  body?: unknown
  /** A client certificate and key (certificate login). */
  cert?: { cert: string; key: string }
  /** Further request headers (e.g. the Authorization of a token enrollment). */
  headers?: Record<string, string>
  /** The harness's one escape from the spec check (harness.ts RequestOptions.offSpec): why this answer is outside it. */
  offSpec?: string
}

export type NodeKind = 'in-process' | 'child'

export interface TestNode {
  name: string
  kind: NodeKind
  dataDir: string
  /** https://127.0.0.1:port of the running node (its last one while it is down). */
  url: string
  /** The in-process server, while it runs. */
  server?: RunningServer
  /** The child process, while it runs. */
  child?: ChildController
  running(): boolean
  /** Its log so far (in-process: every line; child: the tail of its stderr). */
  logTail(): string
}

export interface TestCluster {
  etcd: EtcdCluster
  /** The cluster's etcd key prefix (one per TestCluster). */
  prefix: string
  /** A client of the cluster's etcd (compaction, key counts), closed by `stop`. */
  etcdClient: EtcdClient
  nodes: TestNode[]
  caPem: string
  node(name: string): TestNode
  /** Starts a new node from a backup of `from` (default: the first running node), or from `backupFile`. */
  addNode(name: string, opts?: { kind?: NodeKind; from?: TestNode; backupFile?: string }): Promise<TestNode>
  /** Writes a backup of a running node's data directory (the node keeps running); answers the file. */
  backup(node: TestNode): Promise<string>
  /** Stops a node cleanly (in-process: server.stop; child: SIGTERM then kill -9). */
  stopNode(node: TestNode): Promise<void>
  /** kill -9 of a child node; waits until the process is gone. */
  killNode(node: TestNode): Promise<void>
  /** Starts a stopped node again on its data directory (it catches up before it answers). */
  restartNode(node: TestNode): Promise<void>
  /** One HTTPS request to a node; its JSON answer is checked against the spec. */
  call(node: TestNode, method: string, path: string, opts?: CallOptions): Promise<NodeAnswer>
  /** A password login on a node (management API by default); answers the token. */
  login(node: TestNode, api?: 'client' | 'management', user?: { username: string; password: string }): Promise<string>
  /** The applied revision of a running node. */
  revision(node: TestNode): Promise<number>
  /** Waits until every running node (or the given ones) applied at least `revision`; default: the highest any has. */
  waitForRevision(revision?: number, nodes?: TestNode[], timeoutMs?: number): Promise<number>
  /** Every item of a list, page by page (limit 500). */
  listAll(node: TestNode, path: string, token: string): Promise<any[]>
  /**
   * The digests of `nodes` (default: every running node) once they stand at the same stored revision (polled). Equal
   * revisions and unequal digests = states that differ.
   */
  settledDigests(nodes?: TestNode[], timeoutMs?: number): Promise<Array<StateDigest & { name: string }>>
  /** The state digest of a node: in-process from its store, a running child over GET /cluster, a stopped node from its store. */
  digest(node: TestNode): Promise<StateDigest>
  stop(): Promise<void>
}

const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'

export const apiPrefix = (api: 'client' | 'management') => (api === 'client' ? CLIENT : MGMT)

/** Polls `check` until it answers a value other than undefined/false, or throws after `timeoutMs` with `what`. */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await check()
      if (v !== undefined && v !== false) return v as T
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached after ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`)
    await Bun.sleep(everyMs)
  }
}

export interface ClusterOptions {
  /** How many nodes to start (default 3): the first initialises, the others join from its backup. */
  nodes?: number
  /** The kind of every node (default in-process), or of each by index. */
  kind?: NodeKind | NodeKind[]
  /** An existing etcd to use instead of starting one (left running by `stop`). */
  etcd?: EtcdCluster
}

let exitHookInstalled = false

export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  if (!exitHookInstalled) {
    // a test process that ends without afterAll (a crash, a timeout) leaves no child node behind (etcd.ts does the same)
    exitHookInstalled = true
    process.on('exit', () => killChildren())
  }
  const etcd = opts.etcd ?? (await startEtcdCluster({ members: 3 }))
  const ownEtcd = opts.etcd === undefined
  const root = mkdtempSync(join(tmpdir(), 'edgeplane-cluster-'))
  const prefix = `/test-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`
  const etcdClient = new EtcdClient({ endpoints: etcd.endpoints })
  const nodes: TestNode[] = []
  let caPem = ''
  let backups = 0
  /** One admin session for the harness's own reads (every login is a replicated write: made once). */
  let harnessToken: string | undefined
  const harnessSession = async (n: TestNode) => (harnessToken ??= await api.login(n))
  /** A running node's GET /cluster (edgeplane's own route: its applied revision, its state digest). */
  const clusterStatus = async (n: TestNode) => {
    const res = await api.call(n, 'GET', `${MGMT}/cluster`, { token: await harnessSession(n) })
    if (res.status !== 200) throw new Error(`GET /cluster on ${n.name}: ${res.status} ${res.text}`)
    return res.body.data
  }

  const settings = (name: string) => ({ endpoints: etcd.endpoints, nodeName: name, prefix, heartbeatEveryMs: 250 })

  interface NodeImpl extends TestNode {
    logLines: string[]
    start(): Promise<void>
  }

  const makeNode = (name: string, kind: NodeKind, dataDir: string): NodeImpl => {
    const n: NodeImpl = {
      name,
      kind,
      dataDir,
      url: '',
      logLines: [],
      running() {
        if (kind === 'in-process') return n.server !== undefined
        const p = n.child?.proc
        return p !== undefined && p.exitCode === null && p.signalCode === null
      },
      logTail() {
        return kind === 'in-process' ? n.logLines.slice(-200).join('\n') : (n.child?.stderrTail() ?? '')
      },
      async start() {
        if (kind === 'in-process') {
          n.server = await startServer({
            dataDir,
            port: 0,
            adminUsername: ADMIN.username,
            adminPassword: ADMIN.password,
            cluster: settings(name),
            log: (line) => {
              if (line.includes('"request"')) return
              n.logLines.push(line)
              if (n.logLines.length > 2000) n.logLines.splice(0, 1000)
            },
          })
          n.url = n.server.url
        } else {
          // the flags of `edgeplane run`, the prefix from the config file (the node's ticks are the defaults)
          n.child = await startChild(dataDir, ADMIN.password, {
            config: { cluster: { prefix } },
            args: ['--cluster-endpoints', etcd.endpoints.join(','), '--node-name', name],
          })
          n.url = n.child.url
        }
      },
    }
    return n
  }

  const api: TestCluster = {
    etcd,
    prefix,
    etcdClient,
    nodes,
    get caPem() {
      return caPem
    },
    node(name) {
      const n = nodes.find((x) => x.name === name)
      if (!n) throw new Error(`no node ${name}`)
      return n
    },
    async backup(node) {
      const file = join(root, `backup-${++backups}.tar`)
      await backupDataDir({ dataDir: node.dataDir, outFile: file, now: new Date() })
      return file
    },
    async addNode(name, o = {}) {
      const dataDir = join(root, name)
      let file = o.backupFile
      if (file === undefined) {
        const from = o.from ?? nodes.find((x) => x.running())
        if (!from) throw new Error('no running node to take a backup of')
        file = await api.backup(from)
      }
      await restoreDataDir(file, dataDir)
      const n = makeNode(name, o.kind ?? 'in-process', dataDir)
      nodes.push(n)
      await n.start()
      return n
    },
    async stopNode(node) {
      if (node.kind === 'in-process') {
        const s = node.server
        node.server = undefined
        await s?.stop()
        return
      }
      const proc = node.child?.proc
      if (!proc || !node.running()) return
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill(9), 5_000)
      await proc.exited
      clearTimeout(timer)
    },
    async killNode(node) {
      if (node.kind !== 'child') throw new Error(`kill -9 needs a child node; ${node.name} runs in this process`)
      const proc = node.child?.proc
      if (!proc || !node.running()) return
      proc.kill(9)
      await proc.exited
    },
    async restartNode(node) {
      if (node.running()) throw new Error(`${node.name} still runs`)
      await (node as NodeImpl).start()
    },
    async call(node, method, path, o = {}) {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (o.token) headers['zt-session'] = o.token
      if (o.body !== undefined) headers['content-type'] = 'application/json'
      Object.assign(headers, o.headers)
      const res = await fetch(`${node.url}${path}`, {
        method,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        tls: { ca: caPem, ...(o.cert ?? {}) },
      } as RequestInit)
      const text = await res.text()
      let body: unknown
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        body = undefined
      }
      if (o.offSpec !== undefined) specCheckTally.recordOffSpec(o.offSpec)
      else {
        checkAnswer({ method, url: path, status: res.status, contentType: res.headers.get('content-type'), text, body })
        specCheckTally.recordChecked()
      }
      return { status: res.status, body, text }
    },
    async login(node, which = 'management', user = ADMIN) {
      const res = await api.call(node, 'POST', `${apiPrefix(which)}/authenticate?method=password`, { body: user })
      if (res.status !== 200) throw new Error(`login of ${user.username} on ${node.name} failed: ${res.status} ${res.text}`)
      return res.body.data.token as string
    },
    async revision(node) {
      if (node.server?.cluster) return node.server.cluster.log.revision
      if (!node.running()) return (await api.digest(node)).revision
      return (await clusterStatus(node)).appliedRevision as number
    },
    async waitForRevision(revision, which, timeoutMs = 15_000) {
      const targets = (which ?? nodes).filter((n) => n.running())
      const target = revision ?? Math.max(...(await Promise.all(targets.map((n) => api.revision(n)))))
      await pollUntil(
        `nodes ${targets.map((n) => n.name).join(', ')} at revision ${target}`,
        async () => (await Promise.all(targets.map((n) => api.revision(n)))).every((r) => r >= target),
        timeoutMs,
      )
      return target
    },
    async listAll(node, path, token) {
      const items: any[] = []
      for (let offset = 0; ; offset += 500) {
        const page = await api.call(node, 'GET', `${path}${path.includes('?') ? '&' : '?'}limit=500&offset=${offset}`, { token })
        if (page.status !== 200) throw new Error(`GET ${path} on ${node.name}: ${page.status} ${page.text}`)
        items.push(...page.body.data)
        if (page.body.data.length < 500) return items
      }
    },
    async settledDigests(which, timeoutMs = 15_000) {
      const targets = which ?? nodes.filter((n) => n.running())
      const deadline = Date.now() + timeoutMs
      for (;;) {
        await api.waitForRevision(undefined, targets.filter((n) => n.running()))
        const digests = await Promise.all(targets.map(async (n) => ({ name: n.name, ...(await api.digest(n)) })))
        if (new Set(digests.map((d) => d.revision)).size === 1 && new Set(digests.map((d) => d.digest)).size === 1) return digests
        if (Date.now() > deadline) return digests
        await Bun.sleep(50)
      }
    },
    async digest(node) {
      if (node.server?.cluster) return node.server.cluster.digest()
      if (node.running()) {
        const d = (await clusterStatus(node)).digest
        return { revision: d.revision, digest: d.digest, records: d.records }
      }
      // a stopped node: its store opened read-write, as the node itself would open it
      const store = await openStore(node.dataDir, { warn: () => undefined })
      try {
        return await stateDigest(store)
      } finally {
        await store.close()
      }
    },
    async stop() {
      const errors: unknown[] = []
      for (const n of nodes) {
        try {
          if (n.kind === 'child') {
            if (n.running()) {
              n.child!.proc.kill(9)
              await n.child!.proc.exited
            }
          } else await api.stopNode(n)
        } catch (e) {
          errors.push(e)
        }
      }
      etcdClient.close()
      if (ownEtcd) await etcd.stop().catch((e) => errors.push(e))
      rmSync(root, { recursive: true, force: true })
      if (errors.length > 0) throw new Error(`stopping the cluster: ${errors.map(String).join('; ')}`)
    },
  }

  try {
    const kinds = (i: number): NodeKind => (Array.isArray(opts.kind) ? (opts.kind[i] ?? 'in-process') : (opts.kind ?? 'in-process'))
    const count = opts.nodes ?? 3
    const first = makeNode('node-1', kinds(0), join(root, 'node-1'))
    nodes.push(first)
    await first.start()
    caPem = readFileSync(join(first.dataDir, 'pki', 'root-ca.cert.pem'), 'utf8')
    for (let i = 1; i < count; i++) await api.addNode(`node-${i + 1}`, { kind: kinds(i), from: first })
  } catch (e) {
    const tails = nodes.map((n) => `--- ${n.name}\n${n.logTail().slice(-4000)}`).join('\n')
    await api.stop().catch(() => undefined)
    throw new Error(`the test cluster did not start: ${String(e)}\n${tails}`)
  }
  return api
}
