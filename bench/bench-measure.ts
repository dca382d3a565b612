/**
 * One server figure of `bun run bench`: load on one HTTP operation, with the server's CPU per request beside req/s and
 * latency. The load generator is wrk (bench/wrk-bench.lua) when it is installed, otherwise the in-process closed-loop
 * client of bench-load.ts (a Bun fetch client on the same cores, noisier: see bench/README.md).
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { startStealReading, withCpuOf } from './bench-cpu.ts'
import { runLoad } from './bench-load.ts'

const WRK_SCRIPT = join(import.meta.dir, 'wrk-bench.lua')

/** The wrk executable on PATH, or undefined (then the in-process client is used). BENCH_NO_WRK=1 forces the latter. */
export const WRK: string | undefined = (() => {
  if (process.env.BENCH_NO_WRK === '1') return undefined
  return Bun.which('wrk') ?? undefined
})()

export interface LoadSpec {
  url: string
  method?: 'GET' | 'POST'
  /** A JSON body; each `{n}` becomes a number unique in the run. */
  body?: string
  /** zt-session tokens, one per wrk thread (in-process: one per worker, round robin). */
  sessions?: string[]
  /** OIDC access tokens sent as `Authorization: Bearer`, one per wrk thread (in-process: per worker, round robin). */
  bearers?: string[]
  connections: number
  durationMs: number
}

export interface Measured {
  /** Answers received, whatever their status. */
  requests: number
  /** Answers outside 2xx/3xx plus socket errors. */
  errors: number
  perSecond: number
  p50Ms: number
  p99Ms: number
  /** Server CPU seconds over the run (NaN where /proc is unreadable). */
  cpuSeconds: number
  /** Server CPU microseconds per answered request. */
  cpuUsPerRequest: number
  /** Percentage of the machine's CPU time stolen by the hypervisor during the run (NaN if unknown). */
  stealPercent: number
}

/** Loads the operation for `spec.durationMs` and reads `serverPid`'s CPU around it. */
export async function measure(serverPid: number, spec: LoadSpec): Promise<Measured> {
  const steal = startStealReading()
  const { result, cpuSeconds } = await withCpuOf(serverPid, () => (WRK ? loadWithWrk(WRK, spec) : loadInProcess(spec)))
  return { ...result, cpuSeconds, cpuUsPerRequest: result.requests > 0 ? (cpuSeconds * 1e6) / result.requests : NaN, stealPercent: steal() }
}

type Load = Omit<Measured, 'cpuSeconds' | 'cpuUsPerRequest' | 'stealPercent'>

async function loadWithWrk(wrk: string, spec: LoadSpec): Promise<Load> {
  const threads = Math.min(2, spec.connections)
  const seconds = Math.max(1, Math.round(spec.durationMs / 1000))
  const env: Record<string, string> = { ...(process.env as Record<string, string>), WRK_METHOD: spec.method ?? 'GET' }
  if (spec.body !== undefined) env.WRK_BODY = spec.body
  if (spec.sessions?.length) env.WRK_SESSIONS = spec.sessions.join(',')
  if (spec.bearers?.length) env.WRK_BEARERS = spec.bearers.join(',')
  const proc = Bun.spawn([wrk, '-t', String(threads), '-c', String(spec.connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', WRK_SCRIPT, spec.url], {
    env,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const line = /^WRK_RESULT (\{.*\})$/m.exec(out)
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${err.trim() || out.trim()}`)
  const r = JSON.parse(line[1]) as { requests: number; durationUs: number; statusErrors: number; socketErrors: number; p50Us: number; p99Us: number }
  return {
    requests: r.requests,
    errors: r.statusErrors + r.socketErrors,
    perSecond: r.requests / (r.durationUs / 1e6),
    p50Ms: r.p50Us / 1000,
    p99Ms: r.p99Us / 1000,
  }
}

const tlsOff = { rejectUnauthorized: false }

async function loadInProcess(spec: LoadSpec): Promise<Load> {
  const res = await runLoad({
    concurrency: spec.connections,
    durationMs: spec.durationMs,
    request: async (w, i) => {
      const headers: Record<string, string> = {}
      if (spec.sessions?.length) headers['zt-session'] = spec.sessions[w % spec.sessions.length]
      if (spec.bearers?.length) headers.authorization = `Bearer ${spec.bearers[w % spec.bearers.length]}`
      if (spec.body !== undefined) headers['content-type'] = 'application/json'
      const r = await fetch(spec.url, {
        method: spec.method ?? 'GET',
        headers,
        body: spec.body?.replaceAll('{n}', `${w}-${i}`),
        tls: tlsOff,
      } as RequestInit)
      await r.arrayBuffer()
      return r.status < 400
    },
  })
  return { requests: res.count + res.errors, errors: res.errors, perSecond: res.perSecond, p50Ms: res.p50Ms, p99Ms: res.p99Ms }
}

/** Whether wrk is available, checked once at start so the run says which client it uses. */
export function loadGeneratorNote(): string {
  if (WRK) {
    const version = spawnSync(WRK, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0]?.replace(/ Copyright.*$/, '').trim()
    return `load generator: ${version || 'wrk'} (bench/wrk-bench.lua)`
  }
  return 'load generator: in-process Bun fetch client (wrk not found; `apt-get install wrk` for steadier figures)'
}

/** Calls `onLine` with every line of a process's output stream as it arrives (the last one even without a newline). */
export async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true })
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  }
  if (pending) onLine(pending)
}
