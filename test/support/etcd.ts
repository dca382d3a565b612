// A real etcd cluster for tests and benchmarks: `etcd` (Debian's etcd-server, installed by .ci/run) started as N
// members on free loopback ports with a temp data dir, each member's output in <dir>/<name>.log. Members can be killed
// (SIGKILL or SIGTERM) and started again on their data dir (--initial-cluster-state existing). etcd keeps its default
// safety: every WAL entry is fsynced, default heartbeat (100 ms) and election timeout (1000 ms).
import type { Subprocess } from 'bun'
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface EtcdMember {
  name: string
  clientUrl: string
  /** The running process's id, undefined while the member is down. */
  pid(): number | undefined
  /** Sends the signal (default SIGKILL) and waits until the process is gone. */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>
  /**
   * Starts the member again on its data dir (--initial-cluster-state existing). Waits until it is healthy (has a
   * leader) when a majority of members runs with it, else only until it answers on its client URL.
   */
  start(): Promise<void>
  isRunning(): boolean
}

export interface EtcdCluster {
  endpoints: string[]
  members: EtcdMember[]
  /** The member that is leader (waits up to 10 s for an election). */
  leader(): Promise<EtcdMember>
  /** Stops every member together (SIGTERM, SIGKILL after 3 s) and removes the data dir. */
  stop(): Promise<void>
  dir: string
}

const STARTUP_TIMEOUT_MS = 20_000
const LEADER_TIMEOUT_MS = 10_000
const STOP_GRACE_MS = 3_000
const POLL_MS = 50

/** Every etcd process this test process started and that may still run, killed (-9) if the process exits early. */
const live = new Set<Subprocess>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const proc of live) {
      try {
        proc.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  })
}

/** True when an `etcd` binary is on PATH. */
export function etcdAvailable(): boolean {
  return Bun.which('etcd') !== null
}

/** Why etcd tests are skipped, for a printed line (undefined when they run). */
export function etcdSkipReason(): string | undefined {
  return etcdAvailable() ? undefined : 'etcd is not on PATH (apt-get install etcd-server; .ci/run installs it)'
}

/** A loopback port that was free a moment ago (bound on port 0, then closed). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port was assigned'))))
    })
  })
}

async function fetchJson(url: string, body?: unknown, timeoutMs = 1000): Promise<Record<string, unknown> | undefined> {
  try {
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const json: unknown = await res.json()
    return typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

async function healthy(clientUrl: string): Promise<boolean> {
  const json = await fetchJson(`${clientUrl}/health`)
  return json?.health === 'true' || json?.health === true
}

async function answers(clientUrl: string): Promise<boolean> {
  return (await fetchJson(`${clientUrl}/version`)) !== undefined
}

/** The member id and the leader id a member reports, both decimal strings. */
async function memberStatus(clientUrl: string): Promise<{ memberId: string; leader: string } | undefined> {
  const json = await fetchJson(`${clientUrl}/v3/maintenance/status`, {})
  const header = json?.header as Record<string, unknown> | undefined
  if (!json || !header || typeof header.member_id !== 'string' || typeof json.leader !== 'string') return undefined
  return { memberId: header.member_id, leader: json.leader }
}

class Member implements EtcdMember {
  private proc: Subprocess | undefined
  private exited: Promise<unknown> = Promise.resolve()

  constructor(
    readonly name: string,
    readonly clientUrl: string,
    private readonly args: string[],
    private readonly logFile: string,
    private readonly cluster: { members: Member[] },
  ) {}

  pid(): number | undefined {
    return this.isRunning() ? this.proc?.pid : undefined
  }

  isRunning(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null
  }

  spawn(state: 'new' | 'existing'): void {
    if (this.isRunning()) throw new Error(`etcd member ${this.name} is already running`)
    const fd = openSync(this.logFile, 'a')
    try {
      const proc = Bun.spawn(['etcd', ...this.args, '--initial-cluster-state', state], {
        stdin: 'ignore',
        stdout: fd,
        stderr: fd,
      })
      this.proc = proc
      live.add(proc)
      this.exited = proc.exited.then(() => live.delete(proc))
    } finally {
      closeSync(fd)
    }
  }

  async kill(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    if (!this.isRunning()) return
    this.proc?.kill(signal)
    await this.exited
  }

  /** SIGTERM, then SIGKILL if it is still there after `graceMs` (a last member without quorum may ignore SIGTERM). */
  async stop(graceMs: number): Promise<void> {
    if (!this.isRunning()) return
    this.proc?.kill('SIGTERM')
    const timer = setTimeout(() => {
      if (this.isRunning()) this.proc?.kill('SIGKILL')
    }, graceMs)
    await this.exited
    clearTimeout(timer)
  }

  async start(): Promise<void> {
    this.spawn('existing')
    const quorum = this.cluster.members.filter((m) => m.isRunning()).length > this.cluster.members.length / 2
    await this.waitUntil(quorum ? healthy : answers, STARTUP_TIMEOUT_MS)
  }

  async waitUntil(check: (clientUrl: string) => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (!this.isRunning()) throw new Error(`etcd member ${this.name} exited (code ${this.proc?.exitCode}); see ${this.logFile}`)
      if (await check(this.clientUrl)) return
      await Bun.sleep(POLL_MS)
    }
    throw new Error(`etcd member ${this.name} not ready after ${timeoutMs} ms; see ${this.logFile}`)
  }
}

/** Starts an etcd cluster of `members` (default 3) and waits until every member is healthy. */
export async function startEtcdCluster(opts: { members?: number } = {}): Promise<EtcdCluster> {
  const count = opts.members ?? 3
  if (!etcdAvailable()) throw new Error(etcdSkipReason())
  installExitHook()
  const dir = mkdtempSync(join(tmpdir(), 'edgeplane-etcd-'))
  const ports: { client: number; peer: number }[] = []
  const taken = new Set<number>()
  while (ports.length < count) {
    const client = await freePort()
    const peer = await freePort()
    // two binds in a row can get the same port once the first is closed
    if (client === peer || taken.has(client) || taken.has(peer)) continue
    taken.add(client)
    taken.add(peer)
    ports.push({ client, peer })
  }
  const names = ports.map((_, i) => `m${i + 1}`)
  const initialCluster = names.map((name, i) => `${name}=http://127.0.0.1:${ports[i].peer}`).join(',')
  const token = `edgeplane-test-${process.pid}-${Date.now()}`
  const shared = { members: [] as Member[] }
  for (let i = 0; i < count; i++) {
    const name = names[i]
    const clientUrl = `http://127.0.0.1:${ports[i].client}`
    const peerUrl = `http://127.0.0.1:${ports[i].peer}`
    const args = [
      '--name', name,
      '--data-dir', join(dir, name),
      '--listen-client-urls', clientUrl,
      '--advertise-client-urls', clientUrl,
      '--listen-peer-urls', peerUrl,
      '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', initialCluster,
      '--initial-cluster-token', token,
      '--logger', 'zap',
      '--log-outputs', 'stderr',
    ]
    shared.members.push(new Member(name, clientUrl, args, join(dir, `${name}.log`), shared))
  }
  const stop = async () => {
    await Promise.all(shared.members.map((m) => m.stop(STOP_GRACE_MS)))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (const m of shared.members) m.spawn('new')
    await Promise.all(shared.members.map((m) => m.waitUntil(healthy, STARTUP_TIMEOUT_MS)))
  } catch (e) {
    await stop()
    throw e
  }
  return {
    endpoints: shared.members.map((m) => m.clientUrl),
    members: shared.members,
    dir,
    stop,
    async leader() {
      const deadline = Date.now() + LEADER_TIMEOUT_MS
      while (Date.now() < deadline) {
        for (const m of shared.members) {
          if (!m.isRunning()) continue
          const s = await memberStatus(m.clientUrl)
          if (s && s.leader !== '0' && s.leader === s.memberId) return m
        }
        await Bun.sleep(POLL_MS)
      }
      throw new Error(`no etcd member is leader after ${LEADER_TIMEOUT_MS} ms`)
    },
  }
}
