// The structured logger: request lines hand-built in pino's shape, gathered on a file descriptor and written together,
// in order with every other line.
import { afterEach, describe, expect, it } from 'bun:test'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger, noteLogger, type RequestLine } from '../../../src/lib/logger.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function logFile(): { fd: number; lines(): Record<string, unknown>[] } {
  const dir = mkdtempSync(join(tmpdir(), 'logger-'))
  dirs.push(dir)
  const path = join(dir, 'log')
  const fd = openSync(path, 'w')
  return {
    fd,
    lines: () => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

const line = (n: number): RequestLine => ({ requestId: `r${n}`, method: 'GET', path: '/p"q\\', status: 200, ms: 1.5, remoteAddress: '127.0.0.1' })

describe('logger', () => {
  it('case=a request line has pino\'s shape: level, time, the fields in order, msg "request"; strings escaped', () => {
    const out: string[] = []
    const logger = createLogger({ level: 'info', write: (l) => out.push(l) })
    logger.request(line(1))
    expect(out).toHaveLength(1)
    const parsed = JSON.parse(out[0])
    expect(Object.keys(parsed)).toEqual(['level', 'time', 'requestId', 'method', 'path', 'status', 'ms', 'remoteAddress', 'msg'])
    expect(parsed).toMatchObject({ level: 'info', requestId: 'r1', method: 'GET', path: '/p"q\\', status: 200, ms: 1.5, msg: 'request' })
    expect(new Date(parsed.time).toISOString()).toBe(parsed.time)
  })

  it('case=on a file descriptor request lines wait; any other line writes them first, in order; flush() writes them', () => {
    const file = logFile()
    const logger = createLogger({ level: 'info', fd: file.fd })
    logger.request(line(1))
    logger.request(line(2))
    expect(file.lines()).toEqual([])
    logger.warn({}, 'warning: something')
    expect(file.lines().map((l) => l.requestId ?? l.msg)).toEqual(['r1', 'r2', 'warning: something'])
    logger.request(line(3))
    logger.flush()
    expect(file.lines().map((l) => l.requestId ?? l.msg)).toEqual(['r1', 'r2', 'warning: something', 'r3'])
    closeSync(file.fd)
  })

  it('case=enough waiting lines are written without a flush', () => {
    const file = logFile()
    const logger = createLogger({ level: 'info', fd: file.fd })
    let n = 0
    while (file.lines().length === 0 && n < 10_000) logger.request(line(n++))
    expect(n).toBeLessThan(10_000)
    expect(file.lines().length).toBe(n)
    logger.flush()
    closeSync(file.fd)
  })

  it('case=--log-level warn writes no request line', () => {
    const out: string[] = []
    const logger = createLogger({ level: 'warn', write: (l) => out.push(l) })
    logger.request(line(1))
    logger.info({}, 'an info line')
    logger.warn({}, 'warning: kept')
    expect(out.map((l) => JSON.parse(l).msg)).toEqual(['warning: kept'])
  })
})

describe('noteLogger', () => {
  it('case=a line about a request carries its id (any shortid: its alphabet has . and -) at the level its wording says', () => {
    const lines: string[] = []
    const note = noteLogger(createLogger({ level: 'info', write: (l) => lines.push(l) }))
    note('request a.b-C1 unhandled error on GET /x: Error: boom')
    note('request Zz9.-x GET /x 200 1.0ms')
    note('warning: something')
    expect(lines.map((l) => JSON.parse(l)).map((l) => [l.level, l.requestId])).toEqual([
      ['error', 'a.b-C1'],
      ['info', 'Zz9.-x'],
      ['warn', undefined],
    ])
  })
})
