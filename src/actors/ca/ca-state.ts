/**
 * What everyone may read of the CA actor: the controller PKI's certificates, public keys and notes from loading it,
 * and the third-party CAs with their trust list. It holds no private key: those stay inside the CA actor's behavior
 * (ca-actor.ts), out of reach of `snapshot()`. Only the actor's handlers call the put/remove methods.
 */
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import type { ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import type { ExternalJwtSigner, ExternalJwtSignerReads } from '../../domain/ca/ca-jwt-signer-types.ts'
import { EntityTable } from '../../lib/entity-table.ts'
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

/** What the CA actor's `snapshot()` answers: the controller PKI without keys, the third-party CAs and the JWT signers. */
export interface CaReads extends ThirdPartyCaReads, ExternalJwtSignerReads {
  readonly pki: PublicPki
  readonly jwtVerifiers: Readonly<Record<JwtKeyName, JwtVerifier>>
}

export class CaState implements CaReads {
  readonly cas = new EntityTable<ThirdPartyCa>()
  private readonly byFingerprint = new Map<string, string>()
  private verified: readonly ThirdPartyCa[] | null = null
  private authAnchors: readonly ThirdPartyCa[] | null = null
  trustVersion = 0
  readonly jwtSigners = new EntityTable<ExternalJwtSigner>()
  private readonly signerByKid = new Map<string, string>()
  private readonly signerByIssuer = new Map<string, string>()

  constructor(
    readonly pki: PublicPki,
    readonly jwtVerifiers: Readonly<Record<JwtKeyName, JwtVerifier>>,
  ) {}

  caByFingerprint(fingerprint: string): ThirdPartyCa | undefined {
    const id = this.byFingerprint.get(fingerprint)
    return id === undefined ? undefined : this.cas.get(id)
  }
  verifiedCas(): readonly ThirdPartyCa[] {
    return (this.verified ??= this.cas.all().filter((c) => c.isVerified))
  }
  authTrustAnchors(): readonly ThirdPartyCa[] {
    return (this.authAnchors ??= this.verifiedCas().filter((c) => c.isAuthEnabled))
  }

  /** Stores a CA; answers whether the verified CAs changed (the new or the old record is a verified one). */
  putCa(next: ThirdPartyCa): boolean {
    const prev = this.cas.get(next.id)
    if (prev) this.byFingerprint.delete(prev.fingerprint)
    this.cas.put(next)
    this.byFingerprint.set(next.fingerprint, next.id)
    return this.trustTouched(prev?.isVerified === true || next.isVerified)
  }

  /** Removes a CA; answers it, and whether the verified CAs changed. */
  removeCa(id: string): { removed: ThirdPartyCa | undefined; trustChanged: boolean } {
    const removed = this.cas.remove(id)
    if (!removed) return { removed, trustChanged: false }
    this.byFingerprint.delete(removed.fingerprint)
    return { removed, trustChanged: this.trustTouched(removed.isVerified) }
  }

  jwtSignerByKid(kid: string): ExternalJwtSigner | undefined {
    const id = this.signerByKid.get(kid)
    return id === undefined ? undefined : this.jwtSigners.get(id)
  }
  jwtSignerByIssuer(issuer: string): ExternalJwtSigner | undefined {
    const id = this.signerByIssuer.get(issuer)
    return id === undefined ? undefined : this.jwtSigners.get(id)
  }

  /** Stores a JWT signer (replacing the record with its id) and its kid and issuer indexes. */
  putJwtSigner(next: ExternalJwtSigner): void {
    this.unindexJwtSigner(this.jwtSigners.get(next.id))
    this.jwtSigners.put(next)
    if (next.kid !== null) this.signerByKid.set(next.kid, next.id)
    this.signerByIssuer.set(next.issuer, next.id)
  }

  /** Removes a JWT signer; answers it. */
  removeJwtSigner(id: string): ExternalJwtSigner | undefined {
    const removed = this.jwtSigners.remove(id)
    this.unindexJwtSigner(removed)
    return removed
  }

  private unindexJwtSigner(prev: ExternalJwtSigner | undefined): void {
    if (!prev) return
    if (prev.kid !== null) this.signerByKid.delete(prev.kid)
    this.signerByIssuer.delete(prev.issuer)
  }

  private trustTouched(touched: boolean): boolean {
    if (!touched) return false
    this.verified = null
    this.authAnchors = null
    this.trustVersion++
    return true
  }
}
