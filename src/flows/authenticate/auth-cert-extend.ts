/**
 * Certificate extension of the current identity: `POST /current-identity/authenticators/{id}/extend {clientCertCsr}`
 * answers a new certificate, `POST .../extend-verify {clientCert}` proves the client holds it, and only then does the
 * new certificate replace the old one.
 * - the authenticator: decideCertExtendable (404 NOT_FOUND, 409 CAN_NOT_UPDATE_AUTHENTICATOR for another method or a
 *   certificate this controller did not issue, 401 UNAUTHORIZED for another identity's)
 * - extend runs over mTLS: the TLS connection must present the authenticator's current certificate, else 401
 *   UNAUTHORIZED (the session alone is not enough, as in the real controller); that certificate must chain, with
 *   clientAuth, to the controller's own CAs, where an expired one still qualifies (extension is how it is renewed):
 *   409 CAN_NOT_UPDATE_AUTHENTICATOR otherwise
 * - the CSR: enroll-client-csr.ts (400 COULD_NOT_PROCESS_CSR); the new key may differ from the old one (key roll)
 * - the new certificate is issued as the ott one is (CN = identity id, SPIFFE URI SAN, clientAuth, one year) and
 *   kept as the authenticator's pending certificate; a second extend replaces the pending one
 * - until verified, the old certificate logs in and the pending one does not; extend-verify with the pending
 *   certificate (exactly one PEM certificate, else 400 INVALID_CLIENT_CERT; another certificate: 400
 *   INVALID_CLIENT_CERT; nothing pending: 409 CAN_NOT_UPDATE_AUTHENTICATOR) swaps them: from then on only the new
 *   one logs in. API sessions opened with the old certificate stay open. Verification also clears an admin's request to
 *   extend (`isExtendRequested`, `isKeyRollRequested`, `extendRequestedAt`) and records whether the key changed
 *   (`lastExtendRolledKeys`, from the two certificates' public keys).
 * - answer of extend: `{ca: <the controller's CA certificates>, clientCert: <the new leaf>}`; of extend-verify: empty
 *
 * Failure story (CA then identity actor): the CA signs, then one identity-actor message stores the pending
 * certificate. A crash or refusal between the two leaves a certificate that no authenticator holds, which logs
 * nobody in; the old certificate is untouched until extend-verify, which is one identity-actor message.
 * @see edge-api client.yml /current-identity/authenticators/{id}/extend, extend-verify;
 *   controller/model/authenticator_manager.go ExtendCertForIdentity, VerifyExtendCertForIdentity
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { decideCertExtendable, decidePendingExtension } from '../../domain/identity/identity-cert-extend.ts'
import { certificateDersOf, parseCertificatesPem, readCertificateDer, readCertificateSpki, toCertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { parseIdentityCsr } from '../enroll/enroll-client-csr.ts'
import { IDENTITY_CERT_TTL_MS } from '../enroll/enroll-ott.ts'
import type { AuthPeer } from './auth-method.ts'

export interface CertExtendDeps {
  identities: IdentityActor
  ca: CaActor
  clock: Clock
  /** The controller's own CA certificates (PEM): what an extendable certificate chains to, and the answer's `ca`. */
  ownCas: readonly string[]
  /** The SPIFFE trust domain of issued client certificates. */
  trustDomain: string
}

export interface CertExtendResult {
  ca: string
  clientCert: string
}

export function createCertExtension(deps: CertExtendDeps) {
  return {
    async extend(identityId: string, authenticatorId: string, csrPem: string, peer: AuthPeer, change: ChangeContext): Promise<CertExtendResult> {
      const a = decideCertExtendable(deps.identities.snapshot().authenticators.get(authenticatorId), identityId)
      const presented = peer.certChainDer.findIndex((der) => {
        try {
          return toCertificateView(readCertificateDer(der)).fingerprintSha1 === a.fingerprint
        } catch {
          return false
        }
      })
      if (presented < 0) throw ApiError.unauthorized()
      const leafDer = peer.certChainDer[presented]
      const chain = await verifyCertificateChain({
        leaf: leafDer,
        intermediates: peer.certChainDer.filter((_, i) => i !== presented),
        trusted: [...deps.ownCas],
        at: deps.clock.now(),
        allowExpired: true,
      })
      const leaf = toCertificateView(readCertificateDer(leafDer))
      if (!chain.ok || (leaf.extKeyUsages.length > 0 && !leaf.extKeyUsages.includes('clientAuth'))) {
        throw ApiError.withMessage('CAN_NOT_UPDATE_AUTHENTICATOR', 'the presented certificate does not chain to this controller\'s CA for client authentication')
      }
      const { csr, spiffeId } = await parseIdentityCsr(csrPem, deps.trustDomain, identityId)
      const issued = await deps.ca.ask({
        type: 'ca.issueCertificate',
        request: { purpose: 'client', csr, commonName: identityId, spiffeId, ttlMs: IDENTITY_CERT_TTL_MS },
      })
      await deps.identities.ask({ type: 'authenticator.extendCert', id: a.id, identityId, certPem: issued.certPem, fingerprint: issued.fingerprint, change })
      return { ca: deps.ownCas.join(''), clientCert: issued.certPem }
    },

    async verify(identityId: string, authenticatorId: string, certPem: string, change: ChangeContext): Promise<void> {
      const a = deps.identities.snapshot().authenticators.get(authenticatorId)
      decidePendingExtension(a, identityId)
      let fingerprint: string
      let spki: Uint8Array
      try {
        const certs = parseCertificatesPem(certPem)
        if (certs.length !== 1) throw new Error('not exactly one certificate')
        fingerprint = certs[0].fingerprintSha1
        spki = readCertificateSpki(certificateDersOf(certPem)[0])
      } catch {
        throw new ApiError('INVALID_CLIENT_CERT')
      }
      const rolledKeys = !Buffer.from(spki).equals(spkiOf(a!.certPem!))
      await deps.identities.ask({ type: 'authenticator.verifyExtendedCert', id: authenticatorId, identityId, fingerprint, rolledKeys, change })
    },
  }
}

export type CertExtension = ReturnType<typeof createCertExtension>

/** The SubjectPublicKeyInfo of the certificate the authenticator holds; empty when it cannot be read. */
function spkiOf(certPem: string): Uint8Array {
  try {
    return readCertificateSpki(certificateDersOf(certPem)[0])
  } catch {
    return new Uint8Array()
  }
}
