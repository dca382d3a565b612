/**
 * How each sub-db's values are encoded: JSON, for identities JSON of the compact stored form
 * (domain/identity/identity-stored.ts: members at their default left out), for MFA records JSON of the sealed
 * form (domain/identity/identity-mfa-stored.ts: secret and recovery codes sealed with the data directory's key,
 * store-seal.ts), and for API sessions JSON of the record with its token sealed (domain/session/session-stored.ts).
 * Every opening of the environment (the store, its read-only opens, copies) takes its sub-db options from here, so
 * every reader sees whole records. Only the store opened for writing has the key: it reads sealed values opened and
 * writes them sealed; read-only opens and copies read them sealed, as stored, and can write none.
 */
import type { DatabaseOptions } from 'lmdb'
import { fromStoredIdentity, toStoredIdentity } from '../domain/identity/identity-stored.ts'
import type { Identity } from '../domain/identity/identity-types.ts'
import { fromStoredMfa, toStoredMfa, type Sealer } from '../domain/identity/identity-mfa-stored.ts'
import type { Mfa } from '../domain/identity/identity-mfa.ts'
import { fromStoredApiSession, toStoredApiSession, type ApiSessionWithToken } from '../domain/session/session-stored.ts'
import type { SubDbName } from './store-catalogue.ts'

/** An lmdb-js value encoder: `decode` gets the value's bytes (a reused buffer: read, never kept) and their length. */
interface ValueEncoder {
  encode(value: unknown): Buffer
  decode(bytes: Buffer, size?: number): unknown
}

/** The stored forms of one opening of the environment. */
export interface StoreCodecs {
  /** The JSON value a sub-db stores for a record (identities compact, MFA records sealed). */
  storedValueOf(name: SubDbName, value: unknown): unknown
  /** The lmdb-js options of a sub-db (lmdb-js takes `encoder`; its types do not name it). */
  subDbOptions(name: SubDbName): DatabaseOptions & { name: string }
}

/**
 * The codecs of an opening; `sealer` answers the data directory's key (asked at each read and write of an MFA
 * record, so the store may learn it after opening its sub-dbs). Without it MFA records read as stored and writing
 * one is a TypeError.
 */
export function storeCodecs(sealer?: () => Sealer): StoreCodecs {
  const storedValueOf = (name: SubDbName, value: unknown): unknown => {
    if (name === 'identities') return toStoredIdentity(value as Identity)
    if (name === 'mfas') {
      if (!sealer) throw new TypeError('MFA records are stored sealed: this opening of the store has no key')
      return toStoredMfa(value as Mfa, sealer())
    }
    if (name === 'api-sessions') {
      const s = value as ApiSessionWithToken
      if (s.token === undefined) return s
      if (!sealer) throw new TypeError('API session tokens are stored sealed: this opening of the store has no key')
      return toStoredApiSession(s, sealer())
    }
    return value
  }
  const fromStored = (name: SubDbName, value: unknown): unknown => {
    if (name === 'identities') return fromStoredIdentity(value as Identity)
    if (name === 'mfas' && sealer) return fromStoredMfa(value, sealer())
    if (name === 'api-sessions' && sealer) return fromStoredApiSession(value, sealer())
    return value
  }
  const encoderOf = (name: SubDbName): ValueEncoder => ({
    encode: (value) => Buffer.from(JSON.stringify(storedValueOf(name, value))),
    decode: (bytes, size) => fromStored(name, JSON.parse(bytes.toString('utf8', 0, size ?? bytes.length))),
  })
  const identities = encoderOf('identities')
  const mfas = encoderOf('mfas')
  const apiSessions = encoderOf('api-sessions')
  return {
    storedValueOf,
    subDbOptions(name) {
      // the environment's 'json' encoding must not apply where an encoder is given (lmdb-js would put JSON over it)
      if (name === 'identities') return { name, encoding: undefined, encoder: identities } as DatabaseOptions & { name: string }
      if (name === 'mfas') return { name, encoding: undefined, encoder: mfas } as DatabaseOptions & { name: string }
      if (name === 'api-sessions') return { name, encoding: undefined, encoder: apiSessions } as DatabaseOptions & { name: string }
      return { name, encoding: 'json' }
    },
  }
}

/** The codecs of openings without the key: read-only opens and copies. */
export const KEYLESS_CODECS = storeCodecs()
