/**
 * Commands in etcd are sealed: AES-256-GCM under a key derived from the data directory's sealing key
 * (`pki/secrets.key`, shared by every member through the backups members are made from, never in etcd or LMDB), with
 * the command's log key as associated data. Messages carry what their apply needs, TOTP secrets and recovery codes
 * among them: etcd's files hold none of it in the clear, and a client of etcd without the key can neither read a
 * command nor append one a node would apply (a value that does not open is logged and skipped by every node), nor
 * move a command to another key.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { sealKeyPathOf } from '../store/store-seal.ts'

const PREFIX = 'v1:'
const NONCE_BYTES = 12
const TAG_BYTES = 16

export interface CommandSealer {
  seal(plain: Uint8Array, logKey: string): string
  /** The plain bytes; throws when the value was not sealed for this key by a member. */
  open(sealed: string, logKey: string): Buffer
}

/** The sealer of a data directory's cluster (its sealing key, derived for this one use). */
export function commandSealerOf(dataDir: string): CommandSealer {
  return commandSealer(readFileSync(sealKeyPathOf(dataDir)))
}

export function commandSealer(sealKey: Buffer): CommandSealer {
  const key = createHmac('sha256', sealKey).update('edgeplane cluster log commands v1').digest()
  return {
    seal(plain, logKey) {
      const nonce = randomBytes(NONCE_BYTES)
      const c = createCipheriv('aes-256-gcm', key, nonce)
      c.setAAD(Buffer.from(logKey))
      const body = Buffer.concat([c.update(plain), c.final()])
      return PREFIX + Buffer.concat([nonce, body, c.getAuthTag()]).toString('base64')
    },
    open(sealed, logKey) {
      if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed command')
      const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64')
      if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('a sealed command too short')
      const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES))
      d.setAAD(Buffer.from(logKey))
      d.setAuthTag(raw.subarray(raw.length - TAG_BYTES))
      return Buffer.concat([d.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), d.final()])
    },
  }
}
