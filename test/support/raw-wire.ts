/**
 * Raw connections to a listener, for transport tests that fetch cannot express: bytes written in pieces, with pauses,
 * several requests in one write, a connection abandoned half-way, bytes that are not TLS at all. A connection collects
 * everything it receives; parseResponses splits that into HTTP/1.x answers (interim 1xx included).
 * Nothing here throws on a reset or a refused write: a server that drops a hostile connection is an outcome to check.
 */
import net from 'node:net'
import tls from 'node:tls'

export interface RawConn {
  socket: net.Socket
  /** Everything received so far. */
  received(): Buffer
  /** Whether the server closed (or reset) the connection. */
  isClosed(): boolean
  /** The first socket error seen (ECONNRESET, EPIPE, …), if any. */
  error(): Error | undefined
  /** Resolves once the connection is closed. */
  closed: Promise<void>
  /** Writes, resolving once the bytes are handed to the kernel or the socket has failed (never rejects). */
  write(bytes: string | Uint8Array): Promise<void>
  /** Waits until `done(received)` holds or the connection closes or `ms` pass; answers whether `done` held. */
  until(done: (received: Buffer) => boolean, ms: number): Promise<boolean>
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
  return {
    socket,
    received,
    isClosed: () => closed,
    error: () => failure,
    closed: closedPromise,
    write(bytes) {
      if (closed || socket.destroyed) return Promise.resolve()
      return new Promise((resolve) => {
        try {
          socket.write(bytes, () => resolve())
        } catch {
          resolve()
        }
      })
    },
    until(done, ms) {
      return new Promise((resolve) => {
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
    },
    destroy: () => socket.destroy(),
  }
}

/** A TLS connection to 127.0.0.1:`port` (server certificate not checked), once the handshake is done. */
export function openTls(port: number, client?: { cert: string; key: string }, timeoutMs = 10_000): Promise<RawConn> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost', ...client })
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

/** A plain TCP connection to 127.0.0.1:`port`, once connected. */
export function openTcp(port: number): Promise<RawConn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const conn = wrap(socket)
    socket.once('connect', () => resolve(conn))
    socket.once('error', reject)
  })
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
