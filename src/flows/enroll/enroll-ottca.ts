/**
 * One-time-token enrollment with a pre-exchanged certificate (`ottca`): an admin creates an identity with
 * `enrollment: {ottca: "<caId>"}` (or `POST /enrollments` with `method: ottca, caId`); the client redeems the token
 * once (`POST /enroll/ottca {token}` or the generic `?method=ottca&token=`) while presenting, on the TLS connection, a
 * certificate signed by that CA. No CSR: the presented certificate becomes the identity's cert authenticator.
 * - create: the CA must exist: 400 COULD_NOT_VALIDATE (field caId); the token, JWT (em = "ottca") and expiry:
 *   enroll-jwt.ts
 * - redeem: token refusals as for ott (INVALID_ENROLLMENT_TOKEN, ENROLLMENT_EXPIRED); a CA deleted meanwhile takes
 *   its enrollments along (an unknown one is INVALID_ENROLLMENT_TOKEN); a CA that is not verified, not
 *   `isOttCaEnrollmentEnabled` or not `isAuthEnabled` (its certificates could not log in): 400
 *   ENROLLMENT_CA_NOT_VALID
 * - the presented certificate (leaf first, intermediates in any order) must chain to that CA, be valid now and allow
 *   client authentication, else (or when none is presented) 400 CERTIFICATE_FAILED_VALIDATION; a certificate that
 *   already belongs to an authenticator: 409 CERT_IN_USE with data {fingerprint}
 * - ONE identity-actor message (`enrollment.redeemWithCertificate`) removes the enrollment and creates the cert
 *   authenticator (not issued by the network, with the CA's id), so the token is used once and never without its
 *   authenticator; it decides the token and the certificate's uniqueness again, in the mailbox
 * - answer `{controllers}`
 * @see controller-behaviour.md §6 "POST /enroll/ottca"; controller/model/enrollment_mod_ottca.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import { decideCertUnused } from '../../domain/identity/identity-decide.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import { isOttCaEnrollable } from '../../domain/ca/ca-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { caCertificateOf } from './enroll-ca-cert.ts'
import { issueEnrollmentJwt, tokenOf, type EnrollmentJwtDeps } from './enroll-jwt.ts'
import type { EnrollInput, EnrollmentDraft, EnrollmentMethod, EnrollmentRequest, EnrollmentTarget, EnrollResult } from './enroll-method.ts'

export interface OttCaEnrollDeps extends EnrollmentJwtDeps {
  identities: IdentityActor
  /** The third-party CAs (the CA actor's snapshot). */
  cas: () => Pick<ThirdPartyCaReads, 'cas'>
  /** Where the reason of a refused certificate goes (the client gets only the code). */
  log: (line: string) => void
}

export function createOttCaEnrollMethod(deps: OttCaEnrollDeps) {
  return {
    method: 'ottca',
    async prepare(request: EnrollmentRequest, target: EnrollmentTarget): Promise<EnrollmentDraft> {
      const caId = request.arg ?? ''
      if (!deps.cas().cas.get(caId)) throw ApiError.invalidField('caId', `no CA found with id '${caId}'`, caId)
      return { method: 'ottca', ...(await issueEnrollmentJwt(deps, request, target)), caId, username: null }
    },
    async redeem(input: EnrollInput, peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const token = tokenOf(input)
      const enrollment = decideRedeemable(deps.identities.snapshot().enrollmentOfToken(token), 'ottca', deps.clock.now())
      const ca = enrollment.caId === null ? undefined : deps.cas().cas.get(enrollment.caId)
      if (!ca) throw new ApiError('INVALID_ENROLLMENT_TOKEN')
      if (!isOttCaEnrollable(ca)) throw new ApiError('ENROLLMENT_CA_NOT_VALID')
      const presented = await caCertificateOf(peer, [ca], deps.clock.now())
      if (!presented.ok) {
        deps.log(`ottca enrollment of ${enrollment.identityId} from ${peer.remoteAddress || 'unknown'} refused: ${presented.reason}`)
        throw new ApiError('CERTIFICATE_FAILED_VALIDATION')
      }
      const { certPem, view } = presented.cert
      decideCertUnused(deps.identities.snapshot(), view.fingerprintSha1)
      await deps.identities.ask({
        type: 'enrollment.redeemWithCertificate',
        token,
        method: 'ottca',
        certPem,
        fingerprint: view.fingerprintSha1,
        isIssuedByNetwork: false,
        caId: ca.id,
        change,
      })
      return { controllers: [deps.advertisedUrl()] }
    },
  } as const satisfies EnrollmentMethod
}
