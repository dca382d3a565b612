/**
 * Management API: authentication policies (`/auth-policies`). Admin only. CRUD through the shared plumbing; the
 * identity actor owns the records and decides (domain/identity/identity-auth-policy.ts).
 */
import type { Static } from '@sinclair/typebox'
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { AuthPolicy, AuthPolicyInput } from '../../../domain/identity/identity-auth-policy.ts'
import { AuthPolicyCreate, AuthPolicyDetail, AuthPolicyPatch, AuthPolicyUpdate } from '../../../../schemas/auth-policy.ts'
import { AUTH_POLICY_SYMBOLS, toAuthPolicyDetail, toAuthPolicyRow } from '../../mappers/auth-policy-mapper.ts'
import { changeOf } from '../route-change.ts'
import { crudRoutes, tableListing, type Listing } from './crud-routes.ts'
import type { RouteDef } from '../../http-route.ts'

const ROUTES = { list: '/auth-policies', item: '/auth-policies/:id' } as const

type AuthPolicyBody = Static<typeof AuthPolicyPatch> | Static<typeof AuthPolicyCreate>

/** The members of `o` that are neither absent nor null (a null scalar on a patch leaves the member as it is). */
function given<T extends object>(o: T | null | undefined): { [K in keyof T]?: Exclude<T[K], null> } {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o ?? {})) if (v !== null && v !== undefined) out[k] = v
  return out as { [K in keyof T]?: Exclude<T[K], null> }
}

/**
 * Wire body → actor input. On a put or create the signer references keep a null: it clears them (every signer allowed,
 * none required). On a patch a null leaves them, as every other member and as the real controller (the CLI sends
 * `allowedSigners: null` with every `update auth-policy`); `[]` and `""` clear them there.
 */
function toInput(b: AuthPolicyBody, patch = false): AuthPolicyInput {
  const extJwt = b.primary?.extJwt
  const secondary = b.secondary
  const signers = extJwt?.allowedSigners === null && patch ? undefined : extJwt?.allowedSigners
  const required = (secondary?.requireExtJwtSigner === null && patch) || secondary?.requireExtJwtSigner === undefined
    ? undefined
    : secondary.requireExtJwtSigner === '' ? null : secondary.requireExtJwtSigner
  return {
    ...(b.name != null ? { name: b.name } : {}),
    primary: {
      cert: given(b.primary?.cert),
      updb: given(b.primary?.updb),
      extJwt: { ...given(extJwt), ...(signers !== undefined ? { allowedSigners: signers } : {}) },
    },
    secondary: {
      ...given(secondary),
      ...(required !== undefined ? { requireExtJwtSigner: required } : {}),
    },
    ...(b.tags !== undefined ? { tags: b.tags } : {}),
  }
}

/** Auth policies as the Management API lists them. */
function authPolicyListing(identities: IdentityActor): Listing<AuthPolicy> {
  return tableListing(identities.snapshot().authPolicies, {
    symbols: AUTH_POLICY_SYMBOLS,
    indexed: ['id', 'name'],
    toRow: toAuthPolicyRow,
    toView: toAuthPolicyDetail,
  })
}

export function authPolicyRoutes(deps: { identities: IdentityActor }): RouteDef[] {
  return crudRoutes({
    tag: 'Auth Policy',
    routes: ROUTES,
    entity: 'auth-policies',
    noun: 'auth policy',
    detail: AuthPolicyDetail,
    listing: () => authPolicyListing(deps.identities),
    bodies: { create: AuthPolicyCreate, put: AuthPolicyUpdate, patch: AuthPolicyPatch },
    create: (ctx) => deps.identities.ask({ type: 'authPolicy.create', input: { ...toInput(ctx.body), name: ctx.body.name }, change: changeOf(ctx) }),
    update: async (ctx, replace) => {
      await deps.identities.ask({ type: 'authPolicy.update', id: ctx.params.id, input: toInput(ctx.body, !replace), replace, change: changeOf(ctx) })
    },
    remove: async (ctx) => {
      await deps.identities.ask({ type: 'authPolicy.delete', id: ctx.params.id, change: changeOf(ctx) })
    },
  })
}
