/**
 * What the CA actor shows everyone of the third-party CAs (the `/cas` resource): the table the Management API lists,
 * and the trust list that enrollment (ottca, auto-enrollment) and certificate login read. Records are deeply
 * read-only and replaced on every change; arrays answered are shared and must not be changed.
 */
import type { ReadTable } from '../../lib/entity-table.ts'
import type { ThirdPartyCa } from './ca-types.ts'

/** The third-party CA reads: part of what the CA actor's `snapshot()` answers. */
export interface ThirdPartyCaReads {
  /** Every registered CA, verified or not. */
  readonly cas: ReadTable<ThirdPartyCa>
  /** The CA whose certificate has this SHA-1 fingerprint (lowercase hex). */
  caByFingerprint(fingerprint: string): ThirdPartyCa | undefined
  /**
   * The verified CAs, in id order, with their flags: the trust anchors of enrollment (those with
   * `isOttCaEnrollmentEnabled` or `isAutoCaEnrollmentEnabled`) and of certificate login (see authTrustAnchors).
   */
  verifiedCas(): readonly ThirdPartyCa[]
  /** The verified CAs with `isAuthEnabled`, in id order: whose certificates may log in. */
  authTrustAnchors(): readonly ThirdPartyCa[]
  /**
   * Grows by one on every write to a verified CA (one verified, updated in any field, or deleted): a consumer that
   * derives something from them (a TLS `ca` list) rebuilds it when this moves. Unverified CAs never move it.
   * The `ca.trustChanged` event announces the same moments.
   */
  readonly trustVersion: number
}
