/**
 * The HTTPS listener: a node:tls server that requests (not requires) a client certificate, whose sockets are handed
 * to a node:http server; each request is handed to the app as a call (http-call.ts: method, target, headers, body,
 * peer info), and its answer written with the app's common headers in one go.
 * Bun.serve cannot expose the peer certificate, hence this bridge. Rules kept here:
 * - Every request gets one request id, passed to the app, and one log line once it is answered.
 * - Bodies over the limit are refused with 413; a malformed Host header or request target with 400.
 * - The request URL is built from the listener's own address (the Host header names nothing we serve otherwise);
 *   a request line in absolute form (`GET https://host/path`) contributes only its path and query.
 * - Whatever fails here is answered 500 UNHANDLED in the error envelope, never with an empty body.
 */
import http from 'node:http'
import tls from 'node:tls'
import type { AddressInfo, Socket } from 'node:net'
import { ApiError } from '../errors/api-error.ts'
import { newShortId } from '../lib/ids.ts'
import type { RequestLine } from '../lib/logger.ts'
import { renderedBody } from './http-body.ts'
import { renderApiError, renderThrown } from './http-errors.ts'
import { peerOfSocket } from './peer-cert.ts'
import type { Answer, IncomingCall } from './http-call.ts'

export interface ListenerOptions {
  host: string
  port: number
  tls: { key: string; cert: string; ca?: string }
  maxBodyBytes: number
  handle: (call: IncomingCall) => Promise<Answer>
  /** Where the request log lines and listener failures go. */
  log: (line: string) => void
  /** Where each answered request is reported as fields (a structured log); absent: a line through `log`. */
  logRequest?: (r: AnsweredRequest) => void
}

/** One answered request, as its log line says it: never its headers, query or body. */
export type AnsweredRequest = RequestLine

/**
 * Answers up to this size leave with their head in one TLS record and one system call (the socket corked around
 * both). A corked socket joins what was written into one new buffer when uncorked: for a service list of a MiB that
 * copy and its garbage cost more CPU than the second system call saves, and bodies beyond a TLS record's 16 KiB are
 * split into several records anyway.
 */
export const CORK_MAX_BYTES = 16 * 1024

/** `host[:port]` of RFC 9110 §7.2: a registered name, an IPv4 address or a bracketed IPv6 literal, a port up to 65535 (may be empty). */
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{0,5}))?$/

/** Whether a Host header value is a well-formed authority. */
export function isValidHostHeader(value: string): boolean {
  const m = HOST_HEADER.exec(value)
  return m !== null && (m[1] === undefined || Number(m[1]) <= 65535)
}

/** The path and query of a request target in origin form (`/p?q`) or absolute form (`https://h/p?q`); else undefined. */
export function targetPath(target: string): string | undefined {
  if (target.startsWith('/')) return target
  if (!/^https?:\/\//i.test(target)) return undefined
  try {
    const u = new URL(target)
    return u.pathname + u.search
  } catch {
    return undefined
  }
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

  let origin = ''

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const startedAt = performance.now()
    const requestId = newShortId()
    const method = req.method ?? 'GET'
    const path = targetPath(req.url ?? '')
    // the request's log line, once its answer has been written out
    const logged = () => {
      const ms = performance.now() - startedAt
      const bare = (path ?? req.url ?? '').split('?')[0]
      if (opts.logRequest) {
        opts.logRequest({ requestId, method, path: bare, status: res.statusCode, ms: Math.round(ms * 10) / 10, remoteAddress: req.socket.remoteAddress ?? '' })
      } else opts.log(`request ${requestId} ${method} ${bare} ${res.statusCode} ${ms.toFixed(1)}ms`)
    }
    const refuse = (e: ApiError) => write(res, renderApiError(e, requestId), [], true, logged)
    try {
      if (path === undefined) {
        return await refuse(ApiError.invalidField('target', 'the request target is neither a path nor an absolute https URL', req.url ?? ''))
      }
      const headers = new Headers()
      let hosts: string[] | undefined
      const raw = req.rawHeaders
      for (let i = 0; i < raw.length; i += 2) {
        headers.append(raw[i], raw[i + 1])
        if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') (hosts ??= []).push(raw[i + 1])
      }
      if (hosts && (hosts.length > 1 || (hosts[0] !== '' && !isValidHostHeader(hosts[0])))) {
        return await refuse(ApiError.invalidField('host', 'the Host header is not a valid host[:port]', hosts.join(', ')))
      }
      let body: Buffer | undefined
      if (method !== 'GET' && method !== 'HEAD') {
        const declared = Number(req.headers['content-length'] ?? '0')
        if (declared > opts.maxBodyBytes) return await refuse(new ApiError('REQUEST_ENTITY_TOO_LARGE'))
        const chunks: Buffer[] = []
        let size = 0
        for await (const chunk of req) {
          size += (chunk as Buffer).length
          if (size > opts.maxBodyBytes) return await refuse(new ApiError('REQUEST_ENTITY_TOO_LARGE'))
          chunks.push(chunk as Buffer)
        }
        body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      }
      const answer = await opts.handle({
        method,
        origin,
        target: path,
        headers,
        body: body && body.length > 0 ? body : undefined,
        peer: peerOfSocket(req.socket as tls.TLSSocket),
        requestId,
      })
      await write(res, answer.response, answer.headers, false, logged)
    } catch (e) {
      if (res.headersSent) {
        opts.log(`request ${requestId}: the answer failed after its headers were sent: ${String(e)}`)
        res.destroy()
        return
      }
      try {
        await write(res, renderThrown(e, { method, path: path ?? '?', requestId }, opts.log), [], true, logged)
      } catch {
        res.destroy()
      }
    }
  }

  /**
   * Writes an answer: its status and headers (the response's own, then `extra`) in one `writeHead`, and its body; the
   * socket corked around both when the body is small (CORK_MAX_BYTES).
   */
  async function write(res: http.ServerResponse, response: Response, extra: readonly string[], closeAfter: boolean, written: () => void): Promise<void> {
    const rendered = renderedBody(response)
    const buf = rendered ? undefined : response.body ? Buffer.from(await response.arrayBuffer()) : undefined
    const headers: string[] = []
    response.headers.forEach((value, key) => headers.push(key, value))
    for (const h of extra) headers.push(h)
    if (closeAfter) headers.push('connection', 'close')
    const size = rendered ? rendered.bytes.length : (buf?.length ?? 0)
    const socket = size > CORK_MAX_BYTES ? null : res.socket
    socket?.cork()
    if (rendered) {
      const { bytes } = rendered
      headers.push('content-length', String(bytes.length))
      res.writeHead(response.status, headers)
      // a pooled buffer goes back only once the answer has been written out
      res.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), () => {
        rendered.release()
        written()
      })
    } else {
      if (buf) headers.push('content-length', String(buf.length))
      res.writeHead(response.status, headers)
      res.end(buf, written)
    }
    socket?.uncork()
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
  origin = `https://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`

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
