/**
 * Opens the one LMDB environment of a data directory and its sub-databases (values encoded as store-codecs.ts says),
 * and runs migrations.
 * An opening for writing also loads the data directory's sealing key (`pki/secrets.key`, store-seal.ts; made on the
 * first start), with which MFA records are read and written sealed (store-codecs.ts); read-only openings never need it.
 * After the migration that seals the MFA secrets of an older store, the file is replaced by a compacted copy, so the
 * freed pages that held them in plain text are gone from it.
 * Commits are fsynced before their promise resolves (overlappingSync off), so an acknowledged write survives kill -9.
 * The directory holds password and token hashes and the CA keys: it and everything in it stay private to the owner
 * (directories 0700, files 0600), created so and checked (and fixed) at every start, with a warning when it already
 * held data (a non-empty file: a new directory, such as a fresh checkout's data/, is fixed quietly).
 */
import { asBinary, open, type Database, type RootDatabase } from 'lmdb'
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { SUB_DBS, type SubDbName } from './store-catalogue.ts'
import { COMPACT_PENDING, migrate, SEAL_KEY_ID } from './store-migrations.ts'
import { KEYLESS_CODECS, storeCodecs, type StoreCodecs } from './store-codecs.ts'
import { createSealKey, readSealKey, sealKeyPathOf, type SealKey } from './store-seal.ts'
import { systemClock } from '../lib/clock.ts'

/** One staged write: a put when `value` is present, else a remove. */
export interface WriteOp {
  db: SubDbName
  key: string
  value?: unknown
}

/** The opened store: read handles for every sub-db, and the single commit path. */
export interface Store {
  readonly path: string
  /** Read access to a sub-database. Writes go through `commit` only. */
  db(name: SubDbName): Database<unknown, string>
  /** Applies the ops in one LMDB transaction; resolves once it is durably committed. */
  commit(ops: readonly WriteOp[]): Promise<void>
  /** Whether the sub-database exists (a read-only store of an older schema may lack newer ones). */
  has(name: SubDbName): boolean
  /**
   * Writes a consistent, compacted copy of the whole environment to the file `destPath` (LMDB copies from one read
   * transaction on its own thread: writers go on meanwhile). Use `copyStore` (store-copy.ts), which makes it private.
   */
  backup(destPath: string): Promise<void>
  /**
   * Closes the environment and opens it again, so that the pages a start-up scan read (every record, once) leave
   * this process's resident memory: the actors hold what they read, and the pages stay in the kernel's page cache
   * for whoever reads them next. Commits asked for meanwhile wait for the new environment; call it when nothing else
   * reads the store (at start, after every actor loaded, before the listener).
   */
  releaseScannedPages(): Promise<void>
  close(): Promise<void>
}

/** The largest the database can grow: 64 GiB of address space. */
export const MAP_SIZE_BYTES = 64 * 1024 ** 3

/** Modes of everything in a data directory. */
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/** What `makePrivate` did, and whether anyone could have read something there before. */
export interface MadePrivate {
  /** One line per path whose mode it narrowed. */
  changed: string[]
  /**
   * Whether the tree held anything with content: a non-empty file, a symbolic link or a special file. A tree of
   * directories and empty files (a fresh checkout's `data/` with its `.gitkeep`) gave nothing away.
   */
  heldData: boolean
}

/**
 * Takes away every permission of group and others from `dir` and everything below it (symbolic links are left
 * alone); says which paths it changed, and whether the tree held any data.
 */
export function makePrivate(dir: string): MadePrivate {
  const changed: string[] = []
  let heldData = false
  const pending = [dir]
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const st = lstatSync(path)
    if (!st.isDirectory() && !(st.isFile() && st.size === 0)) heldData = true
    if (st.isSymbolicLink()) continue
    const mode = st.mode & 0o777
    if (st.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name))
    if ((mode & 0o077) === 0) continue
    const wanted = mode & (st.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE)
    chmodSync(path, wanted)
    changed.push(`${path} was open to other users (mode ${mode.toString(8).padStart(4, '0')}); now ${wanted.toString(8).padStart(4, '0')}`)
  }
  return { changed, heldData }
}

export interface OpenStoreOptions {
  /** Where the notes about modes fixed at start go. */
  warn?: (line: string) => void
  /** Epoch ms that migrations stamp on the records they create (the controller's clock; default the system's). */
  now?: number
  /**
   * Open an existing store for reading only (backup, status): nothing is created, no mode is changed, no migration
   * runs, `commit` throws. Works beside a running controller (LMDB readers never block its writer).
   */
  readOnly?: boolean
}

/** The LMDB environment file inside a data directory. */
export function storePathOf(dataDir: string): string {
  return join(dataDir, 'edgeplane.mdb')
}

/**
 * The longest key a commit takes, in UTF-8 bytes: LMDB's limit (1978 bytes) for the worst case of lmdb-js's key
 * encoding (an escape byte, and two bytes for some characters). Keys are ids and hashes, far shorter.
 */
const MAX_KEY_BYTES = 988

function checkedKey(op: WriteOp): string {
  if (op.key.length === 0 || Buffer.byteLength(op.key) > MAX_KEY_BYTES) {
    throw new TypeError(`a key of sub-db ${op.db} must have 1 to ${MAX_KEY_BYTES} bytes: '${op.key.slice(0, 80)}'`)
  }
  return op.key
}

/**
 * The bytes the sub-db's encoding would store for the value (JSON text of its stored form, store-codecs.ts), or a
 * TypeError naming the record.
 */
function encodeJson(codecs: StoreCodecs, op: WriteOp): Buffer {
  let text: string | undefined
  try {
    text = JSON.stringify(codecs.storedValueOf(op.db, op.value))
  } catch (e) {
    throw new TypeError(`the value of ${op.db}/${op.key} cannot be stored as JSON: ${(e as Error).message}`)
  }
  if (text === undefined) throw new TypeError(`the value of ${op.db}/${op.key} cannot be stored as JSON`)
  return Buffer.from(text)
}

/**
 * The data directory's sealing key: read, or made when there is none and the store has sealed nothing (`recordedId`
 * absent: a new store, or one of schema 3 or older). A missing key of a store that recorded one, or a key that is not
 * the recorded one, stops the opening with an Error saying which file to put back: nothing sealed could be read.
 */
function settleSealKey(dataDir: string, recordedId: string | undefined): SealKey {
  const path = sealKeyPathOf(dataDir)
  const key = readSealKey(path)
  if (key === null) {
    if (recordedId !== undefined) {
      throw new Error(
        `${path} is missing, and the store's MFA secrets are sealed with it (key id ${recordedId}): put back the ` +
          `${path} of this data directory, or restore a backup (it carries the key)`,
      )
    }
    return createSealKey(path)
  }
  if (recordedId !== undefined && recordedId !== key.id) {
    throw new Error(
      `${path} is not the key the store's MFA secrets are sealed with (its id is ${key.id}, the store's ${recordedId}): ` +
        `put back the ${path} of this data directory, or restore a backup (it carries the key)`,
    )
  }
  return key
}

/** A compacted copy (`writeCompacted`) that a crash left behind: removed at the next opening for writing. */
const COMPACT_TEMP = /^edgeplane\.mdb\.compact-[0-9a-f]+\.tmp$/

/**
 * Writes a compacted copy of `env` (only the pages in use: freed pages keep the bytes of what they held) beside its
 * file `path`, fsynced; answers the copy's path. After `env` is closed, `replaceWithCompacted` renames it over `path`.
 * A crash leaves either file, each a whole store.
 */
async function writeCompacted(env: RootDatabase, path: string): Promise<string> {
  const temp = `${path}.compact-${randomBytes(6).toString('hex')}.tmp`
  await env.backup(temp, true)
  fsyncPath(temp, 'r+')
  chmodSync(temp, PRIVATE_FILE_MODE)
  return temp
}

function replaceWithCompacted(temp: string, path: string): void {
  renameSync(temp, path)
  fsyncPath(dirname(path), 'r')
}

function fsyncPath(path: string, flags: string): void {
  const fd = openSync(path, flags)
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export async function openStore(dataDir: string, opts: OpenStoreOptions = {}): Promise<Store> {
  const path = storePathOf(dataDir)
  const readOnly = opts.readOnly === true
  if (readOnly) {
    // an empty file is a store never written to: LMDB cannot open it read-only (lmdb-js crashes the process)
    if (!existsSync(path) || statSync(path).size === 0) throw new Error(`${dataDir} holds no edgeplane data (no ${path}, or it is empty)`)
  } else {
    mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
    // a directory that holds nothing yet (a fresh checkout's data/, 0755 with an empty .gitkeep) is made private
    // quietly: nobody could have read anything from it
    const made = makePrivate(dataDir)
    if (made.heldData) for (const line of made.changed) opts.warn?.(`warning: ${line}`)
    for (const name of readdirSync(dataDir)) if (COMPACT_TEMP.test(name)) rmSync(join(dataDir, name), { force: true })
    // LMDB creates missing files 0644: create them empty and private first (an empty file is a new environment)
    for (const file of [path, `${path}-lock`]) closeSync(openSync(file, 'a', PRIVATE_FILE_MODE))
  }
  const openEnv = (): RootDatabase =>
    open({
      readOnly,
      path,
      encoding: 'json',
      maxDbs: 64,
      overlappingSync: false,
      // keep every commit synchronous to disk: the 2xx contract depends on it
      noSync: false,
      // one map of the whole address range (virtual only; the file grows as it needs): without it lmdb-js maps the
      // file in chunks it remaps as the file grows, and each chunk's pages count again in resident memory
      mapSize: MAP_SIZE_BYTES,
    })
  /** The data directory's sealing key (store-seal.ts): learnt below, before any record is read or written. */
  let sealKey: SealKey | undefined
  const codecs = readOnly
    ? KEYLESS_CODECS
    : storeCodecs(() => {
        if (!sealKey) throw new TypeError('the sealing key is not loaded yet')
        return sealKey
      })
  const handles = new Map<SubDbName, Database<unknown, string>>()
  const openHandles = (env: RootDatabase) => {
    handles.clear()
    for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
      // read-only: a sub-db the store does not have yet opens as undefined
      const h = env.openDB<unknown, string>(codecs.subDbOptions(name)) as Database<unknown, string> | undefined
      if (h) handles.set(name, h)
    }
  }
  let env = openEnv()
  openHandles(env)
  /** Set while the environment is being reopened (releaseScannedPages). */
  let reopening: Promise<void> | null = null
  const db = (name: SubDbName) => {
    const h = handles.get(name)
    if (!h) throw new TypeError(`sub-db ${name} is unknown or absent from ${path}`)
    return h
  }
  if (!readOnly) {
    try {
      sealKey = settleSealKey(dataDir, db('meta').get(SEAL_KEY_ID) as string | undefined)
      await migrate(db, env, { now: opts.now ?? systemClock.now(), sealKeyId: sealKey.id })
      if (db('meta').get(COMPACT_PENDING) === true) {
        // the pages that held plain secrets are free now, but LMDB leaves their bytes in the file: a compacted copy
        // holds only the pages in use, and replaces the file; the mark goes once it has (a crash: compacted again)
        const compacted = await writeCompacted(env, path)
        await env.close()
        replaceWithCompacted(compacted, path)
        env = openEnv()
        openHandles(env)
        await env.transaction(() => db('meta').remove(COMPACT_PENDING))
      }
    } catch (e) {
      await env.close().catch(() => {})
      throw e
    }
  }
  return {
    path,
    db,
    has: (name) => handles.has(name),
    async commit(ops) {
      if (readOnly) throw new TypeError(`${path} is open read-only`)
      if (ops.length === 0) return
      if (reopening) await reopening
      // everything that can throw first (unknown sub-db, bad key, a value JSON cannot encode): a transaction callback
      // that throws half-way keeps the puts it made (lmdb-js cannot abort it), so a commit must be whole or nothing
      // before it is queued. Then one transaction callback: lmdb-js runs the callbacks queued meanwhile in one
      // transaction, commits it and fsyncs once. (Plain async puts were tried: under steady load LMDB's writer keeps
      // such a transaction open while new writes keep arriving, and 50 concurrent creates answered later and slower.)
      const staged = ops.map((op) => ({ handle: db(op.db), key: checkedKey(op), bytes: op.value === undefined ? undefined : encodeJson(codecs, op) }))
      await env.transaction(() => {
        for (const op of staged) {
          if (op.bytes === undefined) op.handle.remove(op.key)
          else op.handle.put(op.key, asBinary(op.bytes))
        }
      })
    },
    async backup(destPath) {
      if (reopening) await reopening
      return env.backup(destPath, true)
    },
    releaseScannedPages() {
      reopening ??= (async () => {
        await env.flushed
        await env.close()
        env = openEnv()
        openHandles(env)
        reopening = null
      })()
      return reopening
    },
    async close() {
      if (reopening) await reopening
      await env.flushed
      await env.close()
    },
  }
}
