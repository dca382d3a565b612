/**
 * ClientHello (20001), an edge router's answer to ServerHello (a reply nobody waits for, dispatched by type): its
 * edge listeners become `supportedProtocols` (listener advertise addresses; the pre-listeners form of hostname,
 * protocols and ports when it lists none), its hostname and whether it keeps a router data model (header 1024, index
 * in 1025) are recorded, then the router is synchronized (SYNC_HELLO_WAIT → SYNC_IN_PROGRESS → SYNC_DONE, or
 * SYNC_ERROR). A body that does not decode is logged and dropped: the router stays connected, without protocols.
 * @see router-control-plane.md §3.1, §4.1; ziti controller/sync_strats/sync_instant.go ReceiveClientHello
 */
import { ClientHelloSchema, Header } from '../pb/edge_ctrl_pb.ts'
import { decodeBody } from '../control-messages.ts'
import { readBool, readU64 } from '../wire/control-headers.ts'
import { supportedProtocolsOf, SYNC_STATUS } from '../../domain/router/router-presence.ts'
import type { ControlHandler } from '../channel/control-channel.ts'
import type { ConnectedRouter, RouterRegistry } from '../control-routers.ts'

export interface ClientHelloDeps {
  registry: RouterRegistry
  /** What synchronizing a router sends it once its ClientHello is in: each feature's part, in order. */
  synchronize(router: ConnectedRouter): Promise<void>
  log: (level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void
}

export function clientHelloHandler(router: ConnectedRouter, deps: ClientHelloDeps): ControlHandler {
  return async (frame) => {
    const hello = decodeBody(ClientHelloSchema, frame)
    deps.registry.setSyncStatus(router, SYNC_STATUS.HelloWait)
    router.hostname = hello.hostname
    router.supportedProtocols = supportedProtocolsOf(
      hello.listeners.map((l) => ({ protocol: l.advertise?.protocol ?? '', hostname: l.advertise?.hostname ?? '', port: l.advertise?.port ?? 0 })),
      { hostname: hello.hostname, protocols: hello.protocols, protocolPorts: hello.protocolPorts },
    )
    router.dataModel = {
      supported: readBool(frame.headers, Header.RouterDataModel) === true,
      index: readU64(frame.headers, Header.RouterDataModelIndex) ?? 0n,
    }
    deps.log('info', { routerId: router.id, version: hello.version, hostname: hello.hostname, protocols: router.supportedProtocols }, 'edge router sent its client hello')
    deps.registry.helloReceived(router)
    deps.registry.setSyncStatus(router, SYNC_STATUS.InProgress)
    try {
      await deps.synchronize(router)
      deps.registry.setSyncStatus(router, SYNC_STATUS.Done)
    } catch (e) {
      deps.registry.setSyncStatus(router, SYNC_STATUS.Error)
      throw e
    }
  }
}
