/**
 * Everything a router may send the controller, and who takes it: the binding of a router's control channel, one
 * handler per content type (one file per message handled). Ping, Result replies and heartbeats are the channel's
 * (channel/control-channel.ts); the ClientHello is the edge handshake's; every other content type is a feature's
 * (control-feature.ts); a content type no one takes is counted and dropped.
 */
import { ContentType as EdgeType } from '../pb/edge_ctrl_pb.ts'
import type { ControlHandler, HandlerTable } from '../channel/control-channel.ts'
import type { ConnectedRouter } from '../control-routers.ts'
import type { ControlFeature } from '../control-feature.ts'
import { clientHelloHandler, type ClientHelloDeps } from './handler-client-hello.ts'

export type RouterBindingDeps = ClientHelloDeps & { features: readonly ControlFeature[] }

export function bindRouterChannel(router: ConnectedRouter, deps: RouterBindingDeps): HandlerTable {
  const table = new Map<number, ControlHandler>()
  const owner = new Map<number, string>()
  if (router.isEdge) {
    table.set(EdgeType.ClientHelloType, clientHelloHandler(router, deps))
    owner.set(EdgeType.ClientHelloType, 'edge handshake')
  }
  for (const feature of deps.features) {
    for (const [contentType, handler] of feature.handlers?.(router) ?? []) {
      const taken = owner.get(contentType)
      if (taken !== undefined) throw new TypeError(`content type ${contentType} is taken by ${taken}; ${feature.name} cannot take it too`)
      table.set(contentType, handler)
      owner.set(contentType, feature.name)
    }
  }
  return table
}
