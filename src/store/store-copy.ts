/**
 * The one copy primitive of backups and snapshots: a consistent, compacted copy of an open LMDB environment, taken
 * while the controller goes on writing. Only the data file is copied; the copy opens as a store of its own.
 */
import { chmod, mkdir, rm, rename } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { pathExists } from '../lib/path-exists.ts'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, type Store } from './store-env.ts'

/**
 * Copies `store` to `destPath` (a file that must not exist yet), mode 0600. The copy is written under a temporary
 * name beside `destPath` and renamed into place, so `destPath` is either absent or complete.
 */
export async function copyStore(store: Store, destPath: string): Promise<void> {
  if (await pathExists(destPath)) throw new Error(`${destPath} exists already; a copy never overwrites`)
  await mkdir(dirname(destPath), { recursive: true, mode: PRIVATE_DIR_MODE })
  const temp = join(dirname(destPath), `.${basename(destPath)}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    await store.copyTo(temp)
    // LMDB creates the copy with the process umask (0644 usually): it holds hashes and session records
    await chmod(temp, PRIVATE_FILE_MODE)
    await rename(temp, destPath)
  } finally {
    await rm(temp, { force: true })
  }
}
