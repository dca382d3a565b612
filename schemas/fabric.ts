/**
 * Fabric API wire shapes (`/fabric/v1`): services, routers and terminators as the fabric sees them, links, circuits,
 * their write bodies, and the database snapshot with a path.
 * @see ziti controller/specs/swagger.yml definitions serviceDetail, serviceUpdate, servicePatch, routerDetail,
 *   routerUpdate, routerPatch, terminatorDetail, terminatorCreate, terminatorUpdate, terminatorPatch, linkDetail,
 *   linkPatch, circuitDetail, circuitDelete, path, databaseSnapshotCreate, databaseSnapshotCreateDetails
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity, EntityRef, Tags } from './common.ts'
import { TerminatorCost, TerminatorPrecedence } from './identity.ts'
import { RouterCost } from './router.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
const Strategy = Type.String({ maxLength: 255 })
const MaxIdle = Type.Integer({ minimum: 0 })
const NullableBool = Type.Union([Type.Boolean(), Type.Null()])
const Ref = Type.String({ minLength: 1 })
const Text = Type.String({ minLength: 1, maxLength: 4096 })

export const FabricServiceDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  terminatorStrategy: Type.String(),
  maxIdleTimeMillis: Type.Integer(),
})

const serviceSettable = {
  terminatorStrategy: Type.Optional(Strategy),
  maxIdleTimeMillis: Type.Optional(MaxIdle),
  tags: Type.Optional(Tags),
}
export const FabricServiceUpdate = Type.Object({ ...serviceSettable, name: Name })
export const FabricServicePatch = Type.Object({ ...serviceSettable, name: Type.Optional(Name) })

/** A link listener of a connected router (its hello). */
export const RouterListener = Type.Object({ address: Type.String(), protocol: Type.String() })

export const VersionInfo = Type.Object({
  version: Type.String(),
  revision: Type.String(),
  buildDate: Type.String(),
  os: Type.String(),
  arch: Type.String(),
})

const CtrlChanListeners = Type.Record(Type.String(), Type.Array(Type.String()))

/** `listenerAddresses` and `versionInfo` only while the router is connected to this node, as the real controller. */
export const FabricRouterDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  fingerprint: Type.String(),
  connected: Type.Boolean(),
  cost: RouterCost,
  noTraversal: Type.Boolean(),
  disabled: Type.Boolean(),
  listenerAddresses: Type.Optional(Type.Array(RouterListener)),
  versionInfo: Type.Optional(VersionInfo),
  ctrlChanListeners: CtrlChanListeners,
})

const routerSettable = {
  /** Read so that a non-empty list is refused, never dropped (graph-decide.ts decideNoRouterBootstrap). */
  configs: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }), Type.Null()])),
  ctrlChanListeners: Type.Optional(
    Type.Union([Type.Record(Type.String(), Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }), Type.Null()])), Type.Null()]),
  ),
  disabled: Type.Optional(NullableBool),
  tags: Type.Optional(Tags),
}
/** `fingerprint` must be the router's own (a router's certificate changes by enrollment only). */
export const FabricRouterUpdate = Type.Object({
  ...routerSettable,
  name: Name,
  fingerprint: Type.String({ maxLength: 255 }),
  cost: RouterCost,
  noTraversal: Type.Boolean(),
})
export const FabricRouterPatch = Type.Object({
  ...routerSettable,
  name: Type.Optional(Name),
  fingerprint: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  cost: Type.Optional(Type.Union([RouterCost, Type.Null()])),
  noTraversal: Type.Optional(NullableBool),
})

export const FabricTerminatorDetail = Type.Object({
  ...BaseEntity,
  serviceId: Type.String(),
  service: EntityRef,
  routerId: Type.String(),
  router: EntityRef,
  binding: Type.String(),
  address: Type.String(),
  instanceId: Type.String(),
  cost: TerminatorCost,
  precedence: TerminatorPrecedence,
  dynamicCost: TerminatorCost,
  hostId: Type.String(),
})

const terminatorSettable = {
  cost: Type.Optional(TerminatorCost),
  precedence: Type.Optional(TerminatorPrecedence),
  tags: Type.Optional(Tags),
  /** Only empty: the hosting identity is set by an SDK's Bind through its edge router, never by an admin. */
  hostId: Type.Optional(Type.String({ maxLength: 4096 })),
}
export const FabricTerminatorCreate = Type.Object({
  ...terminatorSettable,
  service: Ref,
  router: Ref,
  address: Text,
  binding: Text,
  instanceId: Type.Optional(Type.String({ maxLength: 4096 })),
  /** base64 (the spec's format byte). */
  instanceSecret: Type.Optional(Type.String({ maxLength: 4096 })),
})
export const FabricTerminatorUpdate = Type.Object({ ...terminatorSettable, service: Ref, router: Ref, address: Text, binding: Text })
export const FabricTerminatorPatch = Type.Object({
  ...terminatorSettable,
  service: Type.Optional(Ref),
  router: Type.Optional(Ref),
  address: Type.Optional(Text),
  binding: Type.Optional(Text),
})

/** A link as the controller knows it; latencies in nanoseconds. Not a stored entity: no baseEntity fields. */
export const LinkDetail = Type.Object({
  id: Type.String(),
  protocol: Type.String(),
  sourceRouter: EntityRef,
  destRouter: EntityRef,
  state: Type.String(),
  down: Type.Boolean(),
  staticCost: Type.Integer(),
  sourceLatency: Type.Integer(),
  destLatency: Type.Integer(),
  cost: Type.Integer(),
  iteration: Type.Integer(),
  /** Its connections as the routers last reported them: what each carries, its local and remote address. */
  connections: Type.Array(Type.Object({ type: Type.String(), source: Type.String(), dest: Type.String() })),
})

/** An admin's change of a link: out of (or back into) path selection, and its static cost (an int32, not negative). */
export const LinkPatch = Type.Object({
  down: Type.Optional(Type.Boolean()),
  staticCost: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
})

export const CircuitPath = Type.Object({ nodes: Type.Array(EntityRef), links: Type.Array(EntityRef) })

export const CircuitDetail = Type.Object({
  ...BaseEntity,
  clientId: Type.String(),
  service: EntityRef,
  terminator: EntityRef,
  path: CircuitPath,
})

/** `immediate`: drop the circuit's forwarding at once instead of letting its ends close it (absent: false). */
export const CircuitDelete = Type.Object({ immediate: Type.Optional(Type.Boolean()) })

/** The snapshot's path: only the controller's own choice (absent or empty); see fabric-ops-routes.ts. */
export const DatabaseSnapshotCreate = Type.Object({ path: Type.Optional(Type.String({ maxLength: 4096 })) })
export const DatabaseSnapshotCreateDetails = Type.Object({ path: Type.String() })
