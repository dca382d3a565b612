/**
 * Raw connections to a listener, for transport tests that fetch cannot express: bytes written in pieces, with pauses,
 * several requests in one write, a connection abandoned half-way, bytes that are not TLS at all. A connection collects
 * everything it receives; parseResponses splits that into HTTP/1.x answers (interim 1xx included).
 * Nothing here throws on a reset or a refused write: a server that drops a hostile connection is an outcome to check.
 * (The transport's tests share this one module: the fuzz, the connection limits, the listener's guards and crash.)
 */
import net from 'node:net'
import tls from 'node:tls'

export interface RawConn {
  socket: net.Socket
  /** Everything received so far. */
  received(): Buffer
  /** Everything received so far, as text (latin1: every byte one character). */
  text(): string
  /** The status of the first answer received (0 before one). */
  status(): number
  /** Whether the server closed (or reset) the connection. */
  isClosed(): boolean
  /** The first socket error seen (ECONNRESET, EPIPE, …), if any. */
  error(): Error | undefined
  /** Resolves once the connection is closed. */
  closed: Promise<void>
  /** Writes; resolves true once the bytes are handed to the kernel, false when the socket is gone or failed (never rejects). */
  write(bytes: string | Uint8Array): Promise<boolean>
  /** Waits until `done(received)` holds or the connection closes or `ms` pass; answers whether `done` held. */
  until(done: (received: Buffer) => boolean, ms: number): Promise<boolean>
  /** Resolves once `text` has been received; rejects when the connection closes first or `ms` pass. */
  waitFor(text: string, ms?: number): Promise<void>
  destroy(): void
}

function wrap(socket: net.Socket): RawConn {
  const chunks: Buffer[] = []
  let size = 0
  let joined: Buffer | undefined
  let closed = false
  let failure: Error | undefined
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const w of waiters) w()
  }
  socket.on('data', (d: Buffer) => {
    chunks.push(d)
    size += d.length
    joined = undefined
    wake()
  })
  socket.on('error', (e) => {
    failure ??= e
  })
  const closedPromise = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true
      wake()
      resolve()
    }),
  )
  const received = () => (joined ??= chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
  const text = () => received().toString('latin1')
  const until = (done: (received: Buffer) => boolean, ms: number) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (done(received())) finish(true)
        else if (closed) finish(false)
      }
      const timer = setTimeout(() => finish(done(received())), ms)
      const finish = (v: boolean) => {
        clearTimeout(timer)
        waiters.delete(check)
        resolve(v)
      }
      waiters.add(check)
      check()
    })
  return {
    socket,
    received,
    text,
    status: () => Number(/^HTTP\/1\.[01] (\d{3})/.exec(text())?.[1] ?? 0),
    isClosed: () => closed,
    error: () => failure,
    closed: closedPromise,
    write(bytes) {
      if (closed || socket.destroyed) return Promise.resolve(false)
      return new Promise((resolve) => {
        try {
          socket.write(bytes, (err) => resolve(!err))
        } catch {
          resolve(false)
        }
      })
    },
    until,
    async waitFor(wanted, ms = 10_000) {
      const needle = Buffer.from(wanted, 'latin1')
      if (!(await until((bytes) => bytes.includes(needle), ms))) {
        throw new Error(`"${wanted}" did not come (${closed ? 'closed' : `within ${ms} ms`}); received: ${text().slice(0, 300)}`)
      }
    },
    destroy: () => socket.destroy(),
  }
}

/** Options of a raw TLS connection: a client certificate, the local address to bind (other 127.x addresses). */
export interface RawTlsOptions {
  cert?: string
  key?: string
  localAddress?: string
  /** How long the handshake may take (default 10 s). */
  timeoutMs?: number
  /** ALPN protocols to offer (default none). */
  alpn?: string[]
}

/** A TLS connection to 127.0.0.1:`port` (server certificate not checked), once the handshake is done. */
export function openTls(port: number, opts: RawTlsOptions = {}): Promise<RawConn> {
  const { timeoutMs = 10_000, alpn, ...client } = opts
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost', ...client, ...(alpn ? { ALPNProtocols: alpn } : {}) })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`TLS handshake with port ${port} not done within ${timeoutMs} ms`))
    }, timeoutMs)
    const conn = wrap(socket)
    socket.once('secureConnect', () => {
      clearTimeout(timer)
      resolve(conn)
    })
    socket.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    socket.once('close', () => {
      clearTimeout(timer)
      reject(new Error(`connection to port ${port} closed before the TLS handshake was done`))
    })
  })
}

/** A plain TCP connection to 127.0.0.1:`port` (for bytes that are not TLS), once connected. */
export function openTcp(port: number, localAddress?: string): Promise<RawConn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress })
    const conn = wrap(socket)
    socket.once('connect', () => resolve(conn))
    socket.once('error', reject)
  })
}

/** The chunked transfer coding of `body` in chunks of `chunk` bytes, with the last chunk unless `unterminated`. */
export function chunked(body: Buffer, chunk = 64 * 1024, unterminated = false): Buffer {
  const parts: Buffer[] = []
  for (let at = 0; at < body.length; at += chunk) {
    const piece = body.subarray(at, at + chunk)
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'))
  }
  if (!unterminated) parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: Buffer
  /** The bytes ended inside its body (the connection closed early, or it answered a HEAD as the last answer). */
  partial?: true
}

/**
 * The HTTP/1.x answers in `bytes`, in order: 1xx answers have no body; a body is framed by content-length, chunked
 * coding, or (neither) the rest of the bytes. An answer to HEAD has a content-length and no body: a "body" that
 * starts with the next status line is taken as such. An answer whose body the bytes cut short is included, `partial`.
 * `complete` says whether the bytes ended exactly after the last answer.
 */
export function parseResponses(bytes: Buffer): { responses: RawResponse[]; complete: boolean } {
  const responses: RawResponse[] = []
  let at = 0
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at, 'latin1')
    if (end < 0) return { responses, complete: false }
    const lines = bytes.subarray(at, end).toString('latin1').split('\r\n')
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0])
    if (!m) return { responses, complete: false }
    const status = Number(m[1])
    const headers: Record<string, string> = {}
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    at = end + 4
    if (status < 200) {
      responses.push({ status, headers, body: Buffer.alloc(0) })
      continue
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length'])
      if (bytes.subarray(at, at + 7).toString('latin1') === 'HTTP/1.') {
        responses.push({ status, headers, body: Buffer.alloc(0) })
        continue
      }
      if (at + length > bytes.length) {
        responses.push({ status, headers, body: bytes.subarray(at), partial: true })
        return { responses, complete: false }
      }
      responses.push({ status, headers, body: bytes.subarray(at, at + length) })
      at += length
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = []
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', at, 'latin1')
        if (lineEnd < 0) return { responses, complete: false }
        const n = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16)
        if (Number.isNaN(n)) return { responses, complete: false }
        at = lineEnd + 2
        if (n === 0) {
          const trailerEnd = bytes.indexOf('\r\n', at, 'latin1')
          at = trailerEnd < 0 ? bytes.length : trailerEnd + 2
          break
        }
        parts.push(bytes.subarray(at, at + n))
        at += n + 2
      }
      responses.push({ status, headers, body: Buffer.concat(parts) })
    } else {
      responses.push({ status, headers, body: bytes.subarray(at) })
      at = bytes.length
    }
  }
  return { responses, complete: true }
}

/** Whether `bytes` hold at least `n` whole final (non-1xx) answers. */
export function hasFinalAnswers(bytes: Buffer, n: number): boolean {
  return parseResponses(bytes).responses.filter((r) => r.status >= 200 && !r.partial).length >= n
}
