/**
 * How each sub-db's values are encoded: JSON, and for identities JSON of the compact stored form
 * (domain/identity/identity-stored.ts: members at their default left out). Every opening of the environment (the
 * store, its read-only opens, copies) takes its sub-db options from here, so every reader sees whole records.
 */
import type { DatabaseOptions } from 'lmdb'
import { fromStoredIdentity, toStoredIdentity } from '../domain/identity/identity-stored.ts'
import type { Identity } from '../domain/identity/identity-types.ts'
import type { SubDbName } from './store-catalogue.ts'

/** An lmdb-js value encoder: `decode` gets the value's bytes (a reused buffer: read, never kept) and their length. */
interface ValueEncoder {
  encode(value: unknown): Buffer
  decode(bytes: Buffer, size?: number): unknown
}

const identityEncoder: ValueEncoder = {
  encode: (value) => Buffer.from(JSON.stringify(storedValueOf('identities', value))),
  decode: (bytes, size) => fromStoredIdentity(JSON.parse(bytes.toString('utf8', 0, size ?? bytes.length))),
}

/** The JSON value a sub-db stores for a record (for identities, their compact stored form). */
export function storedValueOf(name: SubDbName, value: unknown): unknown {
  return name === 'identities' ? toStoredIdentity(value as Identity) : value
}

/** The lmdb-js options of a sub-db (lmdb-js takes `encoder`; its types do not name it). */
export function subDbOptions(name: SubDbName): DatabaseOptions & { name: string } {
  // the environment's 'json' encoding must not apply where an encoder is given (lmdb-js would put JSON over it)
  if (name === 'identities') return { name, encoding: undefined, encoder: identityEncoder } as DatabaseOptions & { name: string }
  return { name, encoding: 'json' }
}
