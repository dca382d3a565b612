/**
 * Token enrollment (`token`): a client holding a JWT of an external JWT signer that allows it enrolls without any
 * prior record (`POST /enroll/token`, or the generic `POST /enroll?method=token`), with the JWT in
 * `Authorization: Bearer`. With a CSR it becomes an identity with a certificate; without one, an identity that logs
 * in by ext-jwt with such tokens.
 * - the token: at most 3 bearer tokens, in order; the first that verifies wins. Its signer is the one the header
 *   `ziti-token-issuer-id` names, else the one its `kid` names, else its `iss`; the signer must be enabled. Checked as
 *   an ext-jwt login checks it (auth-ext-jwt.ts `verifyWith`: signature, exp/nbf at the clock, iss, aud). No bearer,
 *   none that verifies, a missing or empty id claim (`claimsProperty`) or name claim (`enrollNameClaimsSelector`,
 *   default `/sub`), or an attribute claim that is not a string or an array of strings: 400
 *   INVALID_ENROLLMENT_TOKEN (the reason goes to the log, never the token)
 * - an identity whose externalId is the id claim exists already: 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED
 * - with a CSR (the JSON `clientCsr`, or the PEM body of the generic form) the signer must have
 *   `enrollToCertEnabled`, else `enrollToTokenEnabled`; the identity's auth policy (`enrollAuthPolicyId`, default
 *   `default`) must exist and allow primary certificate login (CSR) or primary ext-jwt login with this signer (no CSR);
 *   and an identity without a certificate must be one the signer can log in: only a signer with `useExternalId` finds
 *   an identity by its externalId (the real controller enrolls it anyway, and it can never log in). Each: 409
 *   INVALID_ENROLLMENT_NOT_ALLOWED
 * - the CSR: enroll-client-csr.ts (400 COULD_NOT_PROCESS_CSR); the certificate is issued as an ott one is (CN = the new
 *   identity's id, SPIFFE URI SAN, clientAuth, one year) and its authenticator is network-issued
 * - the identity: type Default, not admin, named by the name claim, role attributes from `enrollAttributeClaimsSelector`
 *   (none without one), the signer's auth policy, externalId = the id claim; a name taken is 400 COULD_NOT_VALIDATE on
 *   `name`, a role attribute an admin could not set is 400 on `roleAttributes` (the real controller answers 500)
 * - answer: with a CSR `{cert: <leaf + intermediate>, ca: <the controller's CA bundle>, controllers}`; without,
 *   `{controllers}`
 *
 * Failure story (CA then identity actor): the CA issues the certificate, then ONE identity-actor message
 * (`identity.enrollByToken`) creates the identity and its authenticator in one transaction. Two racing enrollments of
 * one token may both get a certificate; the identity actor lets one create the identity and refuses the other
 * (409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED). A certificate issued for an enrollment that then fails belongs to no
 * authenticator, so it logs nobody in.
 * @see edge-api client.yml POST /enroll/token; controller/model/enrollment_mod_token.go, token_provider_cache.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import { claimString, claimStrings, DEFAULT_ENROLL_NAME_SELECTOR } from '../../domain/ca/ca-jwt-claims.ts'
import type { ExternalJwtSigner, ExternalJwtSignerReads } from '../../domain/ca/ca-jwt-signer-types.ts'
import { allowsSigner } from '../../domain/identity/identity-auth-policy.ts'
import { DEFAULT_AUTH_POLICY } from '../../domain/identity/identity-types.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { bearerTokens, signerOfToken, verifyWith } from '../authenticate/auth-ext-jwt.ts'
import type { SignerKeys } from '../authenticate/auth-ext-jwt-keys.ts'
import { parseIdentityCsr } from './enroll-client-csr.ts'
import { IDENTITY_CERT_TTL_MS } from './enroll-ott.ts'
import type { EnrollInput, EnrollmentMethod, EnrollResult } from './enroll-method.ts'

/** The header that names the signer of the bearer tokens (else each token's kid or iss does). */
export const TOKEN_ISSUER_HEADER = 'ziti-token-issuer-id'

export interface TokenEnrollDeps {
  identities: IdentityActor
  ca: CaActor
  signers: () => ExternalJwtSignerReads
  /** The signers' verification keys (shared with ext-jwt login: one JWKS cache). */
  keys: SignerKeys
  clock: Clock
  /** The SPIFFE trust domain of issued client certificates. */
  trustDomain: string
  advertisedUrl: () => string
  log: (line: string) => void
}

/** The CSR of a token enrollment: the JSON `clientCsr`, or the PEM text of the generic form; "" for none. */
function csrOf(body: unknown): string {
  if (typeof body === 'string') return body.trim()
  const csr = body !== null && typeof body === 'object' ? (body as { clientCsr?: unknown }).clientCsr : undefined
  return typeof csr === 'string' ? csr.trim() : ''
}

/** What a verified token says of the identity to create. */
interface TokenFacts {
  signer: ExternalJwtSigner
  externalId: string
  name: string
  roleAttributes: string[]
}

export function createTokenEnrollMethod(deps: TokenEnrollDeps) {
  const refuse = (why: string): ApiError => {
    deps.log(`token enrollment refused: ${why}`)
    return new ApiError('INVALID_ENROLLMENT_TOKEN')
  }
  const notAllowed = (why: string): ApiError => {
    deps.log(`token enrollment refused: ${why}`)
    return new ApiError('INVALID_ENROLLMENT_NOT_ALLOWED')
  }

  /** The first of the request's tokens that verifies, with what it says; else 400 INVALID_ENROLLMENT_TOKEN. */
  const verifiedToken = async (input: EnrollInput): Promise<TokenFacts> => {
    const tokens = bearerTokens(input.header?.('authorization') ?? null)
    if (tokens.length === 0) throw refuse('no bearer token')
    const issuerId = input.header?.(TOKEN_ISSUER_HEADER)
    const reads = deps.signers()
    const reasons: string[] = []
    for (const token of tokens) {
      const signer = issuerId ? reads.jwtSigners.get(issuerId) : signerOfToken(reads, token)
      if (!signer) {
        reasons.push(issuerId ? `no signer has the id given in ${TOKEN_ISSUER_HEADER}` : 'no signer matches its kid or iss')
        continue
      }
      if (!signer.enabled) {
        reasons.push(`signer ${signer.id} is disabled`)
        continue
      }
      const verified = await verifyWith(deps, signer, token)
      if (!verified.ok) {
        reasons.push(`signer ${signer.id}: ${verified.reason}`)
        continue
      }
      const claims = verified.claims as Record<string, unknown>
      const externalId = claimString(claims, signer.claimsProperty)
      if (externalId === undefined || externalId.trim() === '') {
        throw refuse(`signer ${signer.id}: the id claim ${signer.claimsProperty} is missing, empty or not a string`)
      }
      const nameSelector = signer.enrollNameClaimsSelector || DEFAULT_ENROLL_NAME_SELECTOR
      const name = claimString(claims, nameSelector)
      if (name === undefined || name.trim() === '') throw refuse(`signer ${signer.id}: the name claim ${nameSelector} is missing, empty or not a string`)
      const attributes = claimStrings(claims, signer.enrollAttributeClaimsSelector)
      if (!attributes.ok) throw refuse(`signer ${signer.id}: ${attributes.reason}`)
      return { signer, externalId, name, roleAttributes: attributes.values }
    }
    throw refuse(reasons.join('; '))
  }

  return {
    method: 'token',
    async redeem(input: EnrollInput, _peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const facts = await verifiedToken(input)
      const { signer } = facts
      const reads = deps.identities.snapshot()
      if (reads.identityByExternalId(facts.externalId)) throw new ApiError('ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
      const csrPem = csrOf(input.body)
      const withCert = csrPem !== ''
      if (withCert && !signer.enrollToCertEnabled) throw notAllowed(`signer ${signer.id} does not allow enrollment to a certificate`)
      if (!withCert && !signer.enrollToTokenEnabled) throw notAllowed(`signer ${signer.id} does not allow enrollment to token login`)
      const authPolicyId = signer.enrollAuthPolicyId || DEFAULT_AUTH_POLICY.id
      const policy = reads.authPolicy(authPolicyId)
      if (!policy) throw notAllowed(`signer ${signer.id} names the auth policy ${authPolicyId}, which does not exist`)
      if (withCert && !policy.primary.cert.allowed) throw notAllowed(`the auth policy ${authPolicyId} does not allow certificate login`)
      if (!withCert) {
        if (!allowsSigner(policy.primary.extJwt, signer.id)) throw notAllowed(`the auth policy ${authPolicyId} does not allow ext-jwt login with signer ${signer.id}`)
        if (!signer.useExternalId) throw notAllowed(`signer ${signer.id} does not map its claim to externalId (useExternalId), so the identity could never log in`)
      }
      const id = newShortId()
      let cert: { certPem: string; fingerprint: string; chainPem: string } | null = null
      if (withCert) {
        const { csr, spiffeId } = await parseIdentityCsr(csrPem, deps.trustDomain, id)
        cert = await deps.ca.ask({
          type: 'ca.issueCertificate',
          request: { purpose: 'client', csr, commonName: id, spiffeId, ttlMs: IDENTITY_CERT_TTL_MS },
        })
      }
      await deps.identities.ask({
        type: 'identity.enrollByToken',
        id,
        name: facts.name,
        roleAttributes: facts.roleAttributes,
        authPolicyId,
        externalId: facts.externalId,
        cert: cert && { certPem: cert.certPem, fingerprint: cert.fingerprint },
        change,
      })
      const controllers = [deps.advertisedUrl()]
      return cert ? { cert: cert.chainPem, ca: deps.ca.snapshot().pki.caBundlePem, controllers } : { controllers }
    },
  } as const satisfies EnrollmentMethod
}
