/**
 * Signing in and enrolling: service-session tokens, the authentication methods (password, certificate, external JWT),
 * the enrollment methods and the JWTs they hand out, certificate extension and API-session certificates, OIDC tokens
 * and the bearer check, the session resolver every route uses, the authentication gate, and MFA.
 */
import type { Clock } from '../lib/clock.ts'
import { DEFAULTS } from '../config/config.ts'
import { isAdminIdentity, type Identity } from '../domain/identity/identity-types.ts'
import { createSessionTokens } from '../flows/sessions/session-token.ts'
import { createAuthMethodRegistry } from '../flows/authenticate/auth-method.ts'
import { createUpdbAuthMethod } from '../flows/authenticate/auth-updb.ts'
import { createCertAuthMethod, trustAnchorsOf } from '../flows/authenticate/auth-cert.ts'
import { createExtJwtAuthMethod, createExtJwtSecondary } from '../flows/authenticate/auth-ext-jwt.ts'
import { createSignerKeys } from '../flows/authenticate/auth-ext-jwt-keys.ts'
import { authPolicyOf } from '../flows/authenticate/auth-api-session.ts'
import { createCertExtension } from '../flows/authenticate/auth-cert-extend.ts'
import { createSessionCertificates, sessionCertificateHolder } from '../flows/sessions/session-certificate.ts'
import { createEnrollmentMethodRegistry } from '../flows/enroll/enroll-method.ts'
import { createOttEnrollMethod } from '../flows/enroll/enroll-ott.ts'
import { createUpdbEnrollMethod } from '../flows/enroll/enroll-updb.ts'
import { createErottEnrollMethod } from '../flows/enroll/enroll-erott.ts'
import { createOttCaEnrollMethod } from '../flows/enroll/enroll-ottca.ts'
import { createCaAutoEnrollMethod } from '../flows/enroll/enroll-ca.ts'
import { createTokenEnrollMethod } from '../flows/enroll/enroll-token.ts'
import { oidcSettingsOf, type OidcSettings } from '../flows/oidc/oidc-types.ts'
import { withControllerSettings } from '../flows/oidc/oidc-controller-settings.ts'
import { createOidcTokens, type TokenKeys } from '../flows/oidc/oidc-tokens.ts'
import { createTokenKeys } from '../flows/oidc/oidc-keys.ts'
import { createBearerCheck } from '../flows/oidc/oidc-bearer.ts'
import { createAuthGate, type AuthGate } from '../flows/authenticate/auth-gate.ts'
import { AUTH_WINDOW_DEFAULTS } from '../flows/authenticate/auth-rate-window.ts'
import { LOGIN_THROTTLE_DEFAULTS } from '../flows/authenticate/auth-throttle.ts'
import { createMfaFlows } from '../flows/authenticate/auth-mfa.ts'
import type { ControllersEvent } from '../actors/controllers/controllers-actor.ts'
import type { EventBus } from '../actors/runtime/event-bus.ts'
import { createSessionResolver } from '../http/http-auth.ts'
import type { Actors } from './boot-actors.ts'
import type { Addresses, ServerOptions } from './boot-options.ts'

export interface AuthParts {
  oidcSettings: OidcSettings
  tokens: ReturnType<typeof createSessionTokens>
  /** The controller's own CAs: what its client certificates chain to. */
  ownCas: string[]
  /** The SPIFFE trust domain: the root CA's fingerprint, stable for the life of the PKI. */
  trustDomain: string
  extJwtSecondary: ReturnType<typeof createExtJwtSecondary>
  signerKeys: ReturnType<typeof createSignerKeys>
  authMethods: ReturnType<typeof createAuthMethodRegistry>
  routerEnrollments: ReturnType<typeof createErottEnrollMethod>
  enrollments: ReturnType<typeof createEnrollmentMethodRegistry>
  certExtension: ReturnType<typeof createCertExtension>
  sessionCertificates: ReturnType<typeof createSessionCertificates>
  tokenKeys: TokenKeys
  oidcTokens: ReturnType<typeof createOidcTokens>
  resolver: ReturnType<typeof createSessionResolver>
  authGate: AuthGate
  mfaFlows: ReturnType<typeof createMfaFlows>
}

export function bootAuth(
  opts: ServerOptions,
  actors: Actors,
  ctx: {
    bus: EventBus
    clock: Clock
    log: (line: string) => void
    timeoutMs: number
    addresses: Addresses
    loginOutcome: Parameters<typeof createAuthGate>[0]['outcome']
  },
): AuthParts {
  const { identities, sessions, ca, graph, controllers, clusterNode, pki } = actors
  const { bus, clock, log, timeoutMs, addresses } = ctx
  // the redirect lists are this node's effective controller settings, read at each request
  const oidcSettings = withControllerSettings(oidcSettingsOf(opts.oidc), () => controllers.snapshot().effectiveSettings(opts.cluster?.nodeName))
  const baseUrl = () => addresses.baseUrl
  // the controller's own CAs: what its client certificates chain to; trust anchors of certificate login and of an
  // admin's cert authenticators
  const ownCas = [pki.intermediate.certPem, pki.root.certPem]
  // the SPIFFE trust domain is stable for the life of the PKI: the root CA's fingerprint
  const trustDomain = pki.root.view.fingerprintSha1
  const extJwt = {
    identities,
    signers: () => ca.snapshot(),
    keys: createSignerKeys({ jwksCooldownMs: opts.jwksCooldownMs }),
    clock,
    policyOf: (identity: Identity) => authPolicyOf(identity, identities.snapshot()),
    log,
  }
  const extJwtSecondary = createExtJwtSecondary(extJwt)
  const authMethods = createAuthMethodRegistry([
    createUpdbAuthMethod({ identities, sessions }),
    createCertAuthMethod({
      identities,
      clock,
      trustAnchors: trustAnchorsOf(ownCas, () => ca.snapshot()),
      cas: () => ca.snapshot(),
      log,
      sessionCertificate: sessionCertificateHolder({ sessions, identities, clock, timeoutMs }),
    }),
    createExtJwtAuthMethod(extJwt),
  ])
  const enrollmentJwts = {
    ca,
    clock,
    advertisedUrl: baseUrl,
    // every node's control endpoint in a cluster (the controllers aggregate), else this node's
    ctrlEndpoints: () => {
      const nodes = clusterNode ? [...controllers.snapshot().byId.values()].flatMap((c) => (c.ctrlAddress ? [c.ctrlAddress] : [])) : []
      return nodes.length > 0 ? nodes : [addresses.ctrlEndpoint]
    },
    enrollmentDurationMs: opts.enrollmentDurationMs ?? DEFAULTS.enrollmentDurationMs,
  }
  const routerEnrollments = createErottEnrollMethod({ ...enrollmentJwts, graph, log })
  const enrollments = createEnrollmentMethodRegistry([
    createOttEnrollMethod({ ...enrollmentJwts, identities, trustDomain }),
    createUpdbEnrollMethod({ ...enrollmentJwts, identities }),
    routerEnrollments,
    createOttCaEnrollMethod({ ...enrollmentJwts, identities, cas: () => ca.snapshot(), log }),
    createCaAutoEnrollMethod({ identities, cas: () => ca.snapshot(), clock, log }),
    createTokenEnrollMethod({ identities, ca, signers: () => ca.snapshot(), keys: extJwt.keys, clock, trustDomain, advertisedUrl: baseUrl, log }),
  ])
  const certExtension = createCertExtension({ identities, ca, clock, ownCas, trustDomain })
  const sessionCertificates = createSessionCertificates({ sessions, ca, ownCas, trustDomain })
  // OIDC: tokens signed with the server certificate's key, checked against the signing certificates by kid: this
  // node's, and in a cluster every member's (replicated in the controllers aggregate)
  const tokenKeyring = createTokenKeys({
    own: () => ca.snapshot().jwtVerifiers.server,
    nodes: clusterNode ? () => controllers.snapshot().byId.values() : undefined,
    issuers: () => [ca.snapshot().pki.intermediate.certPem],
    now: () => clock.now(),
    log,
  })
  bus.subscribe<ControllersEvent>('controller.changed', () => tokenKeyring.invalidate())
  const tokenKeys: TokenKeys = tokenKeyring.keys
  // service session tokens: signed and checked with the same keys (the kid a router finds in its data model)
  const tokens = createSessionTokens(ca, baseUrl, tokenKeys)
  const oidcTokens = createOidcTokens(
    {
      ca,
      identity: (id) => identities.snapshot().identity(id),
      authenticator: (id) => identities.snapshot().authenticators.get(id),
      clock,
      settings: oidcSettings,
    },
    tokenKeys,
  )
  const bearer = oidcSettings.enabled
    ? createBearerCheck({
        tokens: oidcTokens,
        keys: tokenKeys,
        now: () => clock.now(),
        isRevoked: (c, now) => identities.snapshot().isTokenRevoked({ jti: c.jti, sub: c.identityId, iat: c.iat, apiSessionId: c.apiSessionId }, now),
      })
    : undefined
  bus.subscribe<ControllersEvent>('controller.removed', () => {
    tokenKeyring.invalidate()
    bearer?.forgetVerified()
  })
  const resolver = createSessionResolver({ identities, sessions, clock, timeoutMs, extJwtSecondary, bearer })
  const authGate = createAuthGate({
    window: { ...AUTH_WINDOW_DEFAULTS, ...opts.authWindow },
    throttle: { ...LOGIN_THROTTLE_DEFAULTS, ...opts.loginThrottle },
    monotonicNow: () => performance.now(),
    clockNow: () => clock.now(),
    isAdminUsername: (username) => {
      const a = identities.snapshot().updbByUsername(username)
      const identity = a ? identities.snapshot().identity(a.identityId) : undefined
      return identity !== undefined && isAdminIdentity(identity)
    },
    outcome: ctx.loginOutcome,
  })
  const mfaFlows = createMfaFlows({ identities, sessions, clock, issuer: opts.totpIssuer ?? DEFAULTS.totpIssuer })
  return {
    oidcSettings,
    tokens,
    ownCas,
    trustDomain,
    extJwtSecondary,
    signerKeys: extJwt.keys,
    authMethods,
    routerEnrollments,
    enrollments,
    certExtension,
    sessionCertificates,
    tokenKeys,
    oidcTokens,
    resolver,
    authGate,
    mfaFlows,
  }
}
