/** Identifiers: shortids for stored entities, cuid-like ids for API sessions, UUIDv4 tokens. */
import { createHash, randomBytes, randomFillSync, randomUUID } from 'node:crypto'

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

/**
 * The ids a replicated command's apply makes must be the same on every node: while one is applied
 * (`withSeededIds`), the id functions below draw their bytes from SHA-256(seed, counter) instead of the system's
 * generator. The seed is the command's unique log key, so two commands never share ids and the proposer and every
 * other node make the same ones.
 */
let seeded: { seed: string; counter: number } | null = null

/** Runs `fn` with ids drawn from `seed` (see above); nested calls keep the outer seed. */
export function withSeededIds<T>(seed: string, fn: () => T): T {
  if (seeded) return fn()
  seeded = { seed, counter: 0 }
  try {
    return fn()
  } finally {
    seeded = null
  }
}

/** `n` bytes: from the seed during a replicated apply, else fresh random bytes. */
function idBytes(n: number): Uint8Array {
  if (!seeded) return randomFromPool(n)
  const out = new Uint8Array(n)
  for (let filled = 0; filled < n; ) {
    const block = createHash('sha256').update(`${seeded.seed}\u0000${seeded.counter++}`).digest()
    const take = Math.min(block.length, n - filled)
    out.set(block.subarray(0, take), filled)
    filled += take
  }
  return out
}

/** A 10-character shortid (alphabet 0-9a-zA-Z.-, never starting with '.' or '-'), as the real controller makes. */
export function newShortId(length = 10): string {
  const bytes = idBytes(length)
  let out = SHORT_FIRST[bytes[0] % 62]
  for (let i = 1; i < length; i++) out += SHORT_ALPHABET[bytes[i] & 63]
  return out
}

let cuidCounter = 0
/** A collision-resistant id in the cuid style ("c" + time + counter + random), base36. */
export function newCuid(nowMs: number = Date.now()): string {
  // a replicated apply's counter part comes from its seed too (the process's counter differs per node)
  const counter = seeded ? idBytes(3).reduce((n, b) => n * 256 + b, 0) % 1679616 : (cuidCounter = (cuidCounter + 1) % 1679616)
  const rnd = Buffer.from(idBytes(8)).readBigUInt64BE().toString(36).padStart(13, '0').slice(0, 12)
  return 'c' + nowMs.toString(36).padStart(8, '0') + counter.toString(36).padStart(4, '0') + rnd
}

/** A UUID in its text form, any version (8-4-4-4-12 hex digits, either case). */
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A random UUIDv4: API session tokens and enrollment tokens. */
export function newUuid(): string {
  if (!seeded) return randomUUID()
  const b = idBytes(16)
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const h = Buffer.from(b).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
