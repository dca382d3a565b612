// The last resort of `edgeplane run` (src/lib/last-resort.ts): an exception or rejection nothing caught is logged
// once, at level error, with its stack and origin, and the process goes on. Checked on Bun itself in a child process,
// since what keeps a process alive is the runtime's business.
import { describe, expect, it } from 'bun:test'
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { installLastResort, type StrayFailure } from '../../../src/lib/last-resort.ts'

describe('installLastResort', () => {
  it('logs each failure once with its stack and origin, and removes its handlers when asked', () => {
    const proc = new EventEmitter()
    const seen: StrayFailure[] = []
    const remove = installLastResort(proc, (f) => seen.push(f))
    proc.emit('uncaughtException', new Error('thrown in a timer'), 'uncaughtException')
    proc.emit('unhandledRejection', new Error('rejected'), Promise.resolve())
    proc.emit('unhandledRejection', 'a string')
    expect(seen.map((f) => f.origin)).toEqual(['uncaughtException', 'unhandledRejection', 'unhandledRejection'])
    expect(seen[0].err).toContain('thrown in a timer')
    expect(seen[0].err).toContain('last-resort.test.ts')
    expect(seen[2].err).toBe('a string')
    remove()
    expect(proc.listenerCount('uncaughtException') + proc.listenerCount('unhandledRejection')).toBe(0)
  })

  it('survives a log sink that throws, and a thrown value that cannot be shown', () => {
    const proc = new EventEmitter()
    installLastResort(proc, () => {
      throw new Error('the sink is broken')
    })
    const hostile = { toString: () => { throw new Error('no') } }
    expect(() => proc.emit('uncaughtException', hostile)).not.toThrow()
    const seen: StrayFailure[] = []
    const p2 = new EventEmitter()
    installLastResort(p2, (f) => seen.push(f))
    p2.emit('unhandledRejection', hostile)
    expect(seen[0].err).toBe('a thrown value that cannot be shown')
  })

  it('keeps a Bun process alive through a throw in a timer, in a microtask, in an event listener and a rejection', async () => {
    const script = `
      import { installLastResort } from ${JSON.stringify(join(import.meta.dir, '..', '..', '..', 'src', 'lib', 'last-resort.ts'))}
      import { EventEmitter } from 'node:events'
      installLastResort(process, (f) => console.log(JSON.stringify({ origin: f.origin, first: f.err.split('\\n')[0] })))
      setTimeout(() => { throw new Error('in a timer') }, 1)
      setTimeout(() => queueMicrotask(() => { throw new Error('in a microtask') }), 2)
      setTimeout(() => new EventEmitter().emit('error', new Error('an emitter error')), 3)
      setTimeout(() => void Promise.reject(new Error('a rejection')), 4)
      setTimeout(() => console.log('alive'), 50)
    `
    const proc = Bun.spawn(['bun', '-e', script], { stdout: 'pipe', stderr: 'pipe' })
    const out = await new Response(proc.stdout).text()
    expect(await proc.exited).toBe(0)
    const lines = out.trim().split('\n')
    expect(lines.at(-1)).toBe('alive')
    expect(lines.slice(0, -1).map((l) => JSON.parse(l)).sort((a, b) => a.first.localeCompare(b.first))).toEqual([
      { origin: 'unhandledRejection', first: 'Error: a rejection' },
      { origin: 'uncaughtException', first: 'Error: an emitter error' },
      { origin: 'uncaughtException', first: 'Error: in a microtask' },
      { origin: 'uncaughtException', first: 'Error: in a timer' },
    ])
  })
})
