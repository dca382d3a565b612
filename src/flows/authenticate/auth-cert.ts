/**
 * Certificate primary authentication (`method=cert`): the client certificate the TLS handshake presented logs in the
 * identity whose cert authenticator holds that certificate's fingerprint.
 * - the leaf is the first certificate presented; the others are untrusted intermediates, in any order
 * - the leaf's SHA-1 fingerprint (lowercase hex of the DER) must belong to a cert authenticator, or to a certificate
 *   of a live API session (flows/sessions/session-certificate.ts): that one logs in the session's identity with the
 *   session's authenticator, and never once expired, whatever the policy says
 * - a pending certificate of an extension (auth-cert-extend.ts) is neither, so it logs nobody in until verified
 * - the chain must verify (signatures, CA rights, validity windows at the controller's clock) up to one of the
 *   current trust anchors: the controller's own CAs and the verified, auth-enabled third-party CAs (`trustAnchorsOf`);
 *   a leaf an anchor signed directly is checked by OpenSSL alone (pki-chain `isIssuedByTrustAnchor`), anything else
 *   by the full path search
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
import { readLeafFacts, type CertificateView } from '../../pki/pki-certs.ts'
import { isIssuedByTrustAnchor, verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import type { Authenticator } from '../../domain/identity/identity-types.ts'
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
  /** Where the reason of a refusal goes (never to the client). */
  log: (line: string) => void
  /** The live API-session certificate with a fingerprint, as its identity and the authenticator of its session. */
  sessionCertificate?: (fingerprint: string) => Pick<Authenticator, 'id' | 'identityId' | 'method'> | undefined
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
  return {
    method: 'cert',
    kind: 'cert',
    async authenticate(_input, peer: AuthPeer): Promise<PrimaryAuth> {
      const [leafDer, ...intermediates] = peer.certChainDer
      if (!leafDer) return refuse(peer, 'no client certificate was presented')
      let leaf: Pick<CertificateView, 'fingerprintSha1' | 'extKeyUsages'>
      try {
        leaf = readLeafFacts(leafDer)
      } catch {
        return refuse(peer, 'the client certificate could not be read')
      }
      // the authenticator holding the certificate, else the session a certificate was issued to
      const holderOf = (fingerprint: string) =>
        deps.identities.snapshot().certByFingerprintOf(fingerprint) ?? deps.sessionCertificate?.(fingerprint)
      const ofSession = deps.identities.snapshot().certByFingerprintOf(leaf.fingerprintSha1) === undefined
      const authenticator = holderOf(leaf.fingerprintSha1)
      if (!authenticator) return refuse(peer, `no cert authenticator or live API session has fingerprint ${leaf.fingerprintSha1}`)
      const before = deps.identities.snapshot().identity(authenticator.identityId)
      if (!before) return refuse(peer, `the identity of authenticator ${authenticator.id} is gone`)
      const allowExpired = !ofSession && authPolicyOf(before).primary.cert.allowExpiredCerts
      const check = { leaf: leafDer, intermediates, trusted: [...deps.trustAnchors()], at: deps.clock.now(), allowExpired }
      if (!isIssuedByTrustAnchor(check)) {
        const chain = await verifyCertificateChain(check)
        if (!chain.ok) return refuse(peer, `certificate ${leaf.fingerprintSha1}: ${chain.reason}: ${chain.message}`)
      }
      if (leaf.extKeyUsages.length > 0 && !leaf.extKeyUsages.includes('clientAuth')) {
        return refuse(peer, `certificate ${leaf.fingerprintSha1} is not for client authentication (${leaf.extKeyUsages.join(', ')})`)
      }
      // re-read after the await: the identity or its authenticator may have been deleted meanwhile
      const s = deps.identities.snapshot()
      const identity = s.identity(authenticator.identityId)
      if (!identity || holderOf(leaf.fingerprintSha1)?.id !== authenticator.id || !s.authenticators.has(authenticator.id)) {
        return refuse(peer, `the authenticator or API session of certificate ${leaf.fingerprintSha1} was deleted during login`)
      }
      return { identity, authenticator }
    },
  } as const satisfies AuthMethod
}
