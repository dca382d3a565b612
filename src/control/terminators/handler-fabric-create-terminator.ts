/**
 * CreateTerminatorRequest (1011): a router hosts a service itself (a fabric binding such as `transport`); the
 * terminator is an ordinary one (not system), its id made by the controller. Answered with a Result: success with
 * the new id as its text, or failure with the reason (a cost above 65535, an unknown service, a busy write queue).
 * An empty binding is `udp` for a `udp:` address and `transport` otherwise, as the real terminator manager sets it;
 * fields larger than TERMINATOR_LIMITS are refused.
 * @see router-control-plane.md §4.3; ziti controller/handler_ctrl/create_terminator.go, model/terminator_manager.go
 */
import { CreateTerminatorRequestSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { MAX_TERMINATOR_COST, oversizedField, TERMINATOR_LIMITS } from '../../domain/policy/graph-decide-terminators.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'
import { peerDataBytes, peerDataRecord, precedenceOfCreate, secretRecord } from './terminator-wire.ts'

export function fabricCreateTerminatorHandler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(CreateTerminatorRequestSchema, frame)
    if (!ctx.takeSlot(router)) return void send.busyResult(frame)
    try {
      if (!isCurrent(ctx, router)) return
      if (req.cost > MAX_TERMINATOR_COST) return send.result(frame, false, `invalid cost ${req.cost}. cost must be between 0 and ${MAX_TERMINATOR_COST} inclusive`)
      const binding = req.binding !== '' ? req.binding : req.address.startsWith('udp:') ? 'udp' : 'transport'
      const oversized = oversizedField({ id: '', address: req.address, binding, instanceId: req.instanceId, instanceSecretBytes: req.instanceSecret.length, peerDataBytes: peerDataBytes(req.peerData) })
      if (oversized) return send.result(frame, false, `the terminator's ${oversized} is larger than ${TERMINATOR_LIMITS[oversized]} bytes`)
      const written = await ctx.write(() =>
        ctx.graph.ask({
          type: 'terminator.establish',
          input: {
            id: '',
            serviceId: req.serviceId,
            routerId: router.id,
            binding,
            address: req.address,
            identity: req.instanceId,
            identitySecret: secretRecord(req.instanceSecret),
            peerData: peerDataRecord(req.peerData),
            cost: req.cost,
            precedence: precedenceOfCreate(req.precedence),
            hostId: '',
            isSystem: false,
            sourceCtrl: ctx.controllerId,
          },
          change: controlChange(router.id),
        }),
      )
      if (!written.ok) return void (written.busy ? send.busyResult(frame) : send.result(frame, false, written.message))
      const r = written.value
      if (r.outcome === 'created') {
        ctx.logger.info({ routerId: router.id, terminatorId: r.id, serviceId: req.serviceId }, 'created terminator')
        return send.result(frame, true, r.id)
      }
      send.result(frame, false, r.outcome === 'no-service' ? `service with id ${req.serviceId} not found` : `terminator not created (${r.outcome})`)
    } finally {
      ctx.giveSlot(router)
    }
  }
}
