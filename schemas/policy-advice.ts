/**
 * Policy advice: why an identity can or cannot use a service (Dial/Bind, and the edge routers both may use).
 * @see edge-api management.yml definitions policyAdvice, routerEntityRef
 */
import { Type } from '@sinclair/typebox'
import { EntityRef } from './common.ts'

export const RouterEntityRef = Type.Object({ ...EntityRef.properties, isOnline: Type.Boolean() })

export const PolicyAdvice = Type.Object({
  identityId: Type.String(),
  identity: EntityRef,
  serviceId: Type.String(),
  service: EntityRef,
  isBindAllowed: Type.Boolean(),
  isDialAllowed: Type.Boolean(),
  identityRouterCount: Type.Integer(),
  serviceRouterCount: Type.Integer(),
  commonRouters: Type.Array(RouterEntityRef),
})
