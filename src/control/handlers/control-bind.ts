/**
 * Everything a router may send the controller, and who takes it: the binding of a router's control channel, one
 * handler per content type (one file per message handled). Ping, Result replies and heartbeats are the channel's
 * (channel/control-channel.ts); any content type not listed here is counted and dropped.
 * Stage (a) of issue 30 reads only the ClientHello; the data model, API sessions and terminators add theirs here.
 */
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import type { ControlHandler, HandlerTable } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import { clientHelloHandler, type ClientHelloDeps } from './handler-client-hello.ts'

export type RouterBindingDeps = ClientHelloDeps

export function bindRouterChannel(router: ConnectedRouter, deps: RouterBindingDeps): HandlerTable {
  const table = new Map<number, ControlHandler>()
  if (router.isEdge) table.set(EdgeType.ClientHelloType, clientHelloHandler(router, deps))
  return table
}
