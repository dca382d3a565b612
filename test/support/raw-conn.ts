/**
 * A raw TLS (or plain TCP) connection to a listener, for the transport's tests: write anything in any pieces, and see
 * what came back and whether (and how) the server closed it. Unlike raw-http.ts it keeps the connection open.
 */
import net from 'node:net'
import tls from 'node:tls'

export interface RawConn {
  socket: net.Socket
  /** Everything received so far, as text. */
  received(): string
  /** The status of the first answer received (0 before one). */
  status(): number
  /** Resolves once the server closed the connection (or it failed); `error` is the socket's error code, if any. */
  closed: Promise<{ error?: string }>
  isClosed(): boolean
  /** Resolves once `text` has been received (rejects if the connection closes first). */
  waitFor(text: string): Promise<void>
  /** Writes, resolving once the data has been handed on (or the connection is gone). */
  write(data: string | Uint8Array): Promise<boolean>
  close(): void
}

function wrap(socket: net.Socket, ready: Promise<void>): Promise<RawConn> {
  let text = ''
  let closedFlag = false
  let error: string | undefined
  const waiters: { text: string; resolve: () => void; reject: (e: Error) => void }[] = []
  const check = () => {
    for (const w of [...waiters]) {
      if (text.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      } else if (closedFlag) {
        waiters.splice(waiters.indexOf(w), 1)
        w.reject(new Error(`closed before "${w.text}" came; received: ${text.slice(0, 300)}`))
      }
    }
  }
  socket.on('data', (d: Buffer) => {
    text += d.toString('latin1')
    check()
  })
  socket.on('error', (e: NodeJS.ErrnoException) => {
    error ??= e.code ?? e.message
  })
  const closed = new Promise<{ error?: string }>((resolve) =>
    socket.on('close', () => {
      closedFlag = true
      check()
      resolve({ error })
    }),
  )
  const conn: RawConn = {
    socket,
    received: () => text,
    status: () => Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0),
    closed,
    isClosed: () => closedFlag,
    waitFor: (t) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ text: t, resolve, reject })
        check()
      }),
    write: (data) =>
      new Promise<boolean>((resolve) => {
        if (closedFlag || socket.destroyed) return resolve(false)
        const flushed = socket.write(data, (err) => resolve(!err))
        void flushed
      }),
    close: () => socket.destroy(),
  }
  return ready.then(
    () => conn,
    (e) => {
      throw e
    },
  )
}

/** A TLS connection (the server's certificate is not checked); resolves once the handshake is done. */
export function openTls(port: number, opts: { cert?: string; key?: string; localAddress?: string } = {}): Promise<RawConn> {
  let socket!: tls.TLSSocket
  const ready = new Promise<void>((resolve, reject) => {
    socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost', ...opts }, () => resolve())
    socket.once('error', reject)
    socket.once('close', () => reject(new Error('closed before the TLS handshake ended')))
  })
  return wrap(socket, ready)
}

/** A plain TCP connection (for bytes that are not TLS); resolves once connected. */
export function openTcp(port: number, localAddress?: string): Promise<RawConn> {
  let socket!: net.Socket
  const ready = new Promise<void>((resolve, reject) => {
    socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve())
    socket.once('error', reject)
  })
  return wrap(socket, ready)
}

/** The chunked transfer coding of `body` in pieces of `piece` bytes, with the last chunk. */
export function chunked(body: Buffer, piece = 64 * 1024): Buffer {
  const parts: Buffer[] = []
  for (let i = 0; i < body.length; i += piece) {
    const c = body.subarray(i, i + piece)
    parts.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}
