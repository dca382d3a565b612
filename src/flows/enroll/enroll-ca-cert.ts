/**
 * The certificate a client presents on the TLS connection to enroll through a third-party CA (ottca, CA
 * auto-enrollment): the leaf must chain, through the other presented certificates in any order, to one of the given
 * CAs, be valid now, and allow client authentication (an extendedKeyUsage without clientAuth is refused; none at all
 * allows every use, as Go's verifier does).
 * @see controller/model/enrollment_mod_ottca.go, enrollment_mod_ca.go (x509 Verify with KeyUsages clientAuth)
 */
import { encodePem } from '../../lib/pem.ts'
import { readCertificateDer, toCertificateView, type CertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'

/** A presented leaf that verified against `ca`. */
export interface CaCertificate {
  readonly ca: ThirdPartyCa
  /** The leaf alone, as PEM (what the cert authenticator stores). */
  readonly certPem: string
  readonly view: CertificateView
}

/** The presented leaf and the first of `cas` it chains to, or why there is none (for the log). */
export async function caCertificateOf(
  peer: AuthPeer,
  cas: readonly ThirdPartyCa[],
  at: number,
): Promise<{ ok: true; cert: CaCertificate } | { ok: false; reason: string }> {
  const [leafDer, ...intermediates] = peer.certChainDer
  if (!leafDer) return { ok: false, reason: 'no client certificate was presented' }
  let view: CertificateView
  try {
    view = toCertificateView(readCertificateDer(leafDer))
  } catch {
    return { ok: false, reason: 'the client certificate could not be read' }
  }
  if (view.extKeyUsages.length > 0 && !view.extKeyUsages.includes('clientAuth')) {
    return { ok: false, reason: `certificate ${view.fingerprintSha1} is not for client authentication` }
  }
  const reasons: string[] = []
  for (const ca of cas) {
    const chain = await verifyCertificateChain({ leaf: leafDer, intermediates: [...intermediates], trusted: [ca.certPem], at })
    if (chain.ok) return { ok: true, cert: { ca, certPem: encodePem('CERTIFICATE', leafDer), view } }
    reasons.push(`CA ${ca.id}: ${chain.reason}: ${chain.message}`)
  }
  return { ok: false, reason: reasons.length > 0 ? reasons.join('; ') : 'no CA to verify against' }
}
