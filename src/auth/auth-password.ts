/**
 * Password hashing with argon2id, individually salted (the salt is inside the PHC string).
 * Verification of an unknown user runs against a dummy hash so the answer takes the same time.
 */
import { Algorithm, hash, verify } from '@node-rs/argon2'

/** argon2id parameters: OWASP's second recommended profile (19 MiB, 2 passes, 1 lane). */
export const ARGON2_PARAMS = {
  algorithm: Algorithm.Argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
} as const

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS)
}

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password)
  } catch {
    return false
  }
}

let dummy: Promise<string> | undefined

/** Computes the dummy hash ahead of the first failed login, so that one is not slower than the rest. */
export async function prepareDummyHash(): Promise<void> {
  dummy ??= hashPassword('edgeplane-dummy-password')
  await dummy
}

/** Burns the time of one verification, for a username that does not exist. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword('edgeplane-dummy-password')
  await verifyPassword(await dummy, password)
  return false
}
