/**
 * VerifyRouter (1036): a router that accepted a link on its listener asks whether the dialing router is who it says
 * (its claimed id, the SHA-1 fingerprints of the certificate it presented: a real router sends its leaf's only). The
 * link is refused unless a successful Result comes within 10 s. Rules:
 * - success iff the router exists, has finished enrolling (has a fingerprint), is not disabled, and one of the
 *   fingerprints is its enrolled one (exactly, as the real controller compares them);
 * - the real controller checks the same but not `disabled` (see docs/differences.md);
 * - the answer is a Result with the real controller's texts; any router may ask, about any router.
 * @see router-control-plane.md §4.5, §5.4; ziti controller/handler_ctrl/verify_router.go, network/network.go
 *   VerifyRouter; router/handler_link/bind.go verifyRouter
 */
import { VerifyRouterSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { LinksContext } from './links-context.ts'
import { linkSenders } from './links-senders.ts'

export function verifyRouterHandler(router: ConnectedRouter, ctx: LinksContext): ControlHandler {
  const send = linkSenders(router.channel)
  return (frame) => {
    const req = decodeBody(VerifyRouterSchema, frame)
    const id = req.routerId
    const claimed = ctx.router(id)
    const refuse = (result: 'unknown' | 'unenrolled' | 'disabled' | 'mismatch', text: string) => {
      ctx.counted.verification(result)
      ctx.logger.warn({ routerId: router.id, claimedRouterId: id.slice(0, 512), result }, 'router verification failed')
      send.verifyResult(frame, false, text)
    }
    if (!claimed) return refuse('unknown', `router with id ${id.slice(0, 512)} not found`)
    if (claimed.fingerprint === null) return refuse('unenrolled', `invalid router ${id}, not yet enrolled`)
    if (claimed.disabled) return refuse('disabled', `router ${id} is disabled`)
    if (!req.fingerprints.includes(claimed.fingerprint)) return refuse('mismatch', `could not verify fingerprint for router ${id}`)
    ctx.counted.verification('verified')
    ctx.logger.debug({ routerId: router.id, claimedRouterId: id }, 'router verification successful')
    send.verifyResult(frame, true, 'router verified')
  }
}
