/**
 * The Route messages of a circuit's path, one per router, as the real controller builds them. Pure. Rules kept here:
 * - One router (no link): forwards ingress → egress (End) and egress → ingress (Start), with the egress.
 * - Over links: the first router forwards ingress → link (Link) and link → ingress (Start); a transit router forwards
 *   each link to the next and back (Link); the last forwards egress → link (Link) and link → egress (End), and holds
 *   the egress: the terminator's binding, the egress id as address, the terminator's address as destination, and the
 *   dialer's peer data.
 * - `timeout` is the nanoseconds left until the deadline (router-control-plane.md trap 12).
 * @see ziti controller/network/network_path.go CreateRouteMessages; router-control-plane.md §5.2
 */
import type { MessageInitShape } from '@bufbuild/protobuf'
import { DestType, type RouteSchema } from '../pb/ctrl_pb.ts'
import type { CircuitPath } from '../../domain/fabric/fabric-types.ts'

export type RouteInit = MessageInitShape<typeof RouteSchema>

export interface RouteTerminator {
  readonly binding: string
  readonly address: string
}

export function routeMessages(o: {
  circuitId: string
  attempt: number
  path: CircuitPath
  terminator: RouteTerminator
  /** The dialer's peer data, for the egress. */
  peerData: ReadonlyMap<number, Uint8Array>
  /** Nanoseconds left until the route deadline. */
  timeoutNs: bigint
  tags: Readonly<Record<string, string>>
  context?: { fields: Record<string, string>; channelMask: number }
}): RouteInit[] {
  const { path } = o
  const n = path.nodes.length
  const out: RouteInit[] = []
  for (let i = 0; i < n; i++) {
    const forwards: { srcAddress: string; dstAddress: string; dstType: DestType }[] = []
    if (n === 1) {
      forwards.push({ srcAddress: path.ingressId, dstAddress: path.egressId, dstType: DestType.End })
      forwards.push({ srcAddress: path.egressId, dstAddress: path.ingressId, dstType: DestType.Start })
    } else if (i === 0) {
      forwards.push({ srcAddress: path.ingressId, dstAddress: path.links[0]!, dstType: DestType.Link })
      forwards.push({ srcAddress: path.links[0]!, dstAddress: path.ingressId, dstType: DestType.Start })
    } else if (i === n - 1) {
      forwards.push({ srcAddress: path.egressId, dstAddress: path.links[i - 1]!, dstType: DestType.Link })
      forwards.push({ srcAddress: path.links[i - 1]!, dstAddress: path.egressId, dstType: DestType.End })
    } else {
      forwards.push({ srcAddress: path.links[i - 1]!, dstAddress: path.links[i]!, dstType: DestType.Link })
      forwards.push({ srcAddress: path.links[i]!, dstAddress: path.links[i - 1]!, dstType: DestType.Link })
    }
    const last = i === n - 1
    out.push({
      circuitId: o.circuitId,
      attempt: o.attempt,
      forwards,
      ...(last
        ? { egress: { binding: o.terminator.binding, address: path.egressId, destination: o.terminator.address, peerData: Object.fromEntries(o.peerData) } }
        : {}),
      ...(o.context ? { context: o.context } : {}),
      timeout: o.timeoutNs > 0n ? o.timeoutNs : 0n,
      tags: { ...o.tags },
    })
  }
  return out
}
