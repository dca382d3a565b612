/**
 * The one handler of Fault (1004), shared by the features whose subjects it carries: it decodes each fault once and
 * hands it to the sink of its subject. Link subjects (2 LinkFault, 5 LinkDuplicate) go to the sink `onLinkFault` took
 * (the links feature's, control/links/); circuit subjects (0 IngressFault, 1 EgressFault, 3 ForwardFault,
 * 4 UnknownOwnerForwardFault; for 3 and 4 `id` holds space-separated circuit ids) to the sink `onCircuitFault` took.
 * Rules:
 * - one sink per kind; registering a second is a programming error (TypeError);
 * - a fault whose kind has no sink yet, or of an unknown subject, is logged at debug and dropped;
 * - a sink that throws is logged; the channel goes on; an undecodable body is the channel's to log (decodeBody throws);
 * - it is the only feature that takes 1004 (a content type belongs to one feature: handlers/control-bind.ts).
 * @see router-control-plane.md §4.5; ziti controller/handler_ctrl/fault.go
 */
import type { Logger } from '../../lib/logger.ts'
import { Counter, type MetricsRegistry } from '../../lib/metrics.ts'
import { ContentType as CtrlType, FaultSchema, FaultSubject, type Fault } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlFeature } from '../control-feature.ts'
import type { ConnectedRouter } from '../control-routers.ts'

/** Takes a fault the dispatcher decoded, from `router`'s channel (the connection it came on). */
export type FaultSink = (router: ConnectedRouter, fault: Fault) => void

export interface FaultDispatcher extends ControlFeature {
  /** Registers the sink of the link subjects (2, 5); answers the unregister. */
  onLinkFault(sink: FaultSink): () => void
  /** Registers the sink of the circuit subjects (0, 1, 3, 4); answers the unregister. */
  onCircuitFault(sink: FaultSink): () => void
}

type Kind = 'link' | 'circuit'

const KIND_OF = new Map<number, Kind>([
  [FaultSubject.LinkFault, 'link'],
  [FaultSubject.LinkDuplicate, 'link'],
  [FaultSubject.IngressFault, 'circuit'],
  [FaultSubject.EgressFault, 'circuit'],
  [FaultSubject.ForwardFault, 'circuit'],
  [FaultSubject.UnknownOwnerForwardFault, 'circuit'],
])

export function createFaultDispatcher(deps: { logger: Logger; metrics: MetricsRegistry }): FaultDispatcher {
  const { logger } = deps
  const received = deps.metrics.register(new Counter('edgeplane_control_faults_total', 'Faults routers reported, by subject (unknown subjects as other)', ['subject']))
  const bySubject = new Map<string, { inc(): void }>()
  const count = (name: string) => {
    let s = bySubject.get(name)
    if (!s) bySubject.set(name, (s = received.labels(name)))
    s.inc()
  }
  const sinks = new Map<Kind, FaultSink>()
  const register = (kind: Kind, sink: FaultSink) => {
    if (sinks.has(kind)) throw new TypeError(`a ${kind} fault sink is already registered`)
    sinks.set(kind, sink)
    return () => {
      if (sinks.get(kind) === sink) sinks.delete(kind)
    }
  }
  return {
    name: 'faults',
    handlers: (router) => [
      [
        CtrlType.FaultType,
        (frame) => {
          const fault = decodeBody(FaultSchema, frame)
          const kind = KIND_OF.get(fault.subject)
          count(kind ? FaultSubject[fault.subject]! : 'other')
          const sink = kind && sinks.get(kind)
          if (!sink) return logger.debug({ routerId: router.id, subject: fault.subject }, 'fault dropped: nothing handles its subject')
          try {
            sink(router, fault)
          } catch (e) {
            logger.warn({ routerId: router.id, subject: FaultSubject[fault.subject], err: e instanceof Error ? e.message : String(e) }, 'a fault sink failed')
          }
        },
      ],
    ],
    onLinkFault: (sink) => register('link', sink),
    onCircuitFault: (sink) => register('circuit', sink),
  }
}
