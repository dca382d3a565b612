/**
 * What everyone may read of the controller CA: certificates, public keys, notes from loading the PKI. It holds no
 * private key: those stay inside the CA actor's behavior (ca-actor.ts), out of reach of `snapshot()`.
 */
import type { CertificateView } from '../../pki/pki-certs.ts'
import type { JwtKeyName } from './ca-messages.ts'

/** A certificate of the controller PKI, public parts only. */
export interface PublicCertificate {
  readonly certPem: string
  readonly view: CertificateView
}

/** The controller PKI without its keys. */
export interface PublicPki {
  readonly dir: string
  readonly root: PublicCertificate
  readonly intermediate: PublicCertificate
  /** The TLS server certificate (leaf only). */
  readonly server: PublicCertificate
  /** Intermediate then root: what clients should trust (and what EST cacerts serves). */
  readonly caBundlePem: string
  /** Files written when the PKI was loaded (a new data directory); empty when everything was reused. */
  readonly created: readonly string[]
  /** SANs the existing server certificate lacks (it is kept; an operator decides). */
  readonly sansMissing: readonly string[]
}

/** What verifies a JWT the CA signed with one of its keys. */
export interface JwtVerifier {
  readonly publicKey: CryptoKey
  /** The JOSE algorithm: ES256/ES384/ES512, EdDSA or RS256, from the key. */
  readonly alg: string
  readonly kid?: string
}

export class CaState {
  constructor(
    readonly pki: PublicPki,
    readonly jwtVerifiers: Readonly<Record<JwtKeyName, JwtVerifier>>,
  ) {}
}
