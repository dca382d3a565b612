/**
 * Both APIs: the caller's identity and its own authenticators (changes need the current password; certificate
 * extension: flows/authenticate/auth-cert-extend.ts).
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { Authenticator, Identity } from '../../../domain/identity/identity-types.ts'
import { isMfaEnabled } from '../../../domain/identity/identity-mfa.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import { IdentityDetail } from '../../../../schemas/identity.ts'
import {
  AuthenticatorDetail,
  AuthenticatorPatchWithCurrent,
  AuthenticatorUpdateWithCurrent,
  IdentityExtendCerts,
  IdentityExtendRequest,
  IdentityExtendVerifyRequest,
} from '../../../../schemas/authenticator.ts'
import type { CertExtension } from '../../../flows/authenticate/auth-cert-extend.ts'
import { envelopeBytes, jsonBytes, ok, okEmpty } from '../../http-envelope.ts'
import { BoundedMap } from '../../../lib/bounded-map.ts'
import { peerOf } from '../../peer-cert.ts'
import { changeOf } from '../route-change.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { toIdentityDetail } from '../../mappers/identity-mapper.ts'
import { AUTHENTICATOR_SYMBOLS, toAuthenticatorDetail, toAuthenticatorRow } from '../../mappers/authenticator-mapper.ts'
import { updbChangeRoutes } from './updb-change-routes.ts'

/** Callers whose rendered identity is kept (a few KiB each). */
const RENDERED_IDENTITIES = 1000

export function currentIdentityRoutes(deps: {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  certExtension: CertExtension
}): RouteDef[] {
  const own = (ctx: RouteCtx<unknown, unknown>, id: string): Authenticator => {
    const a = deps.identities.snapshot().authenticators.get(id)
    if (!a || a.identityId !== ctx.auth.identity.id) throw ApiError.notFound()
    return a
  }
  // the caller's identity as last rendered, by identity id: everything it shows is the identity actor's state (and
  // the clock, for a lockout), so it is current while the actor's generation has not moved
  const rendered = new BoundedMap<string, { generation: number; identity: Identity; bytes: Uint8Array }>(RENDERED_IDENTITIES)
  return [
    route({
      method: 'GET', path: '/current-identity', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'The caller\'s identity', response: IdentityDetail,
      handle: (ctx) => {
        const i = ctx.auth.identity
        const generation = deps.identities.generation
        const kept = rendered.get(i.id)
        if (kept && kept.generation === generation && kept.identity === i) return jsonBytes(200, kept.bytes)
        const bytes = envelopeBytes(
          toIdentityDetail(i, {
            authenticators: deps.identities.snapshot().authenticatorsOf(i.id),
            enrollments: deps.identities.snapshot().enrollmentsOf(i.id),
            hasApiSession: true,
            isMfaEnabled: isMfaEnabled(deps.identities.snapshot().mfaOf(i.id)),
            now: deps.clock.now(),
            authPolicyName: (id) => deps.identities.snapshot().authPolicy(id)?.name,
          }),
        )
        // `disabled` is read against the clock while a lockout runs: such an identity is rendered each time
        if (i.disabledUntil === null) rendered.set(i.id, { generation, identity: i, bytes })
        return jsonBytes(200, bytes)
      },
    }),
    route({
      method: 'GET', path: '/current-identity/authenticators', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'The caller\'s authenticators', query: ListQuery, response: AuthenticatorDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: AUTHENTICATOR_SYMBOLS,
          candidates: () => [...deps.identities.snapshot().authenticatorsOf(ctx.auth.identity.id)],
          toRow: toAuthenticatorRow,
          toView: (a) => toAuthenticatorDetail(a, ctx.auth.identity),
        }),
    }),
    route({
      method: 'GET', path: '/current-identity/authenticators/:id', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'One of the caller\'s authenticators', response: AuthenticatorDetail,
      handle: (ctx) => ok(toAuthenticatorDetail(own(ctx, ctx.params.id), ctx.auth.identity)),
    }),
    route({
      method: 'POST', path: '/current-identity/authenticators/:id/extend', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'A new certificate for one of the caller\'s cert authenticators, over mTLS with its current certificate (verify it with extend-verify)',
      body: IdentityExtendRequest, response: IdentityExtendCerts,
      handle: async (ctx) =>
        ok(await deps.certExtension.extend(ctx.auth.identity.id, ctx.params.id, ctx.body.clientCertCsr, peerOf(ctx.request), changeOf(ctx))),
    }),
    route({
      method: 'POST', path: '/current-identity/authenticators/:id/extend-verify', apis: ['client', 'management'], access: 'session', tag: 'Current Identity',
      summary: 'Proves receipt of the extended certificate: from now on only it logs in',
      body: IdentityExtendVerifyRequest,
      handle: async (ctx) => {
        await deps.certExtension.verify(ctx.auth.identity.id, ctx.params.id, ctx.body.clientCert, changeOf(ctx))
        return okEmpty()
      },
    }),
    ...updbChangeRoutes({
      identities: deps.identities,
      path: '/current-identity/authenticators/:id',
      apis: ['client', 'management'],
      access: 'session',
      tag: 'Current Identity',
      subject: 'one of the caller\'s authenticators (the current password is required)',
      bodies: { put: AuthenticatorUpdateWithCurrent, patch: AuthenticatorPatchWithCurrent },
      find: (ctx) => own(ctx, ctx.params.id),
    }),
  ]
}
