/**
 * `bun run bench transports`: the transports that could carry the controller (issue 14, part 3), each a mode of
 * bench/floor-server.ts answering the same bytes, beside the controller itself, measured in turns:
 * - keep-alive: wrk (or the in-process client) with 50 connections on GET /version, server CPU per request and req/s;
 * - new connections, each presenting a client certificate (8 at once, in-process): raw mTLS handshakes (connect,
 *   close), and one request per connection: GET /peer on a transport (the modes that can read the client's chain
 *   read it), a certificate login on a controller.
 * Ratios are medians of per-round ratios: keep-alive CPU per request against the bridge's, and per connection the
 * handshake's CPU over the request's (what `bun run bench` reports for certificate logins).
 * BENCH_TRANSPORTS=bridge,listen limits the modes; BENCH_BASE_MAIN=<other checkout>/src/main.ts adds that
 * controller as a second one (before/after in one run).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { withCpuOf } from './bench-cpu.ts'
import { startFloor } from './bench-floor.ts'
import { printFigure, runLoad } from './bench-load.ts'
import { measure, type Measured } from './bench-measure.ts'
import { CERT_LOGIN_REQUEST, CONCURRENT_LOGINS, connectMtls, enrolledClient, requestOnNewConnection, type MtlsClient } from './bench-pki.ts'
import { FLOOR_MODES, type FloorMode } from './floor-server.ts'
import { startController, type Controller } from './policy-scale.ts'

const PASSWORD = 'bench-pass-1'
const READ_CONNECTIONS = 50
const PEER_REQUEST = 'GET /peer HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'

interface Contender {
  name: string
  pid: number
  url: string
  /** The request sent on each new connection. */
  newConnectionRequest: string
  client: MtlsClient
  stop(): Promise<void>
}

/** One new-connection figure: operations per second and the server's CPU per operation. */
interface PerConnection {
  perSecond: number
  cpuUsPerOp: number
}

async function perConnection(pid: number, durationMs: number, op: () => Promise<boolean>): Promise<PerConnection> {
  const { result, cpuSeconds } = await withCpuOf(pid, () => runLoad({ concurrency: CONCURRENT_LOGINS, durationMs, request: op }))
  const ops = result.count + result.errors
  if (result.errors > 0) console.log(`  (${result.errors} of ${ops} operations failed)`)
  return { perSecond: result.perSecond, cpuUsPerOp: ops > 0 ? (cpuSeconds * 1e6) / ops : NaN }
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const range = (values: readonly number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`

async function controllerContender(name: string, dataDir: string, main?: string): Promise<{ contender: Contender; controller: Controller }> {
  const controller = await startController(dataDir, PASSWORD, [], main)
  const res = await fetch(`${controller.url}/edge/management/v1/authenticate?method=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    tls: { rejectUnauthorized: false },
  } as RequestInit)
  const adminToken = ((await res.json()) as { data: { token: string } }).data.token
  const client = await enrolledClient({ url: controller.url, adminToken }, `bench-transports-${name.replace(/\W+/g, '-')}`)
  return { controller, contender: { name, pid: controller.pid, url: controller.url, newConnectionRequest: CERT_LOGIN_REQUEST, client, stop: () => controller.stop() } }
}

export async function runTransports(opts: { seconds: number; rounds: number }): Promise<void> {
  const durationMs = opts.seconds * 1000
  const modes = (process.env.BENCH_TRANSPORTS?.split(',') ?? [...FLOOR_MODES]) as FloorMode[]
  for (const m of modes) if (!FLOOR_MODES.includes(m)) throw new Error(`unknown transport ${m}; one of ${FLOOR_MODES.join(', ')}`)
  const dirs: string[] = []
  const contenders: Contender[] = []
  try {
    const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-transports-'))
    dirs.push(dataDir)
    const { contender: self, controller } = await controllerContender('controller', dataDir)
    contenders.push(self)
    const body = await (await fetch(`${controller.url}/version`, { tls: { rejectUnauthorized: false } } as RequestInit)).text()
    for (const mode of modes) {
      const floor = await startFloor(mode, dataDir, body)
      contenders.push({ name: mode, pid: floor.pid, url: floor.url, newConnectionRequest: PEER_REQUEST, client: self.client, stop: floor.stop })
    }
    if (process.env.BENCH_BASE_MAIN) {
      const baseDir = mkdtempSync(join(tmpdir(), 'edgeplane-bench-transports-base-'))
      dirs.push(baseDir)
      contenders.push((await controllerContender('controller (base)', baseDir, process.env.BENCH_BASE_MAIN)).contender)
    }
    console.log(`transports: ${contenders.map((c) => c.name).join(', ')}; ${opts.seconds}s per figure, ${opts.rounds} rounds in turns, ${navigator.hardwareConcurrency} cores`)

    const port = (c: Contender) => Number(new URL(c.url).port)
    const keepAlive = contenders.map((): Measured[] => [])
    const handshakes = contenders.map((): PerConnection[] => [])
    const requests = contenders.map((): PerConnection[] => [])
    for (const c of contenders) await measure(c.pid, { url: `${c.url}/version`, connections: READ_CONNECTIONS, durationMs: 1000 })
    for (let r = 0; r < opts.rounds; r++) {
      for (const [i, c] of contenders.entries()) keepAlive[i].push(await measure(c.pid, { url: `${c.url}/version`, connections: READ_CONNECTIONS, durationMs }))
      for (const [i, c] of contenders.entries()) {
        handshakes[i].push(await perConnection(c.pid, durationMs, () => connectMtls(port(c), c.client, (_socket, done) => done(true))))
        requests[i].push(await perConnection(c.pid, durationMs, () => requestOnNewConnection(port(c), c.client, c.newConnectionRequest)))
      }
    }

    const bridge = contenders.findIndex((c) => c.name === 'bridge')
    const perRound = <T>(runs: readonly T[], base: readonly T[] | undefined, f: (a: T, b: T) => number) =>
      base ? median(runs.map((m, r) => f(m, base[r]))) : NaN
    console.log(`\nkeep-alive GET /version, c=${READ_CONNECTIONS}: median round, range over rounds, ratios to the bridge (median of per-round ratios)`)
    for (const [i, c] of contenders.entries()) {
      const cpu = keepAlive[i].map((m) => m.cpuUsPerRequest)
      const rps = keepAlive[i].map((m) => m.perSecond)
      const vsBridge = bridge < 0 ? '' : `, CPU ${perRound(keepAlive[i], keepAlive[bridge], (a, b) => a.cpuUsPerRequest / b.cpuUsPerRequest).toFixed(2)}× bridge, ` +
        `req/s ${perRound(keepAlive[i], keepAlive[bridge], (a, b) => a.perSecond / b.perSecond).toFixed(2)}× bridge`
      const errors = keepAlive[i].reduce((n, m) => n + m.errors, 0)
      const steal = median(keepAlive[i].map((m) => m.stealPercent))
      printFigure(`  ${c.name}`, median(rps), 'req/s', `${median(cpu).toFixed(1).padStart(6)} µs CPU/req (${range(cpu, 1)}), req/s ${range(rps, 0)}${vsBridge}` +
        `${errors ? `, ${errors} errors` : ''}${steal >= 1 ? `, steal ${steal.toFixed(0)}%` : ''}`)
    }
    console.log(`\nnew connections with a client certificate, c=${CONCURRENT_LOGINS}: handshake only, then one request each (a transport: GET /peer; a controller: certificate login)`)
    for (const [i, c] of contenders.entries()) {
      const hs = handshakes[i]
      const rq = requests[i]
      printFigure(`  ${c.name}: handshakes`, median(hs.map((h) => h.perSecond)), 'op/s', `${median(hs.map((h) => h.cpuUsPerOp)).toFixed(0).padStart(6)} µs CPU/op (${range(hs.map((h) => h.cpuUsPerOp), 0)})`)
      const cpuRatio = median(rq.map((q, r) => hs[r].cpuUsPerOp / q.cpuUsPerOp))
      const rpsRatio = median(rq.map((q, r) => q.perSecond / hs[r].perSecond))
      printFigure(`  ${c.name}: ${c.newConnectionRequest === CERT_LOGIN_REQUEST ? 'certificate logins' : 'GET /peer'}`, median(rq.map((q) => q.perSecond)), 'req/s',
        `${median(rq.map((q) => q.cpuUsPerOp)).toFixed(0).padStart(6)} µs CPU/op (${range(rq.map((q) => q.cpuUsPerOp), 0)}), ` +
          `handshake CPU / request CPU ${cpuRatio.toFixed(2)}, throughput ratio ${rpsRatio.toFixed(2)}`)
    }
  } finally {
    await Promise.all(contenders.map((c) => c.stop()))
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  }
}
