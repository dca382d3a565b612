/**
 * API sessions as stored: the record, and the token edge routers need (control/sessions/) sealed with the data
 * directory's key (store/store-seal.ts), never in the clear. The sealed token is bound to its record (the associated
 * data names the session id) and, once opened, must hash to the record's `tokenHash`: a sealed token moved to another
 * record does not open, and one that opens to another token is refused.
 * A record stored before tokens were kept (or one written without a token) has no `sealedToken` and reads without
 * `token`: its session keeps working on the REST APIs, and is never pushed to a router. A refused sealed token is
 * read as stored (`sealedToken` kept, no `token`): the session is one without a token, and whoever loads it can tell
 * (a damaged record must not stop a start; the session registry notes how many it found).
 */
import type { Sealer } from '../identity/identity-mfa-stored.ts'
import { hashToken, type ApiSession } from './session-types.ts'

/** What the session registry writes and reads: the record, with the token when it keeps one. */
export type ApiSessionWithToken = ApiSession & { readonly token?: string }

/** An API session in the store: the record, with the token sealed when it has one. */
export type StoredApiSession = ApiSession & { readonly sealedToken?: string }

/** The associated data of a session's sealed token. */
export function apiSessionSealContext(s: Pick<ApiSession, 'id'>): string {
  return `edgeplane/api-sessions/${s.id}/token`
}

/** The stored form of `s`: the token (if any) sealed under a fresh nonce, the record as it is. */
export function toStoredApiSession(s: ApiSessionWithToken, sealer: Sealer): StoredApiSession {
  const { token, ...record } = s
  return token === undefined ? record : { ...record, sealedToken: sealer.seal(token, apiSessionSealContext(s)) }
}

/**
 * The record a stored value holds, its token opened; as stored (with `sealedToken`, without `token`) when the sealed
 * token does not open or is not the token of the record.
 */
export function fromStoredApiSession(value: unknown, sealer: Sealer): ApiSessionWithToken | StoredApiSession {
  const v = value as StoredApiSession
  if (typeof v?.sealedToken !== 'string') return v
  const { sealedToken, ...record } = v
  let token: string
  try {
    token = sealer.open(sealedToken, apiSessionSealContext(v))
  } catch {
    return v
  }
  return hashToken(token) === v.tokenHash ? { ...record, token } : v
}
