/**
 * Decisions of a certificate extension (`POST /current-identity/authenticators/{id}/extend`, then `extend-verify`),
 * checked before the CA signs and again in the identity actor.
 * - an unknown authenticator: 404 NOT_FOUND; one of another method: 409 CAN_NOT_UPDATE_AUTHENTICATOR; one of another
 *   identity: 401 UNAUTHORIZED (the real controller's order)
 * - only a certificate the controller issued can be extended (a third party's CA signs its own renewals): 409
 *   CAN_NOT_UPDATE_AUTHENTICATOR otherwise
 * - extend-verify without a pending extension: 409 CAN_NOT_UPDATE_AUTHENTICATOR; a certificate other than the pending
 *   one: 400 INVALID_CLIENT_CERT
 * - an admin's request to extend (`POST /authenticators/{id}/request-extend`): an unknown authenticator is 404
 *   NOT_FOUND; one of another method, or a certificate this controller did not issue (its holder could not extend
 *   it), is 409 CAN_NOT_UPDATE_AUTHENTICATOR (the spec documents 403, which no code has; the real controller answers
 *   401 UNAUTHORIZED, which a client reads as a session problem, and flags third-party certificates too)
 * @see controller/model/authenticator_manager.go ExtendCertForIdentity, VerifyExtendCertForIdentity, RequestExtend
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Authenticator } from './identity-types.ts'

/** The caller's network-issued cert authenticator that may be extended. */
export function decideCertExtendable(a: Authenticator | undefined, identityId: string): Authenticator {
  if (!a) throw ApiError.notFound()
  if (a.method !== 'cert') throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'only a cert authenticator can be extended')
  if (a.identityId !== identityId) throw ApiError.unauthorized()
  if (!a.certPem || !a.fingerprint || !a.isIssuedByNetwork) {
    throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'only a certificate issued by this controller can be extended')
  }
  return a
}

/** The caller's cert authenticator with an extension waiting for verification, and that pending certificate. */
export function decidePendingExtension(a: Authenticator | undefined, identityId: string): { certPem: string; fingerprint: string } {
  const cert = decideCertExtendable(a, identityId)
  if (!cert.unverifiedCertPem || !cert.unverifiedFingerprint) {
    throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'the authenticator has no extension waiting for verification')
  }
  return { certPem: cert.unverifiedCertPem, fingerprint: cert.unverifiedFingerprint }
}

/** The pending certificate that `fingerprint` (of the certificate the client sent back) verifies. */
export function decideExtendVerify(a: Authenticator | undefined, identityId: string, fingerprint: string): { certPem: string; fingerprint: string } {
  const pending = decidePendingExtension(a, identityId)
  if (fingerprint !== pending.fingerprint) throw new ApiError('INVALID_CLIENT_CERT')
  return pending
}

/** The cert authenticator an admin may ask its holder to extend: one whose certificate this controller issued. */
export function decideExtendRequest(a: Authenticator | undefined): Authenticator {
  if (!a) throw ApiError.notFound()
  if (a.method !== 'cert') throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'only a cert authenticator can be asked to extend')
  if (!a.certPem || !a.fingerprint || !a.isIssuedByNetwork) {
    throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'only a certificate issued by this controller can be extended')
  }
  return a
}
