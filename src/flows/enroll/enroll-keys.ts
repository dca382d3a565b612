/**
 * The keys that sign enrollment JWTs (`GET /enroll/jwks`) and the proof that a controller holds one
 * (`POST /enroll/challenge`), so an enrolling client can check that the JWT it was handed comes from the network it
 * is about to join.
 * - the JWKS lists the keys enrollment JWTs are signed with: this node's TLS server key and, on a cluster node, every
 *   member's (each node signs the JWTs it makes with its own key; oidc-keys.ts checks the members' certificates), each
 *   with the `kid` its JWTs carry (the SHA-1 of its server certificate), `alg`, `use: sig`, and `x5c` = its server
 *   certificate and the intermediate CA that issued it (standard base64 DER), which chain to the CA bundle
 * - the challenge: `nonce` must be a UUID in its text form (400 COULD_NOT_VALIDATE on `nonce` otherwise: the node signs
 *   only 36 ASCII characters of that shape, which no JWS signing input or TLS transcript can be); `keyId` must be the
 *   kid of this node's key (another member's kid: 400 on `keyId` naming the member that holds it; an unknown kid: 400
 *   on `keyId`). The answer: `signature` = the raw signature of the nonce's UTF-8 bytes, base64url without padding,
 *   exactly as a JWS of `algorithm` would carry it (ECDSA: r‖s), `kid`, and `caPool` = the controller's CA bundle (PEM)
 * The real controller at the reference commit declares both operations in its spec but registers no handler for them.
 * @see edge-api client.yml GET /enroll/jwks, POST /enroll/challenge, nonceChallenge, nonceSignature, jwks
 */
import { exportJWK } from 'jose'
import { ApiError } from '../../errors/api-error.ts'
import { UUID_TEXT } from '../../lib/ids.ts'
import { certificateDersOf } from '../../pki/pki-certs.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { NodeCertificate } from '../../actors/ca/ca-node-keys.ts'
import type { TokenKeys } from '../oidc/oidc-tokens.ts'

export interface EnrollKeysDeps {
  ca: CaActor
  /** The signing keys by kid: this node's and the cluster members' (oidc-keys.ts). */
  keys: TokenKeys
  /** The cluster's nodes (absent on a single node). */
  nodes?(): Iterable<NodeCertificate & { name: string }>
}

/** One key of the enrollment JWKS (edge-api `jwk`). */
export interface EnrollmentJwk {
  kty: string
  kid: string
  alg: string
  use: 'sig'
  x5c: string[]
  [member: string]: unknown
}

export interface NonceSignature {
  signature: string
  algorithm: string
  kid: string
  caPool: string
}

export interface EnrollKeys {
  jwks(): Promise<{ keys: EnrollmentJwk[] }>
  challenge(nonce: string, keyId: string): Promise<NonceSignature>
}

/** The standard base64 DER of each certificate in `pem`, in order (a JWK's `x5c`). */
function x5cOf(pem: string): string[] {
  return certificateDersOf(pem).map((der) => Buffer.from(der).toString('base64'))
}

export function createEnrollKeys(deps: EnrollKeysDeps): EnrollKeys {
  /** The server certificate whose SHA-1 is `kid`: this node's, or a member's. */
  const certificateOf = (kid: string): string | undefined => {
    const { server } = deps.ca.snapshot().pki
    if (server.view.fingerprintSha1 === kid) return server.certPem
    for (const node of deps.nodes?.() ?? []) if (node.fingerprint.toLowerCase() === kid) return node.certPem
    return undefined
  }
  return {
    async jwks() {
      const intermediate = deps.ca.snapshot().pki.intermediate.certPem
      const keys: EnrollmentJwk[] = []
      for (const [kid, verifier] of deps.keys()) {
        const cert = certificateOf(kid)
        const jwk = await exportJWK(verifier.publicKey)
        keys.push({ ...jwk, kty: jwk.kty ?? '', kid, alg: verifier.alg, use: 'sig', x5c: cert ? [...x5cOf(cert), ...x5cOf(intermediate)] : [] })
      }
      return { keys }
    },

    async challenge(nonce, keyId) {
      if (!UUID_TEXT.test(nonce)) throw ApiError.invalidField('nonce', 'nonce must be a UUID (8-4-4-4-12 hex digits)', nonce)
      const own = deps.ca.snapshot().jwtVerifiers.server.kid
      if (keyId !== own) {
        const holder = [...(deps.nodes?.() ?? [])].find((n) => n.fingerprint.toLowerCase() === keyId && deps.keys().has(keyId))
        const reason = holder
          ? `the key ${keyId} is held by the controller ${holder.name}: send the challenge to it`
          : `no enrollment signing key has the kid ${keyId} (GET /enroll/jwks lists them)`
        throw ApiError.invalidField('keyId', reason, keyId)
      }
      const signed = await deps.ca.ask({ type: 'ca.signNonce', nonce })
      return { signature: signed.signature, algorithm: signed.alg, kid: signed.kid, caPool: deps.ca.snapshot().pki.caBundlePem }
    },
  }
}
