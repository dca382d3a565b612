/**
 * The HTTPS listener: a node:tls server that requests (not requires) a client certificate, whose sockets are handed
 * to a node:http server; each request becomes a fetch Request (with its peer info beside it) for the Elysia app.
 * Bun.serve cannot expose the peer certificate, hence this bridge. Bodies over the limit are refused with 413 here.
 */
import http from 'node:http'
import tls from 'node:tls'
import type { AddressInfo, Socket } from 'node:net'
import { renderedBody } from './http-body.ts'
import { attachPeer, readPeerChain } from './peer-cert.ts'

export interface ListenerOptions {
  host: string
  port: number
  tls: { key: string; cert: string; ca?: string }
  maxBodyBytes: number
  handle: (req: Request) => Promise<Response>
  /** Renders the 413 answer (the app's error envelope). */
  tooLarge: () => Response
}

export interface Listener {
  port: number
  /** Stops accepting, waits for in-flight requests, closes idle keep-alive sockets. */
  close(): Promise<void>
}

export async function startListener(opts: ListenerOptions): Promise<Listener> {
  const sockets = new Set<Socket>()
  let inflight = 0
  let closing = false
  let drained: (() => void) | undefined

  const httpServer = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    inflight++
    void serve(req, res).finally(() => {
      inflight--
      if (closing && inflight === 0) drained?.()
    })
  })

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const method = req.method ?? 'GET'
      let body: Buffer | undefined
      if (method !== 'GET' && method !== 'HEAD') {
        const declared = Number(req.headers['content-length'] ?? '0')
        if (declared > opts.maxBodyBytes) return await write(res, opts.tooLarge(), true)
        const chunks: Buffer[] = []
        let size = 0
        for await (const chunk of req) {
          size += (chunk as Buffer).length
          if (size > opts.maxBodyBytes) return await write(res, opts.tooLarge(), true)
          chunks.push(chunk as Buffer)
        }
        body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      }
      const headers = new Headers()
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
      const host = req.headers.host ?? `${opts.host}:${opts.port}`
      const request = new Request(`https://${host}${req.url ?? '/'}`, {
        method,
        headers,
        body: body && body.length > 0 ? body : undefined,
      })
      const socket = req.socket as tls.TLSSocket
      attachPeer(request, { certChainDer: readPeerChain(socket), remoteAddress: socket.remoteAddress ?? '' })
      await write(res, await opts.handle(request), false)
    } catch (e) {
      console.error('listener failure:', e)
      if (!res.headersSent) {
        res.statusCode = 500
        res.end()
      }
    }
  }

  async function write(res: http.ServerResponse, response: Response, closeAfter: boolean): Promise<void> {
    res.statusCode = response.status
    response.headers.forEach((value, key) => res.setHeader(key, value))
    if (closeAfter) res.setHeader('connection', 'close')
    const rendered = renderedBody(response)
    if (rendered) {
      const { bytes } = rendered
      res.setHeader('content-length', bytes.length)
      // the buffer goes back to its pool only once the answer has been written out
      res.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), () => rendered.release())
      return
    }
    const buf = response.body ? Buffer.from(await response.arrayBuffer()) : undefined
    if (buf) res.setHeader('content-length', buf.length)
    res.end(buf)
  }

  const tlsServer = tls.createServer({
    key: opts.tls.key,
    cert: opts.tls.cert,
    ca: opts.tls.ca,
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
  })
  tlsServer.on('secureConnection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    httpServer.emit('connection', socket)
  })
  tlsServer.on('tlsClientError', () => {})

  await new Promise<void>((resolve, reject) => {
    tlsServer.once('error', reject)
    tlsServer.listen(opts.port, opts.host, () => resolve())
  })
  const port = (tlsServer.address() as AddressInfo).port

  return {
    port,
    async close() {
      closing = true
      const closed = new Promise<void>((resolve) => tlsServer.close(() => resolve()))
      if (inflight > 0) await new Promise<void>((r) => (drained = r))
      for (const s of sockets) s.destroy()
      httpServer.close()
      await closed
    },
  }
}
