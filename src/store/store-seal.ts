/**
 * The sealing key of a data directory: the AES-256-GCM key that seals the secrets the store must be able to read back
 * (TOTP secrets, recovery codes), so that a copy of the LMDB file alone reveals none of them.
 * - the key is 32 random bytes in `pki/secrets.key`, beside the CA keys and never inside the LMDB file; written once
 *   (temporary file, fsync, rename, fsync of the directory) before anything is sealed with it, mode 0600
 * - a key file that is not a regular file, is open to group or others, or does not hold exactly 32 bytes stops the
 *   start with an error naming it; a missing one is made only for a store that has sealed nothing yet (store-env.ts)
 * - every value is sealed under a fresh random 96-bit nonce, with associated data naming the record and member it
 *   belongs to (`context`): a sealed value copied into another record, or another member, does not open
 * - the store records the key's id (a hash, never the key) in `meta`, so a wrong key file is refused by name at start
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The key file's name inside the PKI directory. */
export const SEAL_KEY_FILE = 'secrets.key'
export const SEAL_KEY_BYTES = 32
const NONCE_BYTES = 12
const TAG_BYTES = 16
/** The prefix of every sealed value (the format's version). */
const SEALED_PREFIX = 'v1:'
const STALE_TEMP = /^secrets\.key\.[0-9a-f]+\.tmp$/
/** As everything in a data directory (store-env.ts PRIVATE_DIR_MODE, PRIVATE_FILE_MODE). */
const KEY_DIR_MODE = 0o700
const KEY_FILE_MODE = 0o600

/** Seals and opens values with one data directory's key. */
export interface SealKey {
  /** The key file. */
  readonly path: string
  /** A hash of the key (not the key): what the store records to recognise it. */
  readonly id: string
  /** `plain` sealed for `context` (the record and member it belongs to): `v1:` and base64 of nonce, ciphertext, tag. */
  seal(plain: string, context: string): string
  /** The plain text of a value sealed for `context`; an Error when it was sealed for another context or key. */
  open(sealed: string, context: string): string
}

/** The key file of the data directory `dataDir`. */
export function sealKeyPathOf(dataDir: string): string {
  return join(dataDir, 'pki', SEAL_KEY_FILE)
}

/** A SealKey over the 32 bytes `key` (read from, or written to, `path`). */
export function sealKeyOf(key: Buffer, path: string): SealKey {
  if (key.length !== SEAL_KEY_BYTES) throw new TypeError(`a sealing key has ${SEAL_KEY_BYTES} bytes, not ${key.length}`)
  const id = createHash('sha256').update('edgeplane sealing key id\0').update(key).digest('hex').slice(0, 32)
  return {
    path,
    id,
    seal(plain, context) {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(context, 'utf8'))
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return SEALED_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64')
    },
    open(sealed, context) {
      const bytes = sealed.startsWith(SEALED_PREFIX) ? Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64') : Buffer.alloc(0)
      if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error(`the sealed value of ${context} is malformed`)
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(context, 'utf8'))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
      } catch {
        throw new Error(`the sealed value of ${context} does not open with the key in ${path}: it was sealed with another key, or altered`)
      }
    },
  }
}

/**
 * The key in `path`, or null when there is no such file. Throws an Error naming the file when it cannot be read, is
 * not a regular file, is open to group or others (a start makes the data directory private first, so this is a key
 * it could not fix, e.g. behind a symbolic link) or does not hold exactly 32 bytes.
 */
export function readSealKey(path: string): SealKey | null {
  let mode: number
  try {
    const st = statSync(path)
    if (!st.isFile()) throw new Error(`${path} is not a regular file; it must hold the ${SEAL_KEY_BYTES}-byte sealing key`)
    mode = st.mode & 0o777
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
    if ((e as NodeJS.ErrnoException).code === undefined) throw e
    throw new Error(`${path} (the sealing key) cannot be read: ${(e as Error).message}`, { cause: e })
  }
  if ((mode & 0o077) !== 0) {
    throw new Error(`${path} (the sealing key) has mode ${mode.toString(8).padStart(4, '0')}: it must be private to its owner (chmod 600 ${path})`)
  }
  let key: Buffer
  try {
    key = readFileSync(path)
  } catch (e) {
    throw new Error(`${path} (the sealing key) cannot be read: ${(e as Error).message}`, { cause: e })
  }
  if (key.length !== SEAL_KEY_BYTES) {
    throw new Error(`${path} (the sealing key) holds ${key.length} bytes, not ${SEAL_KEY_BYTES}: it is damaged; put back the file of this data directory or of its backup`)
  }
  return sealKeyOf(key, path)
}

/**
 * A new random key written to `path` (which must not exist): temporary file 0600, fsync, rename, fsync of the
 * directory, so the key is on disk before anything is sealed with it. Temporaries of an earlier crash are removed.
 */
export function createSealKey(path: string): SealKey {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true, mode: KEY_DIR_MODE })
  for (const name of readdirSync(dir)) if (STALE_TEMP.test(name)) unlinkSync(join(dir, name))
  const key = randomBytes(SEAL_KEY_BYTES)
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
  const fd = openSync(temp, 'wx', KEY_FILE_MODE)
  try {
    writeSync(fd, key)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  // link would refuse an existing target; a key appearing meanwhile is nobody's to replace
  if (readSealKey(path) !== null) {
    unlinkSync(temp)
    throw new Error(`${path} appeared while the sealing key was being created`)
  }
  renameSync(temp, path)
  const dirFd = openSync(dir, 'r')
  try {
    fsyncSync(dirFd)
  } finally {
    closeSync(dirFd)
  }
  return sealKeyOf(key, path)
}
