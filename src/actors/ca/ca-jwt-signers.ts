/**
 * The CA actor's handlers of external JWT signers: merge the request over the stored signer (or the defaults), read
 * the facts of a given `certPem` (exactly one certificate: 400 INVALID_CERT_PEM naming `certPem` otherwise), decide
 * with domain/ca checks, then apply synchronously (state and the `external-jwt-signers` sub-db). Verifiers key their
 * caches by the record, which every write replaces, so no event is needed. The policy a signer enrolls identities into
 * is the identity actor's: read through `authPolicyOf` (on a cluster node commands apply one at a time in log order,
 * so every node reads the same policies).
 */
import { decideJwtSigner, mergeJwtSignerFields, type AuthPolicyOf, type JwtSignerSettings } from '../../domain/ca/ca-jwt-signer-decide.ts'
import type { ExternalJwtSigner } from '../../domain/ca/ca-jwt-signer-types.ts'
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import { readCertificates, toCertificateView } from '../../pki/pki-certs.ts'
import type { Tx } from '../runtime/actor-runtime.ts'
import type { CaEvent, CaMsg } from './ca-messages.ts'
import type { CaState } from './ca-state.ts'

type Msg<T extends CaMsg['type']> = Extract<CaMsg, { type: T }>

export function createJwtSigner(state: CaState, msg: Msg<'jwtSigner.create'>, tx: Tx<CaEvent>, authPolicyOf?: AuthPolicyOf): { id: string } {
  const id = newShortId()
  const settings = decideJwtSigner(state, mergeJwtSignerFields(undefined, msg.input), undefined, authPolicyOf)
  put(state, { id, ...settings, ...certificateFacts(settings.certPem), createdAt: tx.now, updatedAt: tx.now }, tx)
  return { id }
}

export function updateJwtSigner(state: CaState, msg: Msg<'jwtSigner.update'>, tx: Tx<CaEvent>, authPolicyOf?: AuthPolicyOf): void {
  const prev = state.jwtSigners.get(msg.id)
  if (!prev) throw ApiError.notFound()
  const start: JwtSignerSettings | undefined = msg.replace ? undefined : prev
  const settings = decideJwtSigner(state, mergeJwtSignerFields(start, msg.input), prev.id, authPolicyOf)
  const facts = settings.certPem === prev.certPem ? prev : certificateFacts(settings.certPem)
  put(state, { ...prev, ...settings, ...pickFacts(facts), updatedAt: tx.now }, tx)
}

export function deleteJwtSigner(state: CaState, msg: Msg<'jwtSigner.delete'>, tx: Tx<CaEvent>): void {
  if (!state.removeJwtSigner(msg.id)) throw ApiError.notFound()
  tx.remove('external-jwt-signers', msg.id)
}

type CertificateFacts = Pick<ExternalJwtSigner, 'commonName' | 'fingerprint' | 'notBefore' | 'notAfter'>

function pickFacts(s: CertificateFacts): CertificateFacts {
  return { commonName: s.commonName, fingerprint: s.fingerprint, notBefore: s.notBefore, notAfter: s.notAfter }
}

/** The facts of a signer's certificate; empty ones for a JWKS signer. */
function certificateFacts(certPem: string | null): CertificateFacts {
  if (certPem === null) return { commonName: '', fingerprint: '', notBefore: null, notAfter: null }
  let view
  try {
    const certs = readCertificates(certPem)
    if (certs.length !== 1) throw new Error(`expected 1 certificate, found ${certs.length}`)
    view = toCertificateView(certs[0])
  } catch (e) {
    const reason = e instanceof ApiError && e.apiCause?.kind === 'api' ? e.apiCause.message : (e as Error).message
    throw new ApiError('INVALID_CERT_PEM', { cause: { kind: 'field', field: 'certPem', reason, value: certPem } })
  }
  return { commonName: view.subjectCn, fingerprint: view.fingerprintSha1, notBefore: view.notBefore, notAfter: view.notAfter }
}

function put(state: CaState, signer: ExternalJwtSigner, tx: Tx<CaEvent>): void {
  state.putJwtSigner(signer)
  tx.put('external-jwt-signers', signer.id, signer)
}
