/**
 * Policy insight (edgeplane extensions of the Management API): why an identity can or cannot reach a service or use an
 * edge router, and what a policy or role attribute change would do before it is applied.
 * @see README "Policy insight"; src/flows/insight/
 */
import { Type } from '@sinclair/typebox'
import { EntityRef } from './common.ts'
import { RouterEntityRef } from './policy-advice.ts'

const Semantic = Type.Union([Type.Literal('AllOf'), Type.Literal('AnyOf')])
const Permission = Type.Union([Type.Literal('Dial'), Type.Literal('Bind')])

/** How one policy's identity roles judge the identity. */
export const RoleVerdict = {
  policy: EntityRef,
  semantic: Semantic,
  identityRoles: Type.Array(Type.String()),
  matches: Type.Boolean(),
  matchedBy: Type.Union([Type.Literal('#all'), Type.Literal('@id'), Type.Literal('attributes'), Type.Null()]),
  /** `#attr` roles the identity lacks: AllOf needs all of them, AnyOf any one. */
  missingRoles: Type.Array(Type.String()),
}

/** A smallest change that would make a policy select the identity, verified by evaluating the policy with it. */
export const AccessFix = Type.Object({
  action: Type.Union([Type.Literal('add-attributes'), Type.Literal('name-in-policy'), Type.Literal('create-policy')]),
  /** add-attributes: the role attributes to give the identity. */
  attributes: Type.Array(Type.String()),
  /** The policies the fix makes select the identity (empty for create-policy). */
  policies: Type.Array(EntityRef),
  description: Type.String(),
})

export const PostureGate = Type.Object({
  postureCheck: EntityRef,
  typeId: Type.String(),
  /** Per API session of the identity (policies that grant the service only). */
  apiSessions: Type.Array(Type.Object({ apiSessionId: Type.String(), isPassing: Type.Boolean() })),
})

export const PermissionExplanation = Type.Object({
  allowed: Type.Boolean(),
  policies: Type.Array(Type.Object({ ...RoleVerdict, postureChecks: Type.Array(PostureGate) })),
  fixes: Type.Array(AccessFix),
})

export const ServiceAccessExplanation = Type.Object({
  identity: EntityRef,
  service: EntityRef,
  dial: PermissionExplanation,
  bind: PermissionExplanation,
  edgeRouters: Type.Object({
    identityEdgeRouterPolicies: Type.Array(EntityRef),
    serviceEdgeRouterPolicies: Type.Array(EntityRef),
    identityRouterCount: Type.Integer(),
    serviceRouterCount: Type.Integer(),
    commonRouters: Type.Array(RouterEntityRef),
    /** When the identity may Dial or Bind but no router is common: the smallest edge router policy fixes. */
    fixes: Type.Array(AccessFix),
  }),
})

export const RouterAccessExplanation = Type.Object({
  identity: EntityRef,
  edgeRouter: RouterEntityRef,
  allowed: Type.Boolean(),
  policies: Type.Array(Type.Object(RoleVerdict)),
  fixes: Type.Array(AccessFix),
  /** Services the identity may Dial or Bind that this router may carry. */
  serviceCount: Type.Integer(),
})

export const PreviewEntityType = Type.Union([
  Type.Literal('service-policies'),
  Type.Literal('edge-router-policies'),
  Type.Literal('service-edge-router-policies'),
  Type.Literal('identities'),
  Type.Literal('services'),
  Type.Literal('edge-routers'),
])

/** A change to preview: the operation, the entity type, the id (update, patch, delete) and the operation's own body. */
export const PolicyPreviewCreate = Type.Object({
  operation: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('patch'), Type.Literal('delete')]),
  entityType: PreviewEntityType,
  id: Type.Optional(Type.String()),
  body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
})

export const PolicyPreviewQuery = Type.Object({
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String()),
})

const Counts = {
  dialGained: Type.Integer(),
  dialLost: Type.Integer(),
  bindGained: Type.Integer(),
  bindLost: Type.Integer(),
  /** (identity, service) pairs keeping Dial or Bind but left without a usable edge router. */
  routersLost: Type.Integer(),
}

export const PreviewChange = Type.Object({
  identity: EntityRef,
  service: EntityRef,
  change: Type.Union([Type.Literal('gained'), Type.Literal('lost'), Type.Literal('routers-lost')]),
  /** The permission gained or lost (null for routers-lost). */
  permission: Type.Union([Permission, Type.Null()]),
})

export const PolicyPreview = Type.Object({
  totals: Type.Object({ ...Counts, identities: Type.Integer(), services: Type.Integer() }),
  /** One page of the changes (empty with ?summary=true). */
  changes: Type.Array(PreviewChange),
  pagination: Type.Object({ limit: Type.Integer(), offset: Type.Integer(), totalCount: Type.Integer() }),
  summary: Type.Union([
    Type.Object({
      services: Type.Array(Type.Object({ service: EntityRef, ...Counts })),
      /** Per role attribute of the identities concerned: how many identities gain, lose, or lose their routers. */
      identityRoleAttributes: Type.Array(Type.Object({ attribute: Type.String(), gaining: Type.Integer(), losing: Type.Integer(), losingRouters: Type.Integer() })),
    }),
    Type.Null(),
  ]),
})
