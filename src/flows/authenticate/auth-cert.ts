/**
 * Certificate primary authentication (`method=cert`): the client certificate the TLS handshake presented logs in the
 * identity whose cert authenticator holds that certificate's fingerprint.
 * - the leaf is the first certificate presented; the others are untrusted intermediates, in any order
 * - the leaf's SHA-1 fingerprint (lowercase hex of the DER) must belong to a cert authenticator; when none holds it,
 *   a verified, auth-enabled third-party CA with an `externalIdClaim` may name the identity instead: the claim's
 *   value in the certificate is the `externalId` of the identity that logs in (CA auto-enrollment made such
 *   identities without an authenticator), provided the chain verifies up to that CA; the session's authenticator is
 *   then the real controller's `internal` one
 * - the chain must verify (signatures, CA rights, validity windows at the controller's clock) up to one of the
 *   current trust anchors: the controller's own CAs and the verified, auth-enabled third-party CAs (`trustAnchorsOf`)
 * - a certificate past its notAfter passes only when the identity's authentication policy allows expired
 *   certificates (`primary.cert.allowExpiredCerts`, true in the default policy, as in the real controller)
 * - a leaf with an extendedKeyUsage that lacks clientAuth is refused (no extendedKeyUsage allows every use)
 * - an identity deleted while the chain was being verified is refused
 * - every failure is the same 401 INVALID_AUTH; the reason goes to the log only
 * - disabled identities, `primary.cert.allowed` and the session: `auth-api-session.ts`
 * @see controller-behaviour.md §4 "cert"; controller/model/authenticator_mod_cert.go
 */
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { readCertificateDer, toCertificateView, type CertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import { externalIdOf } from '../../domain/ca/ca-claims.ts'
import { authPolicyOf } from './auth-api-session.ts'
import type { AuthMethod, AuthPeer, PrimaryAuth } from './auth-method.ts'

export interface CertAuthDeps {
  identities: IdentityActor
  clock: Clock
  /**
   * The certificates (PEM) a client chain may end at, read on every login so the set can change at run time: the
   * controller's intermediate and root CAs, later also the verified, auth-enabled third-party CAs.
   */
  trustAnchors: () => readonly string[]
  /** The third-party CAs whose externalIdClaim may name the identity of a certificate no authenticator holds. */
  cas?: () => Pick<ThirdPartyCaReads, 'authTrustAnchors'>
  /** Where the reason of a refusal goes (never to the client). */
  log: (line: string) => void
}

/**
 * The trust anchors of certificate login: the controller's own CA certificates, then the verified third-party CAs with
 * `isAuthEnabled`. The list is rebuilt only when the CAs' `trustVersion` moves, so a login reads it without copying.
 */
export function trustAnchorsOf(own: readonly string[], cas: () => Pick<ThirdPartyCaReads, 'authTrustAnchors' | 'trustVersion'>): () => readonly string[] {
  let seen = -1
  let anchors: readonly string[] = own
  return () => {
    const reads = cas()
    if (reads.trustVersion !== seen) {
      seen = reads.trustVersion
      anchors = [...own, ...reads.authTrustAnchors().map((c) => c.certPem)]
    }
    return anchors
  }
}

export function createCertAuthMethod(deps: CertAuthDeps) {
  const refuse = (peer: AuthPeer, reason: string): never => {
    deps.log(`cert authentication from ${peer.remoteAddress || 'unknown'} refused: ${reason}`)
    throw ApiError.invalidAuth()
  }
  /** The identity an auth-enabled CA's externalIdClaim names in `leaf`, when the chain verifies up to that CA. */
  const byExternalId = async (leafDer: Uint8Array, intermediates: readonly Uint8Array[], leaf: CertificateView): Promise<PrimaryAuth | undefined> => {
    for (const ca of deps.cas?.().authTrustAnchors() ?? []) {
      if (!ca.externalIdClaim) continue
      const externalId = externalIdOf(ca.externalIdClaim, leaf)
      if (externalId === null) continue
      const before = deps.identities.snapshot().identityByExternalId(externalId)
      if (!before) continue
      const allowExpired = authPolicyOf(before).primary.cert.allowExpiredCerts
      const chain = await verifyCertificateChain({ leaf: leafDer, intermediates: [...intermediates], trusted: [ca.certPem], at: deps.clock.now(), allowExpired })
      if (!chain.ok) continue
      // re-read after the await: the identity may have been deleted or changed meanwhile
      const identity = deps.identities.snapshot().identityByExternalId(externalId)
      if (!identity) continue
      return { identity, authenticator: { id: 'internal', identityId: identity.id, method: 'cert' } }
    }
    return undefined
  }
  return {
    method: 'cert',
    kind: 'cert',
    async authenticate(_input, peer: AuthPeer): Promise<PrimaryAuth> {
      const [leafDer, ...intermediates] = peer.certChainDer
      if (!leafDer) return refuse(peer, 'no client certificate was presented')
      let leaf: CertificateView
      try {
        leaf = toCertificateView(readCertificateDer(leafDer))
      } catch {
        return refuse(peer, 'the client certificate could not be read')
      }
      if (leaf.extKeyUsages.length > 0 && !leaf.extKeyUsages.includes('clientAuth')) {
        return refuse(peer, `certificate ${leaf.fingerprintSha1} is not for client authentication (${leaf.extKeyUsages.join(', ')})`)
      }
      const authenticator = deps.identities.snapshot().certByFingerprintOf(leaf.fingerprintSha1)
      if (!authenticator) {
        const claimed = await byExternalId(leafDer, intermediates, leaf)
        return claimed ?? refuse(peer, `no cert authenticator has fingerprint ${leaf.fingerprintSha1}, and no CA claim names an identity`)
      }
      const before = deps.identities.snapshot().identity(authenticator.identityId)
      if (!before) return refuse(peer, `the identity of authenticator ${authenticator.id} is gone`)
      const allowExpired = authPolicyOf(before).primary.cert.allowExpiredCerts
      const chain = await verifyCertificateChain({ leaf: leafDer, intermediates, trusted: [...deps.trustAnchors()], at: deps.clock.now(), allowExpired })
      if (!chain.ok) return refuse(peer, `certificate ${leaf.fingerprintSha1}: ${chain.reason}: ${chain.message}`)
      // re-read after the await: the identity or its authenticator may have been deleted meanwhile
      const s = deps.identities.snapshot()
      const identity = s.identity(authenticator.identityId)
      if (!identity || s.certByFingerprintOf(leaf.fingerprintSha1)?.id !== authenticator.id) {
        return refuse(peer, `the authenticator of certificate ${leaf.fingerprintSha1} was deleted during login`)
      }
      return { identity, authenticator }
    },
  } as const satisfies AuthMethod
}
