/** Management API: identities (CRUD, their authenticators) and identity types. Admin only. */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../../actors/session-registry/session-registry-actor.ts'
import type { IdentityFields } from '../../../actors/identity/identity-messages.ts'
import { IDENTITY_TYPES, type Identity } from '../../../domain/identity/identity-types.ts'
import { isMfaEnabled } from '../../../domain/identity/identity-mfa.ts'
import { decidePermissions } from '../../../domain/identity/identity-decide.ts'
import { ApiError } from '../../../errors/api-error.ts'
import type { Clock } from '../../../lib/clock.ts'
import { ListQuery, RoleListQuery } from '../../../../schemas/common.ts'
import { IdentityCreate, IdentityDetail, IdentityPatch, IdentityTypeDetail, IdentityUpdate } from '../../../../schemas/identity.ts'
import { AuthenticatorDetail } from '../../../../schemas/authenticator.ts'
import { created, ok, okEmpty } from '../../http-envelope.ts'
import { respondList, type ListSpec } from '../../http-list.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { IDENTITY_SYMBOLS, IDENTITY_TYPE_SYMBOLS, toIdentityDetail, toIdentityRow, toIdentityTypeDetail } from '../../mappers/identity-mapper.ts'
import { AUTHENTICATOR_SYMBOLS, toAuthenticatorDetail, toAuthenticatorRow } from '../../mappers/authenticator-mapper.ts'
import { changeOf } from '../route-change.ts'
import { createIdentity } from '../../../flows/identity/identity-create.ts'
import type { WriteBodies } from './crud-routes.ts'
import type { EnrollmentMethodRegistry } from '../../../flows/enroll/enroll-method.ts'

const ROUTES = {
  list: '/identities',
  item: '/identities/:id',
  authenticators: '/identities/:id/authenticators',
  types: '/identity-types',
  type: '/identity-types/:id',
} as const

/** Identities as the Management API lists them: this list and every sub-list of identities (policies, routers). */
export function identityListing(deps: Pick<IdentityRouteDeps, 'identities' | 'sessions' | 'clock' | 'caName'>): ListSpec<Identity> & { get(id: string): Identity | undefined } {
  const s = () => deps.identities.snapshot()
  return {
    symbols: IDENTITY_SYMBOLS,
    indexed: ['id', 'name', 'roleAttributes'],
    presortedById: true,
    get: (id) => s().identity(id),
    candidates: (hint) => {
      const st = s()
      if (!hint) return st.identitiesById()
      const ids = new Set<string>()
      for (const v of hint.values) {
        if (hint.field === 'id') ids.add(v)
        else if (hint.field === 'name') {
          const id = st.identityIdByName(v)
          if (id) ids.add(id)
        } else for (const id of st.idsWithRole(v)) ids.add(id)
      }
      return [...ids].map((id) => st.identity(id)).filter((i): i is Identity => i !== undefined)
    },
    toRow: toIdentityRow,
    toView: (i) =>
      toIdentityDetail(i, {
        authenticators: s().authenticatorsOf(i.id),
        enrollments: s().enrollmentsOf(i.id),
        hasApiSession: deps.sessions.snapshot().hasSession(i.id), now: deps.clock.now(),
        isMfaEnabled: isMfaEnabled(s().mfaOf(i.id)),
        caName: deps.caName,
        authPolicyName: (id) => s().authPolicy(id)?.name,
      }),
    roleOf: (i) => i,
  }
}

export interface IdentityRouteDeps {
  identities: IdentityActor
  sessions: SessionRegistryActor
  clock: Clock
  startedAt: number
  /** The enrollment methods an identity may be created with. */
  enrollments: EnrollmentMethodRegistry
  /** The name of a third-party CA (an ottca enrollment's `ca` reference); without it the reference shows the id. */
  caName?: (caId: string) => string | undefined
}

type IdentityInput = {
  name?: string | null
  type?: Identity['typeId']
  isAdmin?: boolean | null
  roleAttributes?: string[] | null
  externalId?: string | null
  authPolicyId?: string | null
  appData?: Identity['appData']
  tags?: Identity['tags']
  defaultHostingCost?: number
  defaultHostingPrecedence?: Identity['defaultHostingPrecedence']
  serviceHostingCosts?: Record<string, number>
  serviceHostingPrecedences?: Record<string, Identity['defaultHostingPrecedence']>
  permissions?: string[] | null
}

/** Wire body → actor fields; `null` on a patch means "leave" for name/isAdmin (they can not be cleared). */
function toFields(b: IdentityInput): IdentityFields {
  decidePermissions(b.permissions)
  const f: IdentityFields = {}
  if (b.name !== undefined && b.name !== null) f.name = b.name
  if (b.type !== undefined) f.typeId = b.type
  if (b.isAdmin !== undefined && b.isAdmin !== null) f.isAdmin = b.isAdmin
  if (b.roleAttributes !== undefined) f.roleAttributes = b.roleAttributes
  if (b.externalId !== undefined) f.externalId = b.externalId
  if (b.authPolicyId !== undefined) f.authPolicyId = b.authPolicyId ?? 'default'
  if (b.appData !== undefined) f.appData = b.appData
  if (b.tags !== undefined) f.tags = b.tags
  if (b.defaultHostingCost !== undefined) f.defaultHostingCost = b.defaultHostingCost
  if (b.defaultHostingPrecedence !== undefined) f.defaultHostingPrecedence = b.defaultHostingPrecedence
  if (b.serviceHostingCosts !== undefined) f.serviceHostingCosts = b.serviceHostingCosts
  if (b.serviceHostingPrecedences !== undefined) f.serviceHostingPrecedences = b.serviceHostingPrecedences
  return f
}

export const IDENTITY_BODIES = {
  schemas: { create: IdentityCreate, put: IdentityUpdate, patch: IdentityPatch },
  fields: (body, operation) => {
    const b = body as IdentityInput
    return operation === 'create' ? { ...toFields(b), name: b.name } : toFields(b)
  },
} satisfies WriteBodies

export function identityRoutes(deps: IdentityRouteDeps): RouteDef[] {
  const identities = identityListing(deps)
  const view = identities.toView
  const find = (id: string): Identity => {
    const i = deps.identities.snapshot().identity(id)
    if (!i) throw ApiError.notFound()
    return i
  }
  const update = (replace: boolean) => async (ctx: RouteCtx<IdentityInput>) => {
    await deps.identities.ask({ type: 'identity.update', id: ctx.params.id, input: toFields(ctx.body), replace, change: changeOf(ctx) })
    return okEmpty()
  }
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'List identities',
      query: RoleListQuery, response: IdentityDetail,
      handle: (ctx) => respondList(ctx.query, identities),
    }),
    route({
      method: 'POST', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Create an identity',
      body: IdentityCreate, successStatus: 201,
      handle: async (ctx) => {
        const { id } = await createIdentity(deps, { ...toFields(ctx.body), name: ctx.body.name }, ctx.body.enrollment, changeOf(ctx))
        return created('identities', id)
      },
    }),
    route({
      method: 'GET', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Get an identity',
      response: IdentityDetail,
      handle: (ctx) => ok(view(find(ctx.params.id))),
    }),
    route({ method: 'PUT', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Update all fields of an identity', body: IdentityUpdate, handle: update(true) }),
    route({ method: 'PATCH', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Update the given fields of an identity', body: IdentityPatch, handle: update(false) }),
    route({
      method: 'DELETE', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Delete an identity',
      handle: async (ctx) => {
        await deps.identities.ask({ type: 'identity.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    route({
      method: 'GET', path: ROUTES.authenticators, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'List the authenticators of an identity',
      query: ListQuery, response: AuthenticatorDetail,
      handle: (ctx) => {
        const identity = find(ctx.params.id)
        const s = deps.identities.snapshot()
        return respondList(ctx.query, {
          symbols: AUTHENTICATOR_SYMBOLS,
          candidates: () => [...s.authenticatorsOf(identity.id)],
          toRow: toAuthenticatorRow,
          toView: (a) => toAuthenticatorDetail(a, identity),
        })
      },
    }),
    route({
      method: 'GET', path: ROUTES.types, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'List identity types',
      query: ListQuery, response: IdentityTypeDetail,
      handle: (ctx) =>
        respondList(ctx.query, {
          symbols: IDENTITY_TYPE_SYMBOLS,
          presortedById: true,
          candidates: () => [...IDENTITY_TYPES].sort(),
          toRow: (id) => ({ id, name: id, createdAt: deps.startedAt, updatedAt: deps.startedAt, tags: {}, isSystem: true }),
          toView: (id) => toIdentityTypeDetail(id, deps.startedAt),
        }),
    }),
    route({
      method: 'GET', path: ROUTES.type, apis: ['management'], access: 'admin', tag: 'Identity', summary: 'Get an identity type',
      response: IdentityTypeDetail,
      handle: (ctx) => {
        const id = IDENTITY_TYPES.find((t) => t === ctx.params.id)
        if (!id) throw ApiError.notFound()
        return ok(toIdentityTypeDetail(id, deps.startedAt))
      },
    }),
  ]
}
