/**
 * The seam between the TLS socket and the handlers: the peer certificate chain and address of a request.
 * Kept beside the Request (a WeakMap), never in a header a client could forge.
 */
import type { TLSSocket } from 'node:tls'

/** What the TLS layer knows about the caller. */
export interface PeerInfo {
  /** DER of the certificates the client presented, leaf first; empty when none. */
  certChainDer: Uint8Array[]
  remoteAddress: string
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
