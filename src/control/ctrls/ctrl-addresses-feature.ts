/**
 * The cluster's control endpoints, told to routers (a cluster node only; a single controller sends none, as the
 * real one without raft): UpdateCtrlAddresses (1037) to a router when it connects and to every connected router when
 * the cluster's membership changes, and as the answer to RequestClusterMembers (1055). A router dials the endpoints
 * it learns, drops those no longer listed, and rewrites its endpoints file, so a node added later is used without
 * re-enrolling. Rules kept here:
 * - Each node is listed by its node name, which is its hello's controller id (header 8): the router keys its
 *   controllers by that id.
 * - The list's index is this node's applied etcd revision when sent: a later list is never older (every node applies
 *   membership changes in revision order).
 * - Every node says it is the leader (there is no leader among edgeplane nodes; a router asks its leader for the list
 *   only while it waits for one, and any node answers it the same).
 * - Nodes recorded without a control endpoint (they joined before nodes had one) are left out.
 * @see router-control-plane.md §3.6; ziti router/handler_ctrl/update_ctrl_addresses.go
 */
import type { EventBus } from '../../actors/runtime/event-bus.ts'
import type { ControllerNode } from '../../domain/cluster/controller-types.ts'
import type { ControlChannel } from '../channel/control-channel.ts'
import type { ControlFeature } from '../control-feature.ts'
import { sendTyped } from '../control-messages.ts'
import type { RouterRegistry } from '../control-routers.ts'
import { ContentType, UpdateCtrlAddressesSchema } from '../pb/ctrl_pb.ts'

export interface CtrlAddressesDeps {
  /** The cluster's nodes as the controllers aggregate holds them. */
  nodes(): Iterable<ControllerNode>
  /** This node's applied revision. */
  revision(): number
  bus: EventBus
  registry: RouterRegistry
}

export function createCtrlAddressesFeature(deps: CtrlAddressesDeps): ControlFeature {
  const send = (ch: ControlChannel) => {
    const controllers = [...deps.nodes()]
      .filter((n) => n.ctrlAddress !== null)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((n) => ({ id: n.id, endpoints: [{ address: n.ctrlAddress!, groups: [] }] }))
    if (controllers.length === 0) return
    sendTyped(ch, UpdateCtrlAddressesSchema, {
      addresses: controllers.map((c) => c.endpoints[0]!.address),
      index: BigInt(deps.revision()),
      isLeader: true,
      controllers,
    })
  }
  const unsubscribe = [
    deps.registry.on('connected', (e) => send(e.router.channel)),
    ...['controller.changed', 'controller.removed'].map((type) =>
      deps.bus.subscribe(type, () => {
        // after the turn: the membership write's effects are all applied by then
        queueMicrotask(() => {
          for (const r of deps.registry.all()) send(r.channel)
        })
      }),
    ),
  ]
  return {
    name: 'controller addresses',
    handlers: () => [[ContentType.RequestClusterMembers, (_frame, ch) => send(ch)]],
    stop() {
      for (const u of unsubscribe) u()
    },
  }
}
