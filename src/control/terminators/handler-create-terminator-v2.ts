/**
 * CreateTerminatorV2Request (20216): an SDK's Bind, relayed by its edge router, becomes a system terminator whose id
 * and address are the address the router chose. Checks, in the real controller's order: the router is still known
 * (else its channel is closed, no answer); the id is not blank; the SDK's tokens name a Bind session
 * (flows/routers/router-session-check.ts), after the id and the rest are found small enough to keep (TERMINATOR_LIMITS); an edge router policy and a service edge router policy let its identity
 * use this router for the service; the service exists; the cost is at most 65535. A terminator with that id already
 * there must be the same one (binding, service, router, identity), and then only its cost and precedence follow the
 * request (a router asks again after every reconnect). The answer, CreateTerminatorV2Response (20217), is a reply.
 * @see router-control-plane.md §4.2; ziti controller/handler_edge_ctrl/create_terminator_v2.go, common.go
 */
import { CreateTerminatorV2RequestSchema } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import { assertNever } from '../../lib/assert-never.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { conflictOf, EDGE_BINDING, MAX_TERMINATOR_COST, oversizedField, TERMINATOR_LIMITS } from '../../domain/policy/graph-decide-terminators.ts'
import { RouterRequestErrors as E } from '../../domain/router/router-request-errors.ts'
import { controlChange, isCurrent, type TerminatorContext } from './terminator-context.ts'
import { terminatorSenders } from './terminator-senders.ts'
import { peerDataBytes, peerDataRecord, precedenceOfCreate, secretRecord } from './terminator-wire.ts'

export function createTerminatorV2Handler(router: ConnectedRouter, ctx: TerminatorContext): ControlHandler {
  const send = terminatorSenders(router.channel)
  return async (frame) => {
    const req = decodeBody(CreateTerminatorV2RequestSchema, frame)
    const id = req.address
    if (!ctx.takeSlot(router)) return void send.createTerminatorResponse(frame, id, E.busy('too many terminator requests of this router are in progress'))
    try {
      if (!isCurrent(ctx, router)) return
      if (id === '') return void send.createTerminatorResponse(frame, id, E.invalidTerminator('provided terminator id is blank'))
      const oversized = oversizedField({ id, address: id, binding: EDGE_BINDING, instanceId: req.instanceId, instanceSecretBytes: req.instanceSecret.length, peerDataBytes: peerDataBytes(req.peerData) })
      if (oversized) return void send.createTerminatorResponse(frame, id, E.invalidTerminator(`the terminator's ${oversized} is larger than ${TERMINATOR_LIMITS[oversized]} bytes`))
      const checked = await ctx.checkSession({ sessionToken: req.sessionToken, apiSessionToken: req.apiSessionToken }, 'Bind')
      if (!checked.ok) return void send.createTerminatorResponse(frame, id, checked.error)
      const { identityId, serviceId } = checked.session
      if (!ctx.policy.routersFor(identityId, serviceId).includes(router.id)) return void send.createTerminatorResponse(frame, id, E.invalidEdgeRouterForSession())
      const graph = ctx.graph.snapshot()
      if (!graph.services.has(serviceId)) return void send.createTerminatorResponse(frame, id, E.invalidService())
      if (req.cost > MAX_TERMINATOR_COST) {
        return void send.createTerminatorResponse(frame, id, E.invalidCost(`invalid cost ${req.cost}. cost must be between 0 and ${MAX_TERMINATOR_COST} inclusive`))
      }
      const precedence = precedenceOfCreate(req.precedence)
      const claim = { binding: EDGE_BINDING, serviceId, routerId: router.id, hostId: identityId }
      const existing = graph.terminators.get(id)
      // the same terminator asked for again with nothing to change (a reconnect): no write, as the real controller
      if (existing && !conflictOf(existing, claim) && existing.cost === req.cost && existing.precedence === precedence) {
        return void send.createTerminatorResponse(frame, id)
      }
      const written = await ctx.write(() =>
        ctx.graph.ask({
          type: 'terminator.establish',
          input: {
            ...claim,
            id,
            address: id,
            identity: req.instanceId,
            identitySecret: secretRecord(req.instanceSecret),
            peerData: peerDataRecord(req.peerData),
            cost: req.cost,
            precedence,
            isSystem: true,
            sourceCtrl: ctx.controllerId,
          },
          change: controlChange(identityId),
        }),
      )
      if (!written.ok) return void send.createTerminatorResponse(frame, id, written.busy ? E.busy(written.message) : E.internal(written.message))
      const r = written.value
      switch (r.outcome) {
        case 'created':
          ctx.logger.info({ routerId: router.id, terminatorId: id, serviceId, identityId }, 'created terminator')
          return void send.createTerminatorResponse(frame, id)
        case 'updated':
        case 'unchanged':
          return void send.createTerminatorResponse(frame, id)
        case 'conflict':
          ctx.logger.warn({ routerId: router.id, terminatorId: id, conflict: r.with }, 'selected terminator id conflicts with an existing terminator')
          return void send.createTerminatorResponse(frame, id, E.nonRetriable(`selected id conflicts with terminator for different ${r.with}`))
        case 'no-service':
          return void send.createTerminatorResponse(frame, id, E.invalidService())
        case 'no-router':
          return void send.createTerminatorResponse(frame, id, E.internal('the router is no longer known'))
        default:
          return assertNever(r, 'terminator.establish outcome')
      }
    } finally {
      ctx.giveSlot(router)
    }
  }
}
