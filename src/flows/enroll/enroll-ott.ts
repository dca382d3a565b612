/**
 * One-time-token enrollment (`ott`): an admin creates an identity with `enrollment: {ott: true}` and hands its JWT to
 * a client, which redeems the token once with a CSR (`POST /enroll/ott {token, clientCsr}` or the legacy
 * `POST /enroll?method=ott&token=…` with the PEM CSR as the body) and receives its client certificate.
 * - the token, JWT (em = "ott") and expiry: enroll-jwt.ts
 * - redeem: a missing, unknown or used token, or a token of another method: 400 INVALID_ENROLLMENT_TOKEN; an expired
 *   one: 400 ENROLLMENT_EXPIRED; both checked before the CSR is read, and again in the identity actor
 * - the CSR: missing, garbage, truncated, of an unsupported key type, with a signature that does not verify, asking
 *   for CA rights or for names the identity does not own: 400 COULD_NOT_PROCESS_CSR whose cause says which
 *   (enroll-client-csr.ts, shared with certificate extension and API-session certificates)
 * - the certificate: issued by the controller's intermediate CA, CN = identity id, URI SAN
 *   spiffe://<trust domain>/identity/<id>, keyUsage digitalSignature (+ keyEncipherment for RSA), EKU clientAuth;
 *   the CSR's subject is not copied
 * - answer `{cert: <leaf + intermediate PEM>, controllers: [advertised address]}`
 *
 * Failure story (two actors, CA then identity): the CA issues the certificate, then ONE identity-actor message
 * (`enrollment.redeemWithCertificate`) removes the enrollment and creates the cert authenticator (isIssuedByNetwork,
 * fingerprint) in one durable transaction. So a token is never consumed without its authenticator, nor the reverse.
 * Two racing redeems both may get a certificate issued; the identity actor's mailbox lets exactly one consume the
 * token, and the other is refused INVALID_ENROLLMENT_TOKEN. A certificate issued for a redeem that then fails (race
 * lost, identity deleted meanwhile, crash) belongs to no authenticator, so it logs nobody in.
 * @see controller-behaviour.md §6; controller/model/enrollment_mod_ott.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { parseIdentityCsr } from './enroll-client-csr.ts'
import { issueEnrollmentJwt, tokenOf, type EnrollmentJwtDeps } from './enroll-jwt.ts'
import type { EnrollInput, EnrollmentDraft, EnrollmentMethod, EnrollmentRequest, EnrollmentTarget, EnrollResult } from './enroll-method.ts'

/** How long an identity's certificate from an ott enrollment is valid. */
export const IDENTITY_CERT_TTL_MS = 365 * 24 * 3_600_000

export interface OttEnrollDeps extends EnrollmentJwtDeps {
  identities: IdentityActor
  /** The SPIFFE trust domain of issued client certificates. */
  trustDomain: string
}

/** The CSR text of a redeem: the JSON body's `clientCsr`, or the whole body when it came as PEM text. */
function csrOf(body: unknown): string {
  if (typeof body === 'string') return body
  const csr = (body as { clientCsr?: unknown } | null)?.clientCsr
  if (typeof csr !== 'string') throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'no CSR given: send clientCsr (JSON) or a PEM body')
  return csr
}

export function createOttEnrollMethod(deps: OttEnrollDeps) {
  return {
    method: 'ott',
    async prepare(request: EnrollmentRequest, target: EnrollmentTarget): Promise<EnrollmentDraft> {
      return { method: 'ott', ...(await issueEnrollmentJwt(deps, request, target)), caId: null, username: null }
    },
    async redeem(input: EnrollInput, _peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const token = tokenOf(input)
      const { identityId } = decideRedeemable(deps.identities.snapshot().enrollmentOfToken(token), 'ott', deps.clock.now())
      const { csr, spiffeId } = await parseIdentityCsr(csrOf(input.body), deps.trustDomain, identityId)
      const issued = await deps.ca.ask({
        type: 'ca.issueCertificate',
        request: { purpose: 'client', csr, commonName: identityId, spiffeId, ttlMs: IDENTITY_CERT_TTL_MS },
      })
      await deps.identities.ask({
        type: 'enrollment.redeemWithCertificate',
        token,
        method: 'ott',
        certPem: issued.certPem,
        fingerprint: issued.fingerprint,
        isIssuedByNetwork: true,
        change,
      })
      return { cert: issued.chainPem, controllers: [deps.advertisedUrl()] }
    },
  } as const satisfies EnrollmentMethod
}
