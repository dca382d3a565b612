// The benchmark's measuring tools: CPU time of a process from /proc (bench/bench-cpu.ts), and the wrk script
// (bench/wrk-bench.lua through bench/bench-measure.ts): unique bodies per request, one session per wrk thread, and
// the count of answers it reports against what a server received.
import { describe, expect, it } from 'bun:test'
import { cpuSecondsOf, startStealReading, withCpuOf } from '../../../bench/bench-cpu.ts'
import { measure, WRK } from '../../../bench/bench-measure.ts'

const linux = process.platform === 'linux'

describe('server CPU from /proc', () => {
  it.skipIf(!linux)('counts the CPU a process spends and not the time it waits', async () => {
    // busy until the process itself says it has spent 0.3 s of CPU (however long a shared machine makes that take)
    const busy = await withCpuOf(process.pid, async () => {
      const start = process.cpuUsage()
      let x = 0
      for (;;) {
        const used = process.cpuUsage(start)
        if (used.user + used.system >= 300_000) return x
        for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1)
      }
    })
    // /proc counts in 10 ms ticks
    expect(busy.cpuSeconds).toBeGreaterThanOrEqual(0.28)
    // sleeping costs nothing (the other threads of the test process may run a little meanwhile)
    const idle = await withCpuOf(process.pid, () => Bun.sleep(300))
    expect(idle.cpuSeconds).toBeLessThan(0.15)
  })

  it('reads nothing for a process that does not exist, and the steal reading stays a percentage', () => {
    expect(cpuSecondsOf(2 ** 30)).toBeUndefined()
    const steal = startStealReading()()
    if (!Number.isNaN(steal)) expect(steal).toBeGreaterThanOrEqual(0)
  })
})

describe.skipIf(!WRK)('wrk script', () => {
  it('sends a unique body per request, one session per thread, and reports every answer', async () => {
    const bodies: string[] = []
    const sessions = new Set<string>()
    let answered = 0
    let refused = 0
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        sessions.add(req.headers.get('zt-session') ?? '')
        if (req.method === 'POST') bodies.push(await req.text())
        answered++
        // every tenth create is refused: wrk counts it as an error
        if (bodies.length % 10 === 0) {
          refused++
          return new Response('no', { status: 409 })
        }
        return new Response('ok', { status: 201 })
      },
    })
    try {
      const m = await measure(process.pid, {
        url: `http://127.0.0.1:${server.port}/identities`,
        method: 'POST',
        body: '{"name":"bench-{n}"}',
        sessions: ['s-one', 's-two'],
        connections: 4,
        durationMs: 1000,
      })
      expect(bodies.length).toBeGreaterThan(10)
      expect(bodies.every((b) => /^\{"name":"bench-\d+-\d+"\}$/.test(b))).toBe(true)
      expect(new Set(bodies).size).toBe(bodies.length)
      expect([...sessions].sort()).toEqual(['s-one', 's-two'])
      // wrk counts the answers it read; a request cut by the end of the run may have reached the server
      expect(m.requests).toBeLessThanOrEqual(answered)
      expect(m.requests).toBeGreaterThanOrEqual(answered - 4)
      expect(m.errors).toBeLessThanOrEqual(refused)
      expect(m.errors).toBeGreaterThanOrEqual(refused - 4)
      expect(m.errors).toBeGreaterThan(0)
    } finally {
      server.stop(true)
    }
  })
})
