/**
 * The real OpenZiti controller as a target of `bun run bench control`, when BENCH_ZITI names a `ziti` binary (CI never
 * has one: without it that part is skipped). It runs as `ziti edge quickstart --no-router` on a temporary home: one
 * controller, a Raft cluster of one member (what the quickstart of v2 makes), the APIs and the control plane on one
 * port told apart by ALPN, as edgeplane's default. The bench starts it, reads its CPU and memory from /proc as it does
 * edgeplane's, and removes its home when it stops; nothing of it is kept or committed.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Api } from './policy-scale.ts'

/** A controller the control-plane benchmark drives: its API and control port, its process. */
export interface ControlTarget {
  /** `edgeplane` or `ziti` (the real controller). */
  name: string
  /** https://host:port of the APIs (the control plane speaks on the same port by ALPN). */
  url: string
  host: string
  port: number
  pid: number
  adminPassword: string
  /** Requests in flight when a scenario is loaded through the Management API. */
  loadConcurrency: number
  /** Where its output went, when it is not passed on (the real controller's log). */
  logPath?: string
  stop(): Promise<void>
}

/** The `ziti` binary BENCH_ZITI names, when it is an executable file; undefined otherwise (the part is skipped). */
export function zitiBinary(env: Record<string, string | undefined> = process.env): string | undefined {
  const bin = env.BENCH_ZITI
  if (!bin) return undefined
  try {
    accessSync(bin, constants.X_OK)
    return bin
  } catch {
    console.log(`BENCH_ZITI=${bin} is not an executable file: the real controller is skipped`)
    return undefined
  }
}

/** A TCP port free on 127.0.0.1 now. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * Starts `bin edge quickstart --no-router` on a new temporary home and free ports; resolves once the admin can log
 * in (the quickstart initialises its Raft cluster and the admin after the controller listens: 10-20 s).
 */
export async function startZiti(bin: string, adminPassword: string): Promise<ControlTarget> {
  const home = mkdtempSync(join(tmpdir(), 'bench-ziti-'))
  const [port, routerPort] = [await freePort(), await freePort()]
  const logPath = join(home, 'quickstart.log')
  const proc = Bun.spawn(
    [bin, 'edge', 'quickstart', '--home', home, '--ctrl-address', '127.0.0.1', '--ctrl-port', String(port),
      '--router-address', '127.0.0.1', '--router-port', String(routerPort), '--no-router', '--password', adminPassword],
    { stdout: Bun.file(logPath), stderr: Bun.file(join(home, 'quickstart.err')), stdin: 'ignore' },
  )
  const url = `https://127.0.0.1:${port}`
  const stop = async () => {
    proc.kill('SIGINT')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000)
    await proc.exited
    clearTimeout(timer)
    if (process.env.BENCH_KEEP_DATA) console.log(`  the real controller's home kept (BENCH_KEEP_DATA): ${home}`)
    else rmSync(home, { recursive: true, force: true })
  }
  const deadline = performance.now() + 120_000
  for (;;) {
    if (proc.exitCode !== null) {
      const err = await Bun.file(join(home, 'quickstart.err')).text().catch(() => '')
      rmSync(home, { recursive: true, force: true })
      throw new Error(`ziti edge quickstart exited (${proc.exitCode}): ${err.split('\n').slice(-5).join(' | ')}`)
    }
    try {
      await new Api(`${url}/edge/management/v1`).login('admin', adminPassword)
      break
    } catch {
      if (performance.now() > deadline) {
        await stop()
        throw new Error('the real controller did not let the admin log in within 120 s')
      }
      await Bun.sleep(500)
    }
  }
  return { name: 'ziti', url, host: '127.0.0.1', port, pid: proc.pid, adminPassword, loadConcurrency: 16, logPath: join(home, 'quickstart.err'), stop }
}
