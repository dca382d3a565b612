/**
 * Service sessions. @see edge-api client.yml sessionCreate, sessionDetail, sessionEdgeRouter
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, StringEnum, Tags } from './common.ts'

export const DialBind = StringEnum(['Dial', 'Bind'] as const)

export const SessionCreate = Type.Object({
  serviceId: Type.Optional(Type.String()),
  type: Type.Optional(DialBind),
  tags: Type.Optional(Tags),
})

export const SessionEdgeRouter = Type.Object({
  name: Type.String(),
  hostname: Type.String(),
  isOnline: Type.Boolean(),
  cost: Type.Number(),
  disabled: Type.Boolean(),
  noTraversal: Type.Boolean(),
  supportedProtocols: Type.Record(Type.String(), Type.String()),
  syncStatus: Type.String(),
  urls: Type.Record(Type.String(), Type.String()),
})

export const SessionDetail = Type.Object({
  ...BaseEntity,
  apiSession: EntityRef,
  apiSessionId: Type.String(),
  identityId: Type.String(),
  service: EntityRef,
  serviceId: Type.String(),
  token: Type.String(),
  type: DialBind,
  edgeRouters: Type.Array(SessionEdgeRouter),
})

export const ServiceUpdates = Type.Object({ lastChangeAt: Type.String({ format: 'date-time' }) })

/** `GET /sessions/{id}/route-path`: the ids of the routers the session's circuit runs through (never null). */
export const SessionRoutePath = Type.Object({ routePath: Type.Array(Type.String()) })
