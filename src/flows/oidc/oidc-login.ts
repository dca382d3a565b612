/**
 * The login half of OIDC sign-in after authorize: the primary login on an auth request, its second factors (TOTP,
 * TOTP enrolment, the ext-jwt second factor), its pending auth queries, and the callback that issues the code.
 * No rule of authentication lives here: every login goes through what the legacy `POST /authenticate` uses.
 * - the auth request must be live (else 401 UNAUTHORIZED, before any credential work)
 * - the primary login runs the registered AuthMethod (`password`, `cert`, `ext-jwt`) behind the AuthGate (throttle,
 *   window, metrics), then `admitPrimaryLogin` (disabled identity and a method the policy does not allow: 401
 *   INVALID_AUTH; TOTP owed when the identity has a verified TOTP or its policy requires one; the ext-jwt second
 *   factor completed by a bearer of the required signer on the same login POST, `ejs:<signerId>`)
 * - envInfo/sdkInfo given at login are recorded on the identity as the legacy login does
 * - a login of another identity on the same request starts its factors again; a repeated login of the same identity
 *   keeps the second factors already given
 * - TOTP at login: the identity's verified record with a TOTP or unused recovery code (auth-mfa.ts `acceptCode`:
 *   replay refusal and lockout counting included); every failure is the one 400 `INVALID TOTP CODE`: unknown
 *   request, no primary login, no verified record, a disabled identity, a code over 13 or an id over 40 characters,
 *   a wrong code
 * - TOTP enrolment at login: MfaFlows' enroll, delete (a verified record needs a code) and a session-less verify,
 *   which completes the login's TOTP
 * - done (a primary login and every required factor): the client is sent to the callback; else it gets the auth
 *   queries still owed
 * - callback: a code only for a fully authenticated request whose identity still exists and is not disabled
 * Failure story: the auth request is memory only; each step changes the identity actor at most once (lockout count,
 * MFA record, client info) and the request after that commit, so a crash loses the sign-in in progress, never a
 * code or a half-recorded factor.
 * @see ../shared/reference/oidc-and-ha.md §1 (login rows, "When login is complete", "Auth-query entries"), §2
 */
import { createHash } from 'node:crypto'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import { isDisabled, type Identity } from '../../domain/identity/identity-types.ts'
import { isMfaEnabled, type Mfa } from '../../domain/identity/identity-mfa.ts'
import type { ExternalJwtSignerReads } from '../../domain/ca/ca-jwt-signer-types.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthInput, AuthMethodRegistry, AuthPeer } from '../authenticate/auth-method.ts'
import { admitPrimaryLogin, recordClientInfo, type AuthQuery } from '../authenticate/auth-api-session.ts'
import { extJwtAuthQuery, type ExtJwtSecondary } from '../authenticate/auth-ext-jwt.ts'
import { loginAttemptOf, type AuthGate } from '../authenticate/auth-gate.ts'
import type { MfaFlows } from '../authenticate/auth-mfa.ts'
import { configTypeIdsOf, type ConfigTypeLookup } from './oidc-authorize.ts'
import { isFullyAuthenticated, owedAmr } from './oidc-auth-requests.ts'
import type { AuthRequest, AuthRequestStore } from './oidc-types.ts'

/** The TOTP auth query of an OIDC login (requests.go GetAuthQueries), with whether the identity has one enrolled. */
export const OIDC_TOTP_AUTH_QUERY = {
  typeId: 'TOTP',
  provider: 'ziti',
  format: 'numeric',
  httpMethod: 'POST',
  httpUrl: './oidc/login/totp',
  minLength: 6,
  maxLength: 8,
} as const

export type OidcAuthQuery = AuthQuery & { readonly isTotpEnrolled?: boolean }

/** Where a login step leaves the sign-in. */
export type LoginStep =
  | { done: true; request: AuthRequest }
  | { done: false; request: AuthRequest; authQueries: OidcAuthQuery[]; totpRequired: boolean }

/** A login POST as the route parsed it. */
export interface OidcLoginInput extends AuthInput {
  /** Config types named at login (names or ids), added to those of authorize. */
  readonly configTypes?: readonly string[]
  /** A CSR to be signed at the token endpoint into a `session_cert`. */
  readonly csrPem?: string
}

export type CallbackOutcome =
  | { kind: 'unknown' }
  | { kind: 'code'; redirectUri: string; code: string; state?: string }
  | { kind: 'refused'; redirectUri: string; error: 'interaction_required' | 'access_denied'; description: string; state?: string }

export interface OidcLoginDeps {
  requests: AuthRequestStore
  authMethods: AuthMethodRegistry
  gate: AuthGate
  identities: IdentityActor
  clock: Clock
  extJwtSecondary?: ExtJwtSecondary
  mfa: MfaFlows
  /** The external JWT signers (the EXT-JWT auth query shows the required one's details). */
  signers: () => Pick<ExternalJwtSignerReads, 'jwtSigners'>
  configTypes: () => ConfigTypeLookup
}

export interface OidcLogin {
  /** The primary login of `method` (`password`, `cert`, `ext-jwt`) on the auth request `id`. */
  login(method: string, id: string | undefined, input: OidcLoginInput, peer: AuthPeer): Promise<LoginStep>
  /** What the request still owes; undefined for an unknown request. */
  authQueries(id: string | undefined): LoginStep | undefined
  /** A TOTP or recovery code; 400 INVALID TOTP CODE for every failure. */
  totp(id: string | undefined, code: string | undefined): Promise<LoginStep>
  /** Starts a TOTP enrolment of the request's identity: the new record and its provisioning URL. */
  startTotpEnrollment(id: string | undefined): Promise<{ mfa: Mfa; provisioningUrl: string }>
  /** Removes the identity's TOTP record (a verified one with a code). */
  deleteTotpEnrollment(id: string | undefined, code: string | undefined): Promise<void>
  /** Verifies the Started enrolment with a TOTP code; that completes the login's TOTP. */
  verifyTotpEnrollment(id: string | undefined, code: string | undefined): Promise<LoginStep>
  callback(id: string | undefined): CallbackOutcome
}

const MAX_TOTP_CODE = 13
const MAX_REQUEST_ID = 40

/** The refusal of every failed TOTP at login (login.go checkTotp). */
function invalidTotp(): ApiError {
  return new ApiError('INVALID TOTP CODE')
}

/** The change context of a login step: authored by the identity signing in. */
function changeBy(identityId: string): ChangeContext {
  return { author: identityId, source: 'rest' }
}

export function createOidcLogin(deps: OidcLoginDeps): OidcLogin {
  const now = () => deps.clock.now()
  const live = (id: string | undefined) => (id ? deps.requests.get(id, now()) : undefined)

  /** The request with a primary login and its identity, still there and enabled; else ApiError 401 UNAUTHORIZED. */
  const signedIn = (id: string | undefined): { request: AuthRequest; identity: Identity } => {
    const request = live(id)
    const identity = request?.primary ? deps.identities.snapshot().identity(request.primary.identityId) : undefined
    if (!request || !identity || isDisabled(identity, now())) throw ApiError.unauthorized()
    return { request, identity }
  }

  const queriesOf = (request: AuthRequest): OidcAuthQuery[] => {
    const out: OidcAuthQuery[] = []
    for (const owed of owedAmr(request)) {
      if (owed === 'totp') {
        const enrolled = isMfaEnabled(deps.identities.snapshot().mfaOf(request.primary!.identityId))
        out.push({ ...OIDC_TOTP_AUTH_QUERY, isTotpEnrolled: enrolled })
      } else if (owed.startsWith('ejs:')) {
        const signerId = owed.slice('ejs:'.length)
        out.push(extJwtAuthQuery(signerId, deps.signers().jwtSigners.get(signerId)))
      }
    }
    return out
  }

  const stepOf = (request: AuthRequest): LoginStep => {
    if (isFullyAuthenticated(request)) return { done: true, request }
    return { done: false, request, authQueries: queriesOf(request), totpRequired: owedAmr(request).includes('totp') }
  }

  return {
    async login(methodName, id, input, peer) {
      if (!live(id)) throw ApiError.unauthorized()
      const method = deps.authMethods.resolve(methodName)
      const { primary, admitted } = await deps.gate.run(method.method, loginAttemptOf(method.kind, input, peer), async () => {
        const primary = await method.authenticate(input, peer)
        return { primary, admitted: await admitPrimaryLogin(deps, method, primary, input.header('authorization')) }
      })
      const { identity } = admitted
      await recordClientInfo(deps, identity, input, changeBy(identity.id))
      // read again after the awaits: the request may have expired meanwhile
      const request = live(id)
      if (!request) throw ApiError.unauthorized()
      if (request.primary && request.primary.identityId !== identity.id) request.amr.clear()
      const leaf = peer.certChainDer[0]
      request.primary = {
        identityId: identity.id,
        authenticatorId: primary.authenticator.id,
        kind: method.kind,
        authTime: now(),
        isCertExtendable: primary.isCertExtendable ?? false,
        certFingerprint: method.kind === 'cert' && leaf ? createHash('sha1').update(leaf).digest('hex') : undefined,
        remoteAddress: peer.remoteAddress,
        sdkInfo: input.sdkInfo,
        envInfo: input.envInfo,
        csrPem: input.csrPem,
      }
      request.amr.add(method.method)
      const signer = admitted.requiredExtJwtSigner
      if (signer !== null && admitted.extJwtOwed === null) request.amr.add(`ejs:${signer}`)
      request.requiredAmr = [...(admitted.totpRequired ? ['totp'] : []), ...(signer !== null ? [`ejs:${signer}`] : [])]
      if (input.configTypes?.length) {
        request.configTypeIds = [...new Set([...request.configTypeIds, ...configTypeIdsOf(input.configTypes, deps.configTypes())])]
      }
      return stepOf(request)
    },

    authQueries(id) {
      const request = live(id)
      return request && stepOf(request)
    },

    async totp(rawId, rawCode) {
      const id = rawId?.trim() ?? ''
      const code = rawCode?.trim() ?? ''
      if (id === '' || code === '' || id.length > MAX_REQUEST_ID || code.length > MAX_TOTP_CODE) throw invalidTotp()
      let signed: { request: AuthRequest; identity: Identity }
      try {
        signed = signedIn(id)
        await deps.mfa.acceptCode(signed.identity, code, changeBy(signed.identity.id))
      } catch (e) {
        if (e instanceof ApiError) throw invalidTotp()
        throw e
      }
      signed.request.amr.add('totp')
      return stepOf(signed.request)
    },

    async startTotpEnrollment(id) {
      const { identity } = signedIn(id)
      await deps.mfa.enroll(identity, changeBy(identity.id))
      return { mfa: deps.mfa.recordOf(identity), provisioningUrl: deps.mfa.provisioningUrlOf(identity) }
    },

    async deleteTotpEnrollment(id, code) {
      const { identity } = signedIn(id)
      await deps.mfa.remove(identity, code, changeBy(identity.id))
    },

    async verifyTotpEnrollment(id, code) {
      const { request, identity } = signedIn(id)
      await deps.mfa.verifyEnrollment(identity, code, changeBy(identity.id))
      request.amr.add('totp')
      return stepOf(request)
    },

    callback(id) {
      const request = live(id)
      if (!request) return { kind: 'unknown' }
      const { redirectUri, state } = request
      if (!isFullyAuthenticated(request)) {
        return { kind: 'refused', redirectUri, state, error: 'interaction_required', description: 'The login is not complete.' }
      }
      const identity = deps.identities.snapshot().identity(request.primary.identityId)
      if (!identity || isDisabled(identity, now())) {
        return { kind: 'refused', redirectUri, state, error: 'access_denied', description: 'The identity cannot sign in.' }
      }
      return { kind: 'code', redirectUri, state, code: deps.requests.issueCode(request) }
    },
  }
}
