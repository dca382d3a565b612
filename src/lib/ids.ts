/** Identifiers: shortids for stored entities, cuid-like ids for API sessions, UUIDv4 tokens. */
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto'

const SHORT_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-'
const SHORT_FIRST = SHORT_ALPHABET.slice(0, 62)

// random bytes drawn from the system's generator a pool at a time (every request gets a shortid as its id)
const pool = new Uint8Array(4096)
let poolUsed = pool.length

/** `n` fresh random bytes from the pool (valid until the next call). */
function randomFromPool(n: number): Uint8Array {
  if (n > pool.length) return randomBytes(n)
  if (poolUsed + n > pool.length) {
    randomFillSync(pool)
    poolUsed = 0
  }
  const out = pool.subarray(poolUsed, poolUsed + n)
  poolUsed += n
  return out
}

/** A 10-character shortid (alphabet 0-9a-zA-Z.-, never starting with '.' or '-'), as the real controller makes. */
export function newShortId(length = 10): string {
  const bytes = randomFromPool(length)
  let out = SHORT_FIRST[bytes[0] % 62]
  for (let i = 1; i < length; i++) out += SHORT_ALPHABET[bytes[i] & 63]
  return out
}

let cuidCounter = 0
/** A collision-resistant id in the cuid style ("c" + time + counter + random), base36. */
export function newCuid(nowMs: number = Date.now()): string {
  cuidCounter = (cuidCounter + 1) % 1679616
  const rnd = randomBytes(8).readBigUInt64BE().toString(36).padStart(13, '0').slice(0, 12)
  return 'c' + nowMs.toString(36).padStart(8, '0') + cuidCounter.toString(36).padStart(4, '0') + rnd
}

/** A random UUIDv4: API session tokens and enrollment tokens. */
export function newUuid(): string {
  return randomUUID()
}
