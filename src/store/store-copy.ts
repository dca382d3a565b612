/**
 * Copies of the open store: the one primitive of database snapshots, the integrity check's consistent view and
 * backups. A copy is a complete LMDB environment in one file (compacted), private to the owner (0600 in a 0700
 * directory), written under a temporary name and renamed, so a copy that exists is whole.
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import type { RecordTable, StoredRecords } from '../domain/integrity/integrity-records.ts'
import { dirname } from 'node:path'
import { SUB_DBS, type SubDbName } from './store-catalogue.ts'
import { KEYLESS_CODECS } from './store-codecs.ts'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, type Store } from './store-env.ts'

/** Writes a consistent, compacted copy of `store` to the file `destPath` (refused if it exists). */
export async function copyStore(store: Store, destPath: string): Promise<void> {
  if (existsSync(destPath)) throw new Error(`${destPath} already exists`)
  mkdirSync(dirname(destPath), { recursive: true, mode: PRIVATE_DIR_MODE })
  const partial = `${destPath}.partial`
  rmSync(partial, { force: true })
  try {
    await store.backup(partial)
    chmodSync(partial, PRIVATE_FILE_MODE)
    renameSync(partial, destPath)
  } finally {
    rmSync(partial, { force: true })
  }
}

/** A copy opened read-only: its sub-databases, never written. */
export interface StoreCopy {
  db(name: SubDbName): Database<unknown, string>
  close(): Promise<void>
}

/** Opens a copy written by `copyStore` read-only (no migrations: a copy is read as it was taken). */
export function openStoreCopy(path: string): StoreCopy {
  const env: RootDatabase = open({ path, encoding: 'json', maxDbs: 64, readOnly: true, noSubdir: true })
  const handles = new Map<SubDbName, Database<unknown, string>>()
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) handles.set(name, env.openDB<unknown, string>(KEYLESS_CODECS.subDbOptions(name)))
  return {
    db: (name) => handles.get(name)!,
    close: () => env.close(),
  }
}

/** The integrity check's record tables are the catalogue's sub-databases, no more and no fewer. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const TABLES_ARE_SUB_DBS: Same<RecordTable, SubDbName> = true

/** Records read per slice before the reader yields to the event loop. */
const SLICE = 5_000

/**
 * Every record of the copy at `path`, read in slices of `SLICE` with a pause between them so the process keeps
 * answering requests while a large database is read; the copy is closed (and the lock file its opening made removed).
 */
export async function readStoreCopy(path: string): Promise<StoredRecords> {
  void TABLES_ARE_SUB_DBS
  const copy = openStoreCopy(path)
  try {
    const out = {} as Record<SubDbName, Map<string, unknown>>
    for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
      const map = new Map<string, unknown>()
      let start: string | undefined
      for (;;) {
        let n = 0
        for (const { key, value } of copy.db(name).getRange(start === undefined ? { limit: SLICE } : { start, limit: SLICE + 1 })) {
          if (key === start) continue
          map.set(key, value)
          start = key
          n++
        }
        if (n < SLICE) break
        await new Promise((r) => setImmediate(r))
      }
      out[name] = map
    }
    return out as StoredRecords
  } finally {
    await copy.close()
    rmSync(`${path}-lock`, { force: true })
  }
}
