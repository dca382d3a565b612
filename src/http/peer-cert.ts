/**
 * The seam between the TLS socket and the handlers: the peer certificate chain and address of a request.
 * Kept beside the Request (a WeakMap), never in a header a client could forge.
 */
import type { TLSSocket } from 'node:tls'

/** What the TLS layer knows about the caller. */
export interface PeerInfo {
  /** DER of the certificates the client presented, leaf first; empty when none. */
  readonly certChainDer: readonly Uint8Array[]
  readonly remoteAddress: string
}

const peers = new WeakMap<Request, PeerInfo>()

export function attachPeer(req: Request, info: PeerInfo): void {
  peers.set(req, info)
}

/** The peer of a request; requests made without the listener (e.g. app.handle in unit tests) have none. */
export function peerOf(req: Request): PeerInfo {
  return peers.get(req) ?? { certChainDer: [], remoteAddress: '' }
}

interface PeerCertLike {
  raw?: Buffer
  issuerCertificate?: PeerCertLike
}

const chains = new WeakMap<TLSSocket, readonly Uint8Array[]>()

/**
 * The peer of a request that came over `socket`. The chain is read on first use and kept for the connection (a TLS
 * connection's client certificates do not change): reading it costs the runtime a detailed certificate object per
 * certificate, which only certificate login and enrollment need, once per connection.
 */
export function peerOfSocket(socket: TLSSocket): PeerInfo {
  return {
    remoteAddress: socket.remoteAddress ?? '',
    get certChainDer() {
      let chain = chains.get(socket)
      if (!chain) chains.set(socket, (chain = readPeerChain(socket)))
      return chain
    },
  }
}

/** Reads the presented chain from a TLS socket (leaf first, stopping at a self-issued certificate). */
export function readPeerChain(socket: TLSSocket): Uint8Array[] {
  const getter = (socket as unknown as { getPeerCertificate?: (detailed: boolean) => PeerCertLike | null }).getPeerCertificate
  if (typeof getter !== 'function') return []
  const leaf = getter.call(socket, true)
  const out: Uint8Array[] = []
  const seen = new Set<PeerCertLike>()
  for (let c: PeerCertLike | undefined = leaf ?? undefined; c && c.raw && !seen.has(c); c = c.issuerCertificate) {
    seen.add(c)
    out.push(new Uint8Array(c.raw))
  }
  return out
}
