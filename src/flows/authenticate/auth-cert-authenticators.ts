/**
 * An admin's cert authenticator (`POST /authenticators` with `method: cert` and `certPem`).
 * - certPem must be exactly one PEM certificate: 400 COULD_NOT_PARSE_PEM_BLOCK (EXPECTED_PEM_CERTIFICATE,
 *   COULD_NOT_PARSE_DER_BLOCK for a block that is not one)
 * - the identity must exist (400 COULD_NOT_VALIDATE on identityId) and have no cert authenticator (409
 *   MAX_AUTHENTICATOR_METHODS_REACHED); the certificate must belong to no authenticator (409 CERT_IN_USE)
 * - the certificate must chain to the controller's own CAs or to a verified third-party CA, checked at its own
 *   notBefore as the real controller does (so an expired certificate can be registered; login applies the
 *   authentication policy): else 400 CERTIFICATE_FAILED_VALIDATION (the real controller answers 500)
 * - the third-party CA it chains to is kept on the authenticator (`caId`): deleting that CA deletes it, a re-enroll
 *   makes an ottca enrollment of it; the authenticator is not `isIssuedByNetwork`, as the real controller stores it
 * - the identity actor decides the identity, the one-per-method rule and the fingerprint again, in its mailbox
 * @see controller/model/authenticator_manager.go ApplyCreate; edge-api management.yml authenticatorCreate
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { readCertificates, toCertificatePem, toCertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import { decideNewCertAuthenticator } from '../../domain/identity/identity-decide.ts'
import type { Authenticator } from '../../domain/identity/identity-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'

export interface CertAuthenticatorDeps {
  identities: IdentityActor
  clock: Clock
  /** The controller's own CA certificates (PEM). */
  ownCas: readonly string[]
  cas: () => Pick<ThirdPartyCaReads, 'verifiedCas'>
}

export async function createCertAuthenticator(
  deps: CertAuthenticatorDeps,
  input: { identityId: string; certPem: string; tags: Authenticator['tags'] },
  change: ChangeContext,
): Promise<{ id: string }> {
  const certs = readCertificates(input.certPem)
  if (certs.length !== 1) throw ApiError.withMessage('COULD_NOT_PARSE_PEM_BLOCK', 'client pem must be exactly one certificate')
  const [cert] = certs
  const view = toCertificateView(cert)
  decideNewCertAuthenticator(deps.identities.snapshot(), input.identityId, view.fingerprintSha1)
  const certPem = toCertificatePem(cert)
  const verifies = async (trusted: string[]) => (await verifyCertificateChain({ leaf: certPem, trusted, at: view.notBefore })).ok
  let caId: string | null = null
  if (!(await verifies([...deps.ownCas]))) {
    let found: string | undefined
    for (const ca of deps.cas().verifiedCas()) {
      if (await verifies([ca.certPem])) {
        found = ca.id
        break
      }
    }
    if (found === undefined) throw ApiError.withMessage('CERTIFICATE_FAILED_VALIDATION', 'the certificate does not chain to a known CA')
    caId = found
  }
  return deps.identities.ask({
    type: 'authenticator.createCert',
    identityId: input.identityId,
    certPem,
    fingerprint: view.fingerprintSha1,
    caId,
    tags: input.tags,
    change,
  })
}
