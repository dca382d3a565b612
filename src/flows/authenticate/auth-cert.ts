/**
 * Certificate primary authentication (`method=cert`): the client certificate the TLS handshake presented logs in the
 * identity whose cert authenticator holds that certificate's fingerprint.
 * - the leaf is the first certificate presented; the others are untrusted intermediates, in any order
 * - the leaf's SHA-1 fingerprint (lowercase hex of the DER) must belong to a cert authenticator, or to a certificate
 *   of a live API session (flows/sessions/session-certificate.ts): that one logs in the session's identity with the
 *   session's authenticator, and never once expired, whatever the policy says
 * - a pending certificate of an extension (auth-cert-extend.ts) is neither, so it logs nobody in until verified
 * - when neither holds it, a verified, auth-enabled third-party CA with an `externalIdClaim` may name the identity
 *   instead: the claim's value in the certificate is the `externalId` of the identity that logs in (CA auto-enrollment
 *   made such identities without an authenticator), provided the chain verifies up to that CA; the session's
 *   authenticator is then the real controller's `internal` one
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
import { readCertificateDer, readLeafFacts, toCertificateView, type CertificateView } from '../../pki/pki-certs.ts'
import { isIssuedByTrustAnchor, verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import type { Authenticator } from '../../domain/identity/identity-types.ts'
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
  /** The identity an auth-enabled CA's externalIdClaim names in `leaf`, when the chain verifies up to that CA. */
  const byExternalId = async (leafDer: Uint8Array, intermediates: readonly Uint8Array[]): Promise<PrimaryAuth | undefined> => {
    const claimants = (deps.cas?.().authTrustAnchors() ?? []).filter((ca) => ca.externalIdClaim)
    if (claimants.length === 0) return undefined
    // the claim may sit anywhere in the certificate (SANs, subject): read it whole, only on this path
    let leaf: CertificateView
    try {
      leaf = toCertificateView(readCertificateDer(leafDer))
    } catch {
      return undefined
    }
    for (const ca of claimants) {
      const externalId = externalIdOf(ca.externalIdClaim!, leaf)
      if (externalId === null) continue
      const before = deps.identities.snapshot().identityByExternalId(externalId)
      if (!before) continue
      const allowExpired = authPolicyOf(before, deps.identities.snapshot()).primary.cert.allowExpiredCerts
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
      let leaf: Pick<CertificateView, 'fingerprintSha1' | 'extKeyUsages'>
      try {
        leaf = readLeafFacts(leafDer)
      } catch {
        return refuse(peer, 'the client certificate could not be read')
      }
      if (leaf.extKeyUsages.length > 0 && !leaf.extKeyUsages.includes('clientAuth')) {
        return refuse(peer, `certificate ${leaf.fingerprintSha1} is not for client authentication (${leaf.extKeyUsages.join(', ')})`)
      }
      // the authenticator holding the certificate, else the session a certificate was issued to
      const holderOf = (fingerprint: string) =>
        deps.identities.snapshot().certByFingerprintOf(fingerprint) ?? deps.sessionCertificate?.(fingerprint)
      const ofSession = deps.identities.snapshot().certByFingerprintOf(leaf.fingerprintSha1) === undefined
      const authenticator = holderOf(leaf.fingerprintSha1)
      if (!authenticator) {
        const claimed = await byExternalId(leafDer, intermediates)
        return claimed ?? refuse(peer, `no cert authenticator or live API session has fingerprint ${leaf.fingerprintSha1}, and no CA claim names an identity`)
      }
      const before = deps.identities.snapshot().identity(authenticator.identityId)
      if (!before) return refuse(peer, `the identity of authenticator ${authenticator.id} is gone`)
      const allowExpired = !ofSession && authPolicyOf(before, deps.identities.snapshot()).primary.cert.allowExpiredCerts
      const check = { leaf: leafDer, intermediates, trusted: [...deps.trustAnchors()], at: deps.clock.now(), allowExpired }
      if (!isIssuedByTrustAnchor(check)) {
        const chain = await verifyCertificateChain(check)
        if (!chain.ok) return refuse(peer, `certificate ${leaf.fingerprintSha1}: ${chain.reason}: ${chain.message}`)
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
