/**
 * Policy wire shapes: service policies, edge router policies, service edge router policies.
 * Role lists hold `#attribute`, `@id` or `#all`; the detail views add `*RolesDisplay` arrays, never null.
 * @see edge-api management.yml definitions servicePolicyCreate/Update/Patch/Detail, edgeRouterPolicyCreate/Update/
 *   Patch/Detail, serviceEdgeRouterPolicyCreate/Update/Patch/Detail, roles, namedRoles, semantic, dialBind
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, StringEnum, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
export const Semantic = StringEnum(['AllOf', 'AnyOf'])
export const PolicyType = StringEnum(['Dial', 'Bind'])
/** A role list on the wire; null reads as empty. */
export const Roles = Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }), Type.Null()])
export const NamedRole = Type.Object({ role: Type.String(), name: Type.String() })
export const NamedRoles = Type.Array(NamedRole)

const opt = Type.Optional

export const ServicePolicyCreate = Type.Object({
  name: Name,
  type: PolicyType,
  semantic: Semantic,
  identityRoles: opt(Roles),
  serviceRoles: opt(Roles),
  postureCheckRoles: opt(Roles),
  tags: opt(Tags),
})
export const ServicePolicyUpdate = ServicePolicyCreate
export const ServicePolicyPatch = Type.Partial(ServicePolicyCreate)

export const EdgeRouterPolicyCreate = Type.Object({
  name: Name,
  semantic: Semantic,
  identityRoles: opt(Roles),
  edgeRouterRoles: opt(Roles),
  tags: opt(Tags),
})
export const EdgeRouterPolicyUpdate = EdgeRouterPolicyCreate
export const EdgeRouterPolicyPatch = Type.Partial(EdgeRouterPolicyCreate)

export const ServiceEdgeRouterPolicyCreate = Type.Object({
  name: Name,
  semantic: Semantic,
  serviceRoles: opt(Roles),
  edgeRouterRoles: opt(Roles),
  tags: opt(Tags),
})
export const ServiceEdgeRouterPolicyUpdate = ServiceEdgeRouterPolicyCreate
export const ServiceEdgeRouterPolicyPatch = Type.Partial(ServiceEdgeRouterPolicyCreate)

const RoleList = Type.Array(Type.String())

export const ServicePolicyDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  type: PolicyType,
  semantic: Semantic,
  identityRoles: RoleList,
  identityRolesDisplay: NamedRoles,
  serviceRoles: RoleList,
  serviceRolesDisplay: NamedRoles,
  postureCheckRoles: RoleList,
  postureCheckRolesDisplay: NamedRoles,
})

export const EdgeRouterPolicyDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  semantic: Semantic,
  identityRoles: RoleList,
  identityRolesDisplay: NamedRoles,
  edgeRouterRoles: RoleList,
  edgeRouterRolesDisplay: NamedRoles,
  isSystem: Type.Boolean(),
})

export const ServiceEdgeRouterPolicyDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  semantic: Semantic,
  serviceRoles: RoleList,
  serviceRolesDisplay: NamedRoles,
  edgeRouterRoles: RoleList,
  edgeRouterRolesDisplay: NamedRoles,
})
