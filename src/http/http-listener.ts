/**
 * The HTTPS listener: a node:tls server that requests (not requires) a client certificate, whose sockets are handed
 * to a node:http server; each request is handed to the app as a call (http-call.ts: method, target, headers, body,
 * peer info), and its answer written with the app's common headers in one go.
 * Bun.serve cannot expose the peer certificate, hence this bridge. Rules kept here:
 * - Every request gets one request id, passed to the app, and one log line once it is answered.
 * - Bodies over the limit are refused with 413, declared or not (chunked): the connection is no longer read and is
 *   closed once the answer is out. A malformed Host header or request target is answered 400, more headers than
 *   allowed 431 (as the parser answers too many header bytes).
 * - Connections are counted and bounded (http-connections.ts): past a limit a new one is closed at once; one past its
 *   phase's deadline is closed by the sweep (408 first when it was sending a request).
 * - The request URL is built from the listener's own address (the Host header names nothing we serve otherwise);
 *   a request line in absolute form (`GET https://host/path`) contributes only its path and query.
 * - Whatever fails here is answered 500 UNHANDLED in the error envelope, never with an empty body, while the socket
 *   can be written; else the request ends silently. The failure is logged once, with the request id.
 * - No exception leaves a listener callback (requests, sockets, the servers, the sweep, the log sink): one is logged
 *   and ends at most its own request or connection, never the process.
 * - With `controlSocket`, a connection that negotiated ALPN `ziti-ctrl` is handed to the control plane after its
 *   handshake and leaves the connection table (single port: routers and clients on one address).
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
import type { ConnectionObserver } from './http-metrics.ts'
import { guard } from './http-guard.ts'
import { describeThrown } from '../lib/describe-thrown.ts'
import {
  answered, awaitingBody, bodyIn, closing, writing, CONNECTION_LIMIT_DEFAULTS, ConnectionTable, handshaken, Phase, PHASE_NAMES, requestIn, sweepEveryMs,
  type Conn, type ConnectionLimits,
} from './http-connections.ts'
import type { Answer, IncomingCall } from './http-call.ts'

export interface ListenerOptions {
  host: string
  port: number
  tls: { key: string; cert: string; ca?: string }
  maxBodyBytes: number
  /** Connection limits and timeouts (unset members: CONNECTION_LIMIT_DEFAULTS). */
  limits?: Partial<ConnectionLimits>
  handle: (call: IncomingCall) => Promise<Answer>
  /** Where the request log lines and listener failures go. */
  log: (line: string) => void
  /** Where each answered request is reported as fields (a structured log); absent: a line through `log`. */
  logRequest?: (r: AnsweredRequest) => void
  /** Told of connections refused at a limit and closed past a deadline (the metrics). */
  observe?: ConnectionObserver
  /**
   * Takes the connections whose handshake negotiated ALPN `ziti-ctrl` (a router's control channel on the API port);
   * when set, the listener offers `http/1.1` and `ziti-ctrl`, and such a connection leaves the HTTP side at once.
   */
  controlSocket?: (socket: tls.TLSSocket) => void
}

/** The ALPN protocols of the API port when it also takes routers: HTTP/1.1 first (never h2: it is not spoken here). */
export const API_ALPN_WITH_CONTROL = ['http/1.1', 'ziti-ctrl']

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
  /** Connections open now, TLS handshakes included. */
  openConnections(): number
  /** Stops accepting, waits for in-flight requests, closes idle keep-alive sockets. */
  close(): Promise<void>
}

/** Where a socket's connection-table entry is kept (the TLS server's socket is the one the requests see). */
const CONN = Symbol('edgeplane.conn')
type TrackedSocket = tls.TLSSocket & { [CONN]?: Conn<tls.TLSSocket> }

/** A body that will not be read: too large, or its request was aborted or timed out. */
const TOO_LARGE = Symbol('too large')
const GONE = Symbol('gone')

/** Answers written straight to a socket, outside any request (the parser refused it, or it overstayed). */
const RAW_ANSWER = {
  400: 'HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
  408: 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
  431: 'HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n',
} as const

/** An error answer in the envelope (the one renderApiError makes) as raw bytes, for a socket outside node:http's response. */
function rawEnvelope(err: ApiError): Buffer {
  const res = renderApiError(err)
  const body = renderedBody(res)!.bytes
  const head = `HTTP/1.1 ${res.status} ${http.STATUS_CODES[res.status] ?? 'Error'}\r\ncontent-type: ${res.headers.get('content-type')}\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n`
  return Buffer.concat([Buffer.from(head, 'latin1'), body])
}

/** Socket errors that only say the client went away: not worth a log line. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_SOCKET_CLOSED', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END'])

/**
 * Whether a socket error is the TLS layer refusing what the client sent (bytes that are not TLS, a malformed
 * ClientHello, no shared cipher or group, a record that does not decrypt): the client's fault, met by closing its
 * connection, never an error of ours. OpenSSL/BoringSSL errors carry `SSL routines` in the message, or an
 * `ERR_SSL_*` code.
 */
function isClientTlsError(e: NodeJS.ErrnoException): boolean {
  return (e.code ?? '').startsWith('ERR_SSL_') || /SSL routines/.test(String(e.message))
}

export async function startListener(opts: ListenerOptions): Promise<Listener> {
  const limits: ConnectionLimits = { ...CONNECTION_LIMIT_DEFAULTS, ...opts.limits }
  const table = new ConnectionTable<TrackedSocket>(limits, (socket) => socket.bytesRead)
  let inflight = 0
  let stopping = false
  let drained: (() => void) | undefined

  /** Logs a failure of the listener itself; a failing log sink is the end of the line (never thrown on). */
  const report = (line: string) => {
    try {
      opts.log(line)
    } catch {
      // the log sink failed too: nothing is left to tell
    }
  }
  const guarded = <A extends unknown[]>(what: string, fn: (...args: A) => void, socketOf?: (...args: A) => Socket | undefined) =>
    guard(report, what, fn, socketOf)
  /** The socket of a listener whose first argument is it; the one of `(error, socket)` listeners. */
  const first = (socket: Socket) => socket
  const second = (_e: unknown, socket?: Socket) => socket

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    inflight++
    const done = () => {
      inflight--
      if (stopping && inflight === 0) drained?.()
    }
    serve(req, res).then(done, (e) => {
      report(`error: listener: a request failed outside its guard: ${describeThrown(e)}`)
      done()
    })
  }
  // Bun 1.4.5's node:http honours maxHeaderSize (431 past it) but none of headersTimeout, requestTimeout and
  // keepAliveTimeout on these sockets (a silent or dribbling client stayed connected): the connection table keeps them
  const httpServer = http.createServer({ maxHeaderSize: limits.maxHeaderBytes }, onRequest)
  // `Expect: 100-continue`: the client is told to go on only with a body it may send; one declared over the limit is
  // answered 413 at once instead
  httpServer.on(
    'checkContinue',
    guarded('an Expect: 100-continue', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (!(Number(req.headers['content-length'] ?? '0') > opts.maxBodyBytes)) res.writeContinue()
      onRequest(req, res)
    }),
  )
  /** Ends a connection with a raw answer (outside node:http's response) as the server closing it. */
  const endWith = (socket: Socket, answer: string | Uint8Array) => {
    if (!socket.writable) return void socket.destroy()
    socket.end(answer)
    const conn = (socket as TrackedSocket)[CONN]
    if (conn) closing(conn, performance.now())
    else socket.destroy()
  }
  // the parser refused a request (malformed, or its headers over maxHeaderBytes): answered as Bun's parser does by
  // itself (431 or 400, no body), then closed
  httpServer.on(
    'clientError',
    guarded('a parser refusal', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (CLIENT_GONE.has(err.code ?? '')) return void socket.destroy()
      endWith(socket, err.code === 'HPE_HEADER_OVERFLOW' ? RAW_ANSWER[431] : RAW_ANSWER[400])
    }, second),
  )
  // CONNECT (a proxy's verb: `CONNECT host:port` or a path) is no request of ours: node:http hands it to 'connect'
  // listeners and, with none, closes the socket without a word. It is answered 405 in the error envelope, then closed.
  httpServer.on(
    'connect',
    guarded('a CONNECT request', (_req: http.IncomingMessage, socket: Socket) => endWith(socket, rawEnvelope(new ApiError('METHOD_NOT_ALLOWED'))), second),
  )
  // what the Keep-Alive header of an answer tells the client (the connection table enforces it)
  httpServer.keepAliveTimeout = limits.keepAliveTimeoutMs
  httpServer.on('error', guarded('the HTTP server', (e: unknown) => report(`error: listener: HTTP server: ${describeThrown(e)}`)))

  let origin = ''

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const startedAt = performance.now()
    const requestId = newShortId()
    const method = req.method ?? 'GET'
    const path = targetPath(req.url ?? '')
    const socket = req.socket as TrackedSocket | null
    const conn = socket?.[CONN]
    if (conn) requestIn(conn, startedAt)
    // the request's log line, once its answer has been written out; then the connection waits for its next request,
    // or, answered with `connection: close`, is closed (a body not read stays unread)
    const written = (closeAfter: boolean) => () => {
      try {
        const ms = performance.now() - startedAt
        const bare = (path ?? req.url ?? '').split('?')[0]
        if (opts.logRequest) {
          opts.logRequest({ requestId, method, path: bare, status: res.statusCode, ms: Math.round(ms * 10) / 10, remoteAddress: conn?.address ?? '' })
        } else opts.log(`request ${requestId} ${method} ${bare} ${res.statusCode} ${ms.toFixed(1)}ms`)
      } catch (e) {
        report(`request ${requestId} unhandled error in its log line: ${describeThrown(e)}`)
      }
      if (!conn) return
      const now = performance.now()
      answered(conn, now)
      if (closeAfter) {
        closing(conn, now)
        conn.socket.end()
      }
    }
    const refuse = (e: ApiError) => {
      // nothing more of this connection is read
      socket?.pause()
      return write(res, conn, renderApiError(e, requestId), [], true, written(true))
    }
    try {
      if (path === undefined) {
        return await refuse(ApiError.invalidField('target', 'the request target is neither a path nor an absolute https URL', req.url ?? ''))
      }
      const raw = req.rawHeaders
      if (raw.length > 2 * limits.maxHeaders) return refuseRaw(res, socket, 431, written(true))
      const headers = new Headers()
      let hosts: string[] | undefined
      // a body is declared by its length or sent chunked; GET and HEAD have none unless so declared
      let declared: string | undefined
      let chunkedBody = false
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i]
        headers.append(name, raw[i + 1])
        if (name.length === 4 && name.toLowerCase() === 'host') (hosts ??= []).push(raw[i + 1])
        else if (name.length === 14 && name.toLowerCase() === 'content-length') declared = raw[i + 1]
        else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') chunkedBody = true
      }
      if (hosts && (hosts.length > 1 || (hosts[0] !== '' && !isValidHostHeader(hosts[0])))) {
        return await refuse(ApiError.invalidField('host', 'the Host header is not a valid host[:port]', hosts.join(', ')))
      }
      let body: Buffer | undefined
      const bodiless = method === 'GET' || method === 'HEAD'
      if (!bodiless || chunkedBody || (declared !== undefined && declared !== '0')) {
        if (Number(declared ?? '0') > opts.maxBodyBytes) return await refuse(new ApiError('REQUEST_ENTITY_TOO_LARGE'))
        if (conn) awaitingBody(conn)
        const read = await readBody(req, opts.maxBodyBytes)
        // the client went away, or the connection overstayed and is being closed: nobody is left to answer
        if (read === GONE || (conn && conn.phase === Phase.Closing)) return
        if (read === TOO_LARGE) return await refuse(new ApiError('REQUEST_ENTITY_TOO_LARGE'))
        if (conn) bodyIn(conn)
        // a body sent with a GET or HEAD is read (within the limit, so the next request on the connection can be) and ignored
        if (!bodiless) body = read
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
      await write(res, conn, answer.response, answer.headers, false, written(false))
    } catch (e) {
      if (res.headersSent || !socket || !socket.writable) {
        // the answer cannot be written (any more): the request ends here, its error logged once
        report(`request ${requestId} unhandled error on ${method} ${path ?? '?'} after its answer was begun or its connection lost: ${describeThrown(e)}`)
        socket?.destroy()
        return
      }
      try {
        await write(res, conn, renderThrown(e, { method, path: path ?? '?', requestId }, report), [], true, written(true))
      } catch (again) {
        report(`request ${requestId} unhandled error while writing its 500 answer: ${describeThrown(again)}`)
        socket.destroy()
      }
    }
  }

  /**
   * The body of a request, up to `max` bytes; TOO_LARGE as soon as it passes them (the connection then stops being
   * read: the rest is never received), GONE when the request was aborted before its end.
   */
  function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | typeof TOO_LARGE | typeof GONE> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = []
      let size = 0
      let settled = false
      const settle = (v: Buffer | typeof TOO_LARGE | typeof GONE) => {
        if (settled) return
        settled = true
        resolve(v)
      }
      req.on('data', (chunk: Buffer) => {
        if (settled) return
        size += chunk.length
        if (size > max) {
          req.socket?.pause()
          req.pause()
          return settle(TOO_LARGE)
        }
        chunks.push(chunk)
      })
      req.on('end', () => settle(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)))
      req.on('error', () => settle(GONE))
      req.on('close', () => {
        if (!req.complete) settle(GONE)
      })
    })
  }

  /** Refuses a request with a bodiless answer (as the parser's own refusals are), closing the connection after it. */
  function refuseRaw(res: http.ServerResponse, socket: Socket | null, status: 431, written: () => void): void {
    socket?.pause()
    res.writeHead(status, ['connection', 'close', 'content-length', '0'])
    res.end(written)
  }

  /**
   * Writes an answer: its status and headers (the response's own, then `extra`) in one `writeHead`, and its body; the
   * socket corked around both when the body is small (CORK_MAX_BYTES).
   */
  async function write(
    res: http.ServerResponse,
    conn: Conn<TrackedSocket> | undefined,
    response: Response,
    extra: readonly string[],
    closeAfter: boolean,
    written: () => void,
  ): Promise<void> {
    const rendered = renderedBody(response)
    const buf = rendered ? undefined : response.body ? Buffer.from(await response.arrayBuffer()) : undefined
    if (conn) writing(conn, performance.now())
    const headers: string[] = []
    response.headers.forEach((value, key) => headers.push(key, value))
    for (const h of extra) headers.push(h)
    if (closeAfter) headers.push('connection', 'close')
    const size = rendered ? rendered.bytes.length : (buf?.length ?? 0)
    const socket = size > CORK_MAX_BYTES ? null : res.socket
    socket?.cork()
    try {
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
    } finally {
      socket?.uncork()
    }
  }

  /** Closes the connections past their phase's deadline: one that was sending a request is told 408 first. */
  const sweep = guarded('the connection sweep', () => {
    const now = performance.now()
    for (const conn of table.sweep(now)) {
      const socket = conn.socket
      try {
        if (conn.phase !== Phase.Closing) opts.observe?.timedOut(PHASE_NAMES[conn.phase])
        const midRequest = conn.phase === Phase.Headers || conn.phase === Phase.Body
        if (midRequest && conn.inflight <= 1 && socket.writable) {
          socket.pause()
          closing(conn, now)
          socket.end(RAW_ANSWER[408])
        } else {
          table.release(conn)
          socket.destroy()
        }
      } catch (e) {
        report(`error: listener: closing a connection past its deadline failed: ${describeThrown(e)}`)
        table.release(conn)
      }
    }
    refusedSinceNote += table.takeRefused()
    if (refusedSinceNote > 0 && now - lastRefusalNote >= 60_000) {
      report(`warning: ${refusedSinceNote} new connections refused: the limit of ${limits.maxConnections} open connections, or of ${limits.maxConnectionsPerAddress} from one address, was reached`)
      lastRefusalNote = now
      refusedSinceNote = 0
    }
  })
  // refused connections are noted at most once a minute (a flood of them must not flood the log)
  let lastRefusalNote = -Infinity
  let refusedSinceNote = 0
  const sweeper = setInterval(sweep, sweepEveryMs(limits))
  sweeper.unref?.()

  const tlsServer = tls.createServer({
    key: opts.tls.key,
    cert: opts.tls.cert,
    ca: opts.tls.ca,
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    // the handshake's deadline is the sweep's (Bun's own handshakeTimeout reports a tlsClientError and leaves the socket open)
    handshakeTimeout: 0,
    // a client that offers ALPN without either is refused in the handshake (as a Go server refuses it); one that
    // offers none gets HTTP
    ...(opts.controlSocket ? { ALPNProtocols: API_ALPN_WITH_CONTROL } : {}),
  })
  // every accepted TCP connection, before its handshake: counted, or refused at once past a limit
  tlsServer.on(
    'connection',
    guarded('accepting a connection', (socket: TrackedSocket) => {
      const conn = table.admit(socket, socket.remoteAddress ?? '', performance.now())
      if (!conn) {
        socket.destroy()
        opts.observe?.refused()
        return
      }
      socket[CONN] = conn
      socket.on(
        'error',
        guarded('a socket error', (e: NodeJS.ErrnoException) => {
          // the connection closes; a client that went away, or whose TLS the TLS layer refused, is not our error
          if (CLIENT_GONE.has(e.code ?? '') || isClientTlsError(e)) return
          report(`warning: listener: connection from ${conn.address}: ${describeThrown(e)}`)
        }),
      )
      socket.once('close', guarded('a socket close', () => table.release(conn)))
    }, first),
  )
  tlsServer.on(
    'secureConnection',
    guarded('a TLS connection', (socket: TrackedSocket) => {
      const conn = socket[CONN]
      if (opts.controlSocket && socket.alpnProtocol === 'ziti-ctrl') {
        // a router's control channel: no longer an HTTP connection (its deadlines and limits are the control plane's)
        if (conn) table.release(conn)
        socket[CONN] = undefined
        opts.controlSocket(socket)
        return
      }
      if (conn) handshaken(conn, performance.now(), socket.bytesRead)
      httpServer.emit('connection', socket)
    }, first),
  )
  tlsServer.on(
    'tlsClientError',
    guarded('a TLS handshake failure', (_e: unknown, socket?: Socket) => {
      socket?.destroy()
    }, second),
  )

  await new Promise<void>((resolve, reject) => {
    tlsServer.once('error', reject)
    tlsServer.listen(opts.port, opts.host, () => {
      tlsServer.off('error', reject)
      resolve()
    })
  })
  // after the start, an error of the server (an accept that failed: out of file descriptors) is logged, never thrown
  tlsServer.on('error', guarded('the TLS server', (e: unknown) => report(`error: listener: TLS server: ${describeThrown(e)}`)))
  const port = (tlsServer.address() as AddressInfo).port
  origin = `https://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`

  return {
    port,
    openConnections: () => table.size,
    async close() {
      stopping = true
      clearInterval(sweeper)
      const closed = new Promise<void>((resolve) => tlsServer.close(() => resolve()))
      if (inflight > 0) await new Promise<void>((r) => (drained = r))
      for (const socket of table.sockets()) socket.destroy()
      httpServer.close()
      await closed
    },
  }
}
