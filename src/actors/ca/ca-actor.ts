/**
 * The CA actor: the only holder of the controller's private keys (intermediate CA, TLS server key). It issues every
 * certificate and signs every JWT; the keys live in this file's closure, never in the state `snapshot()` shows.
 * The PKI lives in files under `<data>/pki`, loaded (or created) once at start. It is also the sole writer of the
 * `cas` sub-db, the third-party CAs (handlers in ca-third-party.ts), and of `external-jwt-signers` (ca-jwt-signers.ts),
 * both loaded at start.
 */
import { SignJWT } from 'jose'
import { assertNever } from '../../lib/assert-never.ts'
import { decodePem } from '../../lib/pem.ts'
import { decideSubject, decideValidity } from '../../domain/ca/ca-decide.ts'
import { BACKDATE_MS, ensureControllerPki, type ControllerPkiOptions } from '../../pki/pki-bootstrap.ts'
import { issueClientCertificate, issueServerCertificate, readLeafFacts, type CaSigner } from '../../pki/pki-certs.ts'
import { importPrivateKeyPem, publicKeyFromPrivateKey, signatureParams } from '../../pki/pki-keys.ts'
import { Actor, type ActorBehavior, type ActorSystemDeps } from '../runtime/actor-runtime.ts'
import type { ThirdPartyCa } from '../../domain/ca/ca-types.ts'
import type { Store } from '../../store/store-env.ts'
import type { CaEvent, CaMsg, CaReplies, CertificateRequest, IssuedCertificate, JwtKeyName } from './ca-messages.ts'
import { CaState, type CaReads, type JwtVerifier } from './ca-state.ts'
import { createCa, deleteCa, updateCa, verifyCa } from './ca-third-party.ts'
import { createJwtSigner, deleteJwtSigner, updateJwtSigner } from './ca-jwt-signers.ts'
import type { ExternalJwtSigner } from '../../domain/ca/ca-jwt-signer-types.ts'
import type { AuthPolicyOf } from '../../domain/ca/ca-jwt-signer-decide.ts'

export type CaActor = Actor<CaState, CaMsg, CaReplies, CaEvent, CaReads>

/** The private half of the CA: what the behavior signs with. */
interface CaKeys {
  signer: CaSigner
  jwt: Record<JwtKeyName, { privateKey: CryptoKey; alg: string; kid?: string }>
  tls: { key: string; cert: string }
}

/** The JOSE algorithm for a WebCrypto private or public key. */
export function jwtAlgorithmOf(key: CryptoKey): string {
  const alg = key.algorithm as { name: string; namedCurve?: string }
  if (alg.name === 'ECDSA') return alg.namedCurve === 'P-384' ? 'ES384' : alg.namedCurve === 'P-521' ? 'ES512' : 'ES256'
  if (alg.name === 'Ed25519') return 'EdDSA'
  return 'RS256'
}

/** Signing and the listener's credentials use this node's keys and store nothing: never a command of the log. */
const NODE_LOCAL: ReadonlySet<CaMsg['type']> = new Set(['ca.signJwt', 'ca.signNonce', 'ca.issueCertificate', 'ca.tlsCredentials'])

/** What the CA actor reads of other aggregates when it decides (each a synchronous snapshot read). */
export interface CaLinks {
  /** The authentication policy a signer enrolls identities into (the identity actor's). */
  authPolicyOf?: AuthPolicyOf
}

function behavior(keys: CaKeys, links: CaLinks): ActorBehavior<CaState, CaMsg, CaReplies, CaEvent> {
  return {
    owner: 'ca',
    nodeLocal: NODE_LOCAL,
    handle(state, msg, tx) {
      switch (msg.type) {
        case 'ca.signJwt': {
          const k = keys.jwt[msg.key]
          return new SignJWT(msg.claims).setProtectedHeader({ alg: k.alg, typ: 'JWT', ...(k.kid ? { kid: k.kid } : {}) }).sign(k.privateKey)
        }
        case 'ca.signNonce': {
          const k = keys.jwt.server
          return crypto.subtle
            .sign(signatureParams(k.privateKey), k.privateKey, new TextEncoder().encode(msg.nonce))
            .then((sig) => ({ signature: Buffer.from(sig).toString('base64url'), alg: k.alg, kid: k.kid ?? '' }))
        }
        case 'ca.issueCertificate':
          return issue(keys.signer, state, msg.request, tx.now)
        case 'ca.tlsCredentials':
          return { ...keys.tls }
        case 'ca.create':
          return createCa(state, msg, tx)
        case 'ca.update':
          return updateCa(state, msg, tx)
        case 'ca.verify':
          return verifyCa(state, msg, tx)
        case 'ca.delete':
          return deleteCa(state, msg, tx)
        case 'jwtSigner.create':
          return createJwtSigner(state, msg, tx, links.authPolicyOf)
        case 'jwtSigner.update':
          return updateJwtSigner(state, msg, tx, links.authPolicyOf)
        case 'jwtSigner.delete':
          return deleteJwtSigner(state, msg, tx)
        default:
          return assertNever(msg, 'CA message')
      }
    },
  }
}

async function issue(signer: CaSigner, state: CaState, r: CertificateRequest, now: number): Promise<IssuedCertificate> {
  const sans = { dnsNames: r.dnsNames ?? [], ipAddresses: r.ipAddresses ?? [] }
  decideSubject(r.purpose, r.commonName, sans)
  const validity = decideValidity(now, r.ttlMs, BACKDATE_MS, state.pki.intermediate.view.notAfter)
  const base = { issuer: signer, publicKey: r.csr.publicKeySpki, commonName: r.commonName, ...validity }
  const certPem =
    r.purpose === 'server'
      ? await issueServerCertificate({ ...base, ...sans })
      : await issueClientCertificate({ ...base, spiffeId: r.spiffeId })
  // read back by OpenSSL: asn1js would cost more than the signing
  const facts = readLeafFacts(decodePem(certPem)[0].der)
  return { certPem, chainPem: certPem + state.pki.intermediate.certPem, fingerprint: facts.fingerprintSha1, notAfter: facts.notAfter }
}

/**
 * Loads (or, on a new data directory, creates) the controller PKI in `dir`, loads the third-party CAs from the store,
 * and starts the CA on them.
 */
export async function startCaActor(dir: string, opts: ControllerPkiOptions, deps: ActorSystemDeps, links: CaLinks = {}): Promise<CaActor> {
  const pki = await ensureControllerPki(dir, opts)
  const serverKey = await importPrivateKeyPem(pki.server.keyPem)
  const jwt: CaKeys['jwt'] = {
    'signing-ca': { privateKey: pki.signer.privateKey, alg: jwtAlgorithmOf(pki.signer.privateKey) },
    server: { privateKey: serverKey, alg: jwtAlgorithmOf(serverKey), kid: pki.server.view.fingerprintSha1 },
  }
  const verifiers = {} as Record<JwtKeyName, JwtVerifier>
  for (const [name, k] of Object.entries(jwt) as [JwtKeyName, CaKeys['jwt'][JwtKeyName]][]) {
    verifiers[name] = { publicKey: await publicKeyFromPrivateKey(k.privateKey), alg: k.alg, ...(k.kid ? { kid: k.kid } : {}) }
  }
  const state = new CaState(
    {
      dir: pki.dir,
      root: { certPem: pki.root.certPem, view: pki.root.view },
      intermediate: { certPem: pki.intermediate.certPem, view: pki.intermediate.view },
      server: { certPem: pki.server.certPem, view: pki.server.view },
      caBundlePem: pki.caBundlePem,
      created: pki.created,
      sansMissing: pki.sansMissing,
    },
    verifiers,
  )
  loadThirdPartyCas(state, deps.store)
  for (const { value } of deps.store.db('external-jwt-signers').getRange()) state.putJwtSigner(value as ExternalJwtSigner)
  return new Actor('ca', state, behavior({ signer: pki.signer, jwt, tls: pki.tls }, links), deps)
}

function loadThirdPartyCas(state: CaState, store: Store): void {
  for (const { value } of store.db('cas').getRange()) state.putCa(value as ThirdPartyCa)
}
