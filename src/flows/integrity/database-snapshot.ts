/**
 * Database snapshots (`POST /database/snapshot`, and the copy the integrity fix writes first): a consistent,
 * compacted copy of the open store (store/store-copy.ts `copyStore`, handed in) named as the real controller names them,
 * `<dir>/<db file>-YYYYMMDD-HHMMSS` (UTC), in the data directory or the configured snapshot directory. A snapshot is
 * a whole LMDB environment: put in a new data directory as `edgeplane.mdb` beside a copy of the `pki` directory, it
 * starts as the controller was when it was taken.
 */
import { existsSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'

/** The least time between two snapshots asked for through the API (the real controller's). */
export const SNAPSHOT_EVERY_MS = 60_000

export interface DatabaseSnapshots {
  /** A snapshot asked for by an operator: at most one per minute, else 429 RATE_LIMITED. Answers its path. */
  take(): Promise<string>
  /** A snapshot the controller needs (before the integrity fix): never refused. Answers its path. */
  write(): Promise<string>
}

/** `dbPath`: the store's file; `copyStore` writes a consistent copy of it to a path; `dir`: where they go (default beside it). */
export function createDatabaseSnapshots(deps: { dbPath: string; copyStore: (destPath: string) => Promise<void>; clock: Clock; dir?: string }): DatabaseSnapshots {
  const dir = deps.dir ?? dirname(deps.dbPath)
  let lastTakenAt: number | undefined
  // names of the snapshots being written: two written in the same second (an operator's and the integrity fix's)
  // must not both pick the one free name
  const writing = new Set<string>()
  const write = async () => {
    const base = join(dir, `${basename(deps.dbPath)}-${stamp(deps.clock.now())}`)
    let path = base
    for (let n = 1; existsSync(path) || writing.has(path); n++) path = `${base}-${n}`
    writing.add(path)
    try {
      await deps.copyStore(path)
    } finally {
      writing.delete(path)
    }
    return path
  }
  return {
    async take() {
      const now = deps.clock.now()
      if (lastTakenAt !== undefined && now - lastTakenAt < SNAPSHOT_EVERY_MS) {
        throw ApiError.withMessage('RATE_LIMITED', 'may snapshot database at most once per minute')
      }
      lastTakenAt = now
      return write()
    },
    write,
  }
}

/** `YYYYMMDD-HHMMSS` in UTC: the real controller's `__DATE__-__TIME__`. */
function stamp(ms: number): string {
  const iso = new Date(ms).toISOString()
  return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`
}
