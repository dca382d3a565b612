/**
 * What the controller may send a router, as typed calls: each one builds its message from the schema of
 * control-messages.ts (so no body is written by hand) and the headers its message needs. Later stages add the router
 * data model, API sessions and terminators here.
 * @see router-control-plane.md §3
 */
import { ServerHelloSchema, Header } from './pb/edge_ctrl_pb.ts'
import type { ControlChannel } from './channel/control-channel.ts'
import { sendTyped } from './control-messages.ts'
import { encodeBool } from './wire/control-headers.ts'

export interface RouterSenders {
  /**
   * The edge handshake: ServerHello (20000) with the controller's version, data {instant, routerModel} and header
   * 1024 (RouterDataModel) = true; the router answers with a ClientHello as a reply. False: the channel is closed.
   */
  serverHello(version: string): boolean
}

export function routerSenders(ch: ControlChannel): RouterSenders {
  return {
    serverHello(version) {
      const headers = new Map([[Header.RouterDataModel as number, encodeBool(true)]])
      return sendTyped(ch, ServerHelloSchema, { version, data: { instant: 'true', routerModel: 'true' }, byteData: {} }, headers) !== undefined
    },
  }
}
