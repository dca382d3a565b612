/**
 * ValidateTerminatorsV2Response (1042): a router's answer to a validation request (a reply the controller waits for
 * in no waiter, so it comes by content type): each terminator it names with its marker is settled, the invalid ones
 * are queued for deletion (terminator-validations.ts). Nothing is answered.
 * @see router-control-plane.md §4.3; ziti controller/network/router_messaging.go terminatorValidationRespReceived
 */
import { ValidateTerminatorsV2ResponseSchema } from '../pb/ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { ValidationState } from './terminator-validations.ts'

export function validateTerminatorsResponseHandler(router: ConnectedRouter, answered: (routerId: string, states: ReadonlyMap<string, ValidationState>) => void): ControlHandler {
  return (frame) => {
    const resp = decodeBody(ValidateTerminatorsV2ResponseSchema, frame)
    const states = new Map<string, ValidationState>()
    for (const [id, s] of Object.entries(resp.states)) states.set(id, { valid: s.valid, marker: s.marker })
    answered(router.id, states)
  }
}
