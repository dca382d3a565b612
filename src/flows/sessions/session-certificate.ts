/**
 * API-session certificates (`POST /current-api-session/certificates {csr}`, the seed's "Ephemeral certificate"): a
 * short-lived client certificate bound to the caller's API session.
 * - the CSR: enroll-client-csr.ts (400 COULD_NOT_PROCESS_CSR), as for any client certificate of an identity
 * - the certificate: issued by the controller's intermediate CA as an enrolled one (CN = identity id, SPIFFE URI SAN,
 *   clientAuth), valid for 12 hours (the real controller's lifespan)
 * - it logs its identity in by certificate (auth-cert.ts) only while its API session lives, and never once expired;
 *   it is removed with its API session (logout, timeout, admin delete, identity delete) or by `DELETE`
 * - answer: `{id, certificate: <the leaf>, cas: <the controller's CA certificates>}`
 *
 * Failure story (CA then session registry): the CA signs, then one session-registry message stores the certificate
 * for the API session, refused (401 UNAUTHORIZED) when the session ended meanwhile. A certificate issued for a
 * request that then fails belongs to no session and logs nobody in.
 * @see edge-api client.yml /current-api-session/certificates; controller/model/api_session_certificate_manager.go
 */
import { decodePem } from '../../lib/pem.ts'
import { readLeafFacts } from '../../pki/pki-certs.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Authenticator } from '../../domain/identity/identity-types.ts'
import { isExpired, type ApiSession, type ApiSessionCertificate } from '../../domain/session/session-types.ts'
import { parseIdentityCsr } from '../enroll/enroll-client-csr.ts'

/** How long an API-session certificate is valid (controller/internal/routes/current_api_session_router.go). */
export const SESSION_CERT_TTL_MS = 12 * 3_600_000

export interface SessionCertificateDeps {
  sessions: SessionRegistryActor
  ca: CaActor
  /** The controller's own CA certificates (PEM): the answer's `cas`. */
  ownCas: readonly string[]
  /** The SPIFFE trust domain of issued client certificates. */
  trustDomain: string
}

export function createSessionCertificates(deps: SessionCertificateDeps) {
  return {
    /**
     * A certificate for an OIDC sign-in (a CSR at the token endpoint): issued as an API-session certificate, stored
     * nowhere; its fingerprint goes into the tokens' `z_cfs`, which is what binds it.
     */
    async issueUnstored(identityId: string, csrPem: string): Promise<{ certPem: string; fingerprint: string }> {
      const { csr, spiffeId } = await parseIdentityCsr(csrPem, deps.trustDomain, identityId)
      const issued = await deps.ca.ask({
        type: 'ca.issueCertificate',
        request: { purpose: 'client', csr, commonName: identityId, spiffeId, ttlMs: SESSION_CERT_TTL_MS },
      })
      return { certPem: issued.certPem, fingerprint: issued.fingerprint }
    },
    async create(session: Pick<ApiSession, 'id' | 'identityId'>, csrPem: string, change: ChangeContext): Promise<{ certificate: ApiSessionCertificate; cas: string }> {
      const { csr, spiffeId } = await parseIdentityCsr(csrPem, deps.trustDomain, session.identityId)
      const issued = await deps.ca.ask({
        type: 'ca.issueCertificate',
        request: { purpose: 'client', csr, commonName: session.identityId, spiffeId, ttlMs: SESSION_CERT_TTL_MS },
      })
      const facts = readLeafFacts(decodePem(issued.certPem)[0].der)
      const certificate = await deps.sessions.ask({
        type: 'apiSessionCert.create',
        certificate: {
          apiSessionId: session.id,
          identityId: session.identityId,
          // the CA issues client certificates with this subject alone
          subject: `CN=${session.identityId}`,
          fingerprint: issued.fingerprint,
          certPem: issued.certPem,
          validFrom: facts.notBefore,
          validTo: facts.notAfter,
        },
        change,
      })
      return { certificate, cas: deps.ownCas.join('') }
    },
  }
}

export type SessionCertificates = ReturnType<typeof createSessionCertificates>

/**
 * Certificate login's view of API-session certificates (auth-cert.ts `sessionCertificate`): the authenticator of the
 * live API session a certificate was issued to, or undefined when there is none, its session has timed out, or that
 * authenticator is gone.
 */
export function sessionCertificateHolder(deps: {
  sessions: SessionRegistryActor
  identities: IdentityActor
  clock: Clock
  timeoutMs: number
}): (fingerprint: string) => Authenticator | undefined {
  return (fingerprint) => {
    const s = deps.sessions.snapshot()
    const cert = s.sessionCertificateByFingerprint(fingerprint)
    const session = cert && s.byId.get(cert.apiSessionId)
    if (!session || isExpired(session, deps.clock.now(), deps.timeoutMs, s.activityOf(session))) return undefined
    return deps.identities.snapshot().authenticators.get(session.authenticatorId)
  }
}
