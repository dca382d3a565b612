/**
 * The baselines of `bun run bench`, and the transports `bun run bench transports` compares, each run in its own
 * process so its CPU can be read from /proc. Every mode answers every request with the same JSON bytes (the
 * controller's GET /version answer): no Request object, no application.
 * - `bridge`: the transport floor. A bare node:tls server handing each connection to node:http, as the controller's
 *   listener does, asking for a client certificate the same way.
 * - `bun`: the runtime's ceiling. Bun.serve with TLS (it cannot hand a handler the client certificate in Bun 1.4, so
 *   the controller cannot use it; it shows what the runtime can do).
 * - `bun-mtls`: Bun.serve with TLS asking for a client certificate (`requestCert`), which it still cannot hand over.
 * - `https`: node:https with `requestCert`. In Bun 1.4.5 its `req.socket` is a plain socket without
 *   getPeerCertificate, so the certificate cannot be read (measured to know what it would give).
 * - `http2`: node:http2's secure server with `allowHTTP1`, whose HTTP/1.1 requests carry a TLSSocket.
 * - `listen`: Bun.listen TLS sockets, each wrapped in a stream handed to node:http (the peer certificate is read from
 *   the Bun socket).
 * - `listener`: the controller's own listener (src/http/http-listener.ts `startListener`) with a handler answering the
 *   same bytes: the bridge plus what the listener does per request and per connection, without the application.
 * A request whose path starts with `/peer` makes the modes that can read it read the client's certificate chain (DER
 * of each certificate, leaf first) before answering: what a certificate login needs from its transport.
 *
 * bun bench/floor-server.ts <mode> <key.pem> <cert.pem> <body.json>   prints "listening on <port>"
 */
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import { readFileSync } from 'node:fs'
import tls from 'node:tls'
import type { AddressInfo } from 'node:net'
import { Duplex } from 'node:stream'
import { startListener } from '../src/http/http-listener.ts'
import { readPeerChain } from '../src/http/peer-cert.ts'

export const FLOOR_MODES = ['bridge', 'bun', 'bun-mtls', 'https', 'http2', 'listen', 'listener'] as const
export type FloorMode = (typeof FLOOR_MODES)[number]

if (import.meta.main) await main()

async function main(): Promise<void> {
  const [mode, keyFile, certFile, bodyFile] = process.argv.slice(2)
  const key = readFileSync(keyFile, 'utf8')
  const cert = readFileSync(certFile, 'utf8')
  const body = readFileSync(bodyFile)
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length) }
  const tlsOptions = { key, cert, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' as const }
  const listening = (port: number) => console.log(`listening on ${port}`)
  const peerRead = (url: string | undefined) => url?.startsWith('/peer') === true
  /** Answers a node:http request; reads the peer chain with `peer` when the path asks for it. */
  const answer = (peer: (req: http.IncomingMessage) => unknown) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (peerRead(req.url)) peer(req)
    res.writeHead(200, headers)
    res.end(body)
  }
  const fromTlsSocket = (req: http.IncomingMessage) => readPeerChain(req.socket as tls.TLSSocket)

  switch (mode as FloorMode) {
    case 'bridge': {
      const httpServer = http.createServer({ keepAliveTimeout: 65_000 }, answer(fromTlsSocket))
      const tlsServer = tls.createServer(tlsOptions)
      tlsServer.on('secureConnection', (socket) => httpServer.emit('connection', socket))
      tlsServer.on('tlsClientError', () => {})
      tlsServer.listen(0, '127.0.0.1', () => listening((tlsServer.address() as AddressInfo).port))
      return
    }
    case 'bun':
    case 'bun-mtls': {
      const server = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        tls: mode === 'bun' ? { key, cert } : { key, cert, requestCert: true, rejectUnauthorized: false },
        fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
      })
      return listening(server.port as number)
    }
    case 'https': {
      // the chain cannot be read here (req.socket has no getPeerCertificate in Bun 1.4.5): readPeerChain answers []
      const server = https.createServer({ ...tlsOptions, keepAliveTimeout: 65_000 }, answer(fromTlsSocket))
      server.listen(0, '127.0.0.1', () => listening((server.address() as AddressInfo).port))
      return
    }
    case 'http2': {
      const server = http2.createSecureServer({ ...tlsOptions, allowHTTP1: true }, answer(fromTlsSocket) as never)
      server.listen(0, '127.0.0.1', () => listening((server.address() as AddressInfo).port))
      return
    }
    case 'listen': {
      const httpServer = http.createServer({ keepAliveTimeout: 65_000 }, answer((req) => readPeerChain((req.socket as unknown as { bun: tls.TLSSocket }).bun)))
      const server = listenBun(tlsOptions, (stream) => httpServer.emit('connection', stream))
      return listening(server.port)
    }
    case 'listener': {
      const listener = await startListener({
        host: '127.0.0.1',
        port: 0,
        tls: { key, cert },
        maxBodyBytes: 1 << 20,
        handle: async (call) => {
          if (call.target.startsWith('/peer')) void call.peer.certChainDer
          return { response: new Response(body, { headers: { 'content-type': 'application/json' } }), headers: [] }
        },
        log: () => {},
        logRequest: () => {},
      })
      return listening(listener.port)
    }
    default:
      console.error(`usage: floor-server.ts <${FLOOR_MODES.join('|')}> <key.pem> <cert.pem> <body.json>`)
      process.exit(2)
  }
}

/** A Bun TLS socket seen as a node stream: what node:http reads requests from and writes answers to. */
class BunSocketStream extends Duplex {
  remoteAddress: string
  encrypted = true
  private pending: { bytes: Uint8Array; done: (e?: Error | null) => void } | undefined
  constructor(readonly bun: Bun.Socket<{ stream?: BunSocketStream }>) {
    super()
    this.remoteAddress = bun.remoteAddress
  }
  override _read(): void {
    this.bun.resume()
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (e?: Error | null) => void): void {
    const written = this.bun.write(chunk)
    if (written === chunk.length) return done()
    if (written < 0) return done(new Error('socket closed'))
    this.pending = { bytes: chunk.subarray(written), done }
  }
  /** The Bun socket can take more: write what was left of the last chunk. */
  drained(): void {
    const p = this.pending
    if (!p) return
    const written = this.bun.write(p.bytes)
    if (written === p.bytes.length) {
      this.pending = undefined
      p.done()
    } else if (written > 0) p.bytes = p.bytes.subarray(written)
  }
  override _final(done: (e?: Error | null) => void): void {
    this.bun.end()
    done()
  }
  override _destroy(error: Error | null, done: (e?: Error | null) => void): void {
    this.bun.end()
    done(error)
  }
  setTimeout(): this {
    return this
  }
  setNoDelay(): this {
    return this
  }
  setKeepAlive(): this {
    return this
  }
}

/** Bun.listen with TLS; each connection, once its handshake is done, becomes a stream handed to `onConnection`. */
function listenBun(options: { key: string; cert: string }, onConnection: (stream: BunSocketStream) => void): { port: number } {
  return Bun.listen<{ stream?: BunSocketStream }>({
    hostname: '127.0.0.1',
    port: 0,
    tls: { key: options.key, cert: options.cert, requestCert: true, rejectUnauthorized: false },
    socket: {
      open(socket) {
        socket.data = {}
      },
      handshake(socket, success) {
        if (!success) return void socket.end()
        const stream = new BunSocketStream(socket)
        socket.data.stream = stream
        onConnection(stream)
      },
      data(socket, data) {
        if (socket.data.stream && !socket.data.stream.push(data)) socket.pause()
      },
      drain(socket) {
        socket.data.stream?.drained()
      },
      end(socket) {
        socket.data.stream?.push(null)
      },
      close(socket) {
        const stream = socket.data.stream
        if (stream && !stream.destroyed) stream.destroy()
      },
      error(socket) {
        socket.data.stream?.destroy()
      },
    },
  })
}
