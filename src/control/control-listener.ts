/**
 * Where router connections come in: a TLS listener of its own (ALPN `ziti-ctrl`, `--ctrl-listen`) and sockets the
 * API listener hands over when a client negotiated `ziti-ctrl` on the API port. From the socket to an open channel:
 * hello, admission, the hello's answer, then frames into the channel. Rules kept here:
 * - A connection must finish its TLS handshake within handshakeTimeoutMs and send its hello within helloTimeoutMs
 *   of the handshake (the real channel's connectTimeout, 5 s), else it is closed without a word.
 * - Connections not yet admitted (handshaking, or before their hello's answer) are at most maxPending; past that a
 *   new one is closed at once. Admitted channels are not counted there.
 * - The hello is read with the hello caps (16384 header bytes, 4192 body bytes); later frames with FRAME_CAPS.
 *   Declared lengths past a cap close the connection before its bytes are read.
 * - Bad magic before the hello: the unknown-version answer (versions 1 and 2), then close. A first frame that is not
 *   a hello, or a refused admission: close without an answer (the reason goes to the log).
 * - The hello's answer: a Result (type 2, sequence -1, header 1 = -1, header 2 = true) with the node's headers
 *   (version, capabilities, controller id), a connection id (0), and, for a grouped hello, IsGrouped (9) and Type (7)
 *   echoed and a group secret (10), as the real listener answers: a grouped hello's own connection id and secret (a
 *   router redialing after it lost its connection) come back unchanged, else new ones are made.
 * - Admitted channels are ticked every second (heartbeats); the sweep never throws.
 * - Nothing here can end the process: every callback is guarded and a failure closes at most its own connection.
 */
import tls from 'node:tls'
import { randomBytes } from 'node:crypto'
import type { AddressInfo, Socket } from 'node:net'
import { newShortId } from '../lib/ids.ts'
import { describeThrown } from '../lib/describe-thrown.ts'
import { ControlChannel, type ChannelObserver, type ChannelTransport } from './channel/control-channel.ts'
import type { HeartbeatOptions } from './channel/control-heartbeat.ts'
import type { Admission } from './control-admission.ts'
import { ChannelContentType, ChannelHeader, encodeFrame, FRAME_CAPS, FrameError, HELLO_CAPS, HELLO_SEQUENCE, type Frame, type HeaderMap, unknownVersionAnswer } from './wire/control-frame.ts'
import { FrameReader } from './wire/control-reader.ts'
import { decodeString, encodeBool, encodeI32, encodeString, readBool } from './wire/control-headers.ts'

/** Refused admissions logged per minute. */
const REFUSALS_LOGGED = 20

/** The ALPN protocol of the control plane. */
export const CTRL_ALPN = 'ziti-ctrl'

export interface ControlLimits {
  /** From accepting a connection on the control port to the end of its TLS handshake. */
  handshakeTimeoutMs: number
  /** From the handshake to the hello (the real channel's connectTimeout). */
  helloTimeoutMs: number
  /** Connections not yet admitted, on both ports together. */
  maxPending: number
  /** How often admitted channels are ticked (heartbeats). */
  tickEveryMs: number
  /** Bytes waiting to be sent to a router past which it is closed as not reading. */
  maxBufferedBytes: number
}

export const CONTROL_LIMIT_DEFAULTS: Readonly<ControlLimits> = {
  handshakeTimeoutMs: 10_000,
  helloTimeoutMs: 5_000,
  maxPending: 1_024,
  tickEveryMs: 1_000,
  maxBufferedBytes: 8 * 1024 * 1024,
}

/** What an admitted connection becomes: the module registers it and binds its handlers. */
export interface AdmittedConnection {
  channel: ControlChannel
  admission: Extract<Admission, { ok: true }>
  hello: Frame
  remoteAddress: string
  connectionId: string
}

export interface ControlListenerOptions {
  limits: ControlLimits
  /** Decides a hello (control-admission.ts). */
  admit(hello: Frame, certChainDer: readonly Uint8Array[]): Promise<Admission>
  /** The node's headers of every hello answer: version (4), capabilities (1002), controller id (8). */
  answerHeaders(): HeaderMap
  /** Called with each admitted connection, after its hello was answered and before its next frame is read. */
  open(conn: AdmittedConnection): void
  heartbeat?: Partial<HeartbeatOptions>
  observer?: ChannelObserver
  log: (level: 'debug' | 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) => void
  /** Counts connections closed before admission, by why. */
  refused?: (reason: 'limit' | 'handshake-timeout' | 'hello-timeout' | 'bad-magic' | 'bad-frame' | 'not-hello' | 'admission') => void
}

export interface ControlListener {
  /** Takes a TLS socket whose handshake negotiated `ziti-ctrl` on another listener (the API port). */
  acceptSocket(socket: tls.TLSSocket): void
  /** Starts the listener of its own; answers its port. */
  listen(host: string, port: number, tlsOptions: { key: string; cert: string; ca?: string }): Promise<number>
  /** Connections not yet admitted. */
  pendingCount(): number
  /** Admitted channels open now. */
  channelCount(): number
  close(): Promise<void>
}

/** Reads the presented chain from a TLS socket (leaf first, stopping at a self-issued certificate). */
function peerChain(socket: tls.TLSSocket): Uint8Array[] {
  interface PeerCertLike {
    raw?: Buffer
    issuerCertificate?: PeerCertLike
  }
  const getter = (socket as unknown as { getPeerCertificate?: (detailed: boolean) => PeerCertLike | null }).getPeerCertificate
  if (typeof getter !== 'function') return []
  const out: Uint8Array[] = []
  const seen = new Set<PeerCertLike>()
  for (let c: PeerCertLike | undefined = getter.call(socket, true) ?? undefined; c && c.raw && !seen.has(c); c = c.issuerCertificate) {
    seen.add(c)
    out.push(new Uint8Array(c.raw))
  }
  return out
}

export function createControlListener(opts: ControlListenerOptions): ControlListener {
  const limits = opts.limits
  const pending = new Set<Socket>()
  const channels = new Set<ControlChannel>()
  /** Every socket this listener serves, admitted or not (destroyed when it closes). */
  const sockets = new Set<Socket>()
  let server: tls.Server | undefined
  let closing = false

  const guard = <A extends unknown[]>(what: string, fn: (...args: A) => void, socketOf?: (...args: A) => Socket | undefined) =>
    (...args: A) => {
      try {
        fn(...args)
      } catch (e) {
        opts.log('error', { err: describeThrown(e) }, `control listener: ${what} failed`)
        try {
          socketOf?.(...args)?.destroy()
        } catch {
          // the socket is gone already
        }
      }
    }

  /** Counts a connection as pending; false (and the socket closed) past the limit. */
  function admitPending(socket: Socket): boolean {
    if (closing || pending.size >= limits.maxPending) {
      opts.refused?.('limit')
      socket.destroy()
      return false
    }
    pending.add(socket)
    socket.once('close', () => pending.delete(socket))
    return true
  }

  // refused admissions are logged at warn, at most REFUSALS_LOGGED a minute (the rest counted, then said in one line):
  // a peer that keeps dialing must not flood the log
  let refusalWindowAt = -Infinity
  let refusalsLogged = 0
  let refusalsUnlogged = 0
  function refuse(socket: Socket, reason: Parameters<NonNullable<ControlListenerOptions['refused']>>[0], detail: string, fields: Record<string, unknown> = {}) {
    opts.refused?.(reason)
    const f = { remoteAddress: socket.remoteAddress ?? '', ...fields }
    if (reason !== 'admission') opts.log('debug', f, `control connection closed: ${detail}`)
    else {
      const now = performance.now()
      if (now - refusalWindowAt >= 60_000) {
        if (refusalsUnlogged > 0) opts.log('warn', { count: refusalsUnlogged }, 'control connections refused and not logged in the last minute')
        refusalWindowAt = now
        refusalsLogged = 0
        refusalsUnlogged = 0
      }
      if (refusalsLogged < REFUSALS_LOGGED) {
        refusalsLogged++
        opts.log('warn', f, `control connection closed: ${detail}`)
      } else refusalsUnlogged++
    }
    socket.destroy()
  }

  /** A TLS socket after its handshake: read the hello, admit, answer, open. */
  function serve(socket: tls.TLSSocket): void {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    const remoteAddress = socket.remoteAddress ?? ''
    const reader = new FrameReader(FRAME_CAPS, HELLO_CAPS)
    let hello: Frame | undefined
    let channel: ControlChannel | undefined
    // frames that came with the hello, before it was answered (a router waits; a hostile peer may not)
    let early: Frame[] = []
    const helloTimer = setTimeout(
      guard('a hello deadline', () => {
        if (!hello) refuse(socket, 'hello-timeout', `no hello within ${limits.helloTimeoutMs} ms`)
      }),
      limits.helloTimeoutMs,
    )
    helloTimer.unref?.()
    socket.on('error', () => {
      // a close follows; a connection that failed is not our error
    })
    socket.once('close', () => {
      clearTimeout(helloTimer)
      channel?.close('the connection closed')
    })
    socket.on(
      'data',
      guard('reading a control connection', (chunk: Buffer) => {
        let frames: Frame[]
        try {
          frames = reader.push(chunk)
        } catch (e) {
          const err = e instanceof FrameError ? e : new FrameError('bad-headers', String(e))
          if (channel) return channel.close(`unreadable frame: ${err.message}`)
          if (err.reason === 'bad-magic' && socket.writable) {
            opts.refused?.('bad-magic')
            socket.end(unknownVersionAnswer())
            setTimeout(() => socket.destroy(), 1_000).unref?.()
            return
          }
          return refuse(socket, 'bad-frame', err.message)
        }
        for (const f of frames) {
          if (channel) channel.receive(f)
          else if (!hello) {
            if (f.contentType !== ChannelContentType.Hello) return refuse(socket, 'not-hello', `the first frame is of type ${f.contentType}, not a hello`)
            hello = f
            clearTimeout(helloTimer)
            socket.pause()
            void decide(f)
          } else if (early.length < 16) early.push(f)
          else return refuse(socket, 'bad-frame', 'frames keep coming before the hello was answered')
        }
      }, () => socket),
    )

    async function decide(f: Frame): Promise<void> {
      let admission: Admission
      try {
        admission = await opts.admit(f, peerChain(socket))
      } catch (e) {
        opts.log('error', { err: describeThrown(e) }, 'control listener: admission failed')
        return void socket.destroy()
      }
      if (socket.destroyed) return
      if (!admission.ok) {
        return refuse(socket, 'admission', admission.reason, { routerId: admission.routerId })
      }
      try {
        // a grouped router that redials after losing its connection names its group (connection id and secret):
        // both come back as they were, or it refuses the new underlay ("incorrect group secret")
        const grouped = readBool(f.headers, ChannelHeader.IsGrouped) === true
        const theirId = f.headers.get(ChannelHeader.ConnectionId)
        const connectionId = grouped && theirId !== undefined && theirId.length > 0 ? decodeString(theirId) : newShortId()
        const transport: ChannelTransport = {
          write: (bytes) => void socket.write(bytes),
          bufferedBytes: () => socket.writableLength,
          close: () => {
            // what was written still goes out; a peer that does not take it is cut off a second later
            socket.end()
            setTimeout(() => socket.destroy(), 1_000).unref?.()
          },
        }
        const ch = new ControlChannel({
          label: admission.router.id,
          transport,
          log: opts.log,
          heartbeat: opts.heartbeat,
          maxBufferedBytes: limits.maxBufferedBytes,
          observer: opts.observer,
        })
        socket.write(encodeFrame({ contentType: ChannelContentType.Result, sequence: HELLO_SEQUENCE, headers: answerHeaders(f, connectionId), body: new Uint8Array(0) }))
        channel = ch
        pending.delete(socket)
        channels.add(ch)
        ch.onClose(() => channels.delete(ch))
        opts.open({ channel: ch, admission, hello: f, remoteAddress, connectionId })
        const held = early
        early = []
        for (const e of held) ch.receive(e)
        if (!socket.destroyed) socket.resume()
      } catch (e) {
        opts.log('error', { err: describeThrown(e), routerId: admission.router.id }, 'control listener: opening a channel failed')
        channel?.close('opening the channel failed')
        socket.destroy()
      }
    }
  }

  function answerHeaders(hello: Frame, connectionId: string): HeaderMap {
    const h: HeaderMap = new Map(opts.answerHeaders())
    h.set(ChannelHeader.ReplyFor, encodeI32(HELLO_SEQUENCE))
    h.set(ChannelHeader.ResultSuccess, encodeBool(true))
    h.set(ChannelHeader.ConnectionId, encodeString(connectionId))
    if (readBool(hello.headers, ChannelHeader.IsGrouped) === true) {
      h.set(ChannelHeader.IsGrouped, encodeBool(true))
      const secret = hello.headers.get(ChannelHeader.GroupSecret)
      h.set(ChannelHeader.GroupSecret, secret !== undefined && secret.length > 0 ? secret : new Uint8Array(randomBytes(16)))
    }
    const type = hello.headers.get(ChannelHeader.Type)
    if (type !== undefined && type.length > 0) h.set(ChannelHeader.Type, type)
    return h
  }

  const ticker = setInterval(
    guard('the heartbeat sweep', () => {
      for (const ch of [...channels]) ch.tick()
    }),
    limits.tickEveryMs,
  )
  ticker.unref?.()

  return {
    acceptSocket: guard('taking a socket from the API listener', (socket: tls.TLSSocket) => {
      if (admitPending(socket)) serve(socket)
    }, (s) => s),

    async listen(host, port, tlsOptions) {
      const srv = tls.createServer({
        key: tlsOptions.key,
        cert: tlsOptions.cert,
        ca: tlsOptions.ca,
        requestCert: true,
        rejectUnauthorized: false,
        minVersion: 'TLSv1.2',
        ALPNProtocols: [CTRL_ALPN],
        // the deadline is ours (Bun's own handshakeTimeout reports an error and leaves the socket open)
        handshakeTimeout: 0,
      })
      const handshaken = new WeakSet<Socket>()
      srv.on(
        'connection',
        guard('accepting a control connection', (socket: Socket) => {
          if (!admitPending(socket)) return
          socket.on('error', () => {})
          const timer = setTimeout(
            guard('a handshake deadline', () => {
              if (!handshaken.has(socket)) refuse(socket, 'handshake-timeout', `no TLS handshake within ${limits.handshakeTimeoutMs} ms`)
            }),
            limits.handshakeTimeoutMs,
          )
          timer.unref?.()
          socket.once('close', () => clearTimeout(timer))
        }, (s) => s),
      )
      srv.on(
        'secureConnection',
        guard('a control TLS connection', (socket: tls.TLSSocket) => {
          handshaken.add(socket)
          // the TLS server's socket is the one `connection` counted (the same object on Bun and Node)
          if (!pending.has(socket)) {
            if (!admitPending(socket)) return
          }
          serve(socket)
        }, (s) => s),
      )
      srv.on('tlsClientError', guard('a control TLS handshake failure', (_e: unknown, socket?: Socket) => void socket?.destroy(), (_e, s) => s))
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject)
        srv.listen(port, host, () => {
          srv.off('error', reject)
          resolve()
        })
      })
      srv.on('error', guard('the control TLS server', (e: unknown) => opts.log('error', { err: describeThrown(e) }, 'control listener: TLS server error')))
      server = srv
      return (srv.address() as AddressInfo).port
    },

    pendingCount: () => pending.size,
    channelCount: () => channels.size,

    async close() {
      closing = true
      clearInterval(ticker)
      const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve()
      for (const s of [...pending]) s.destroy()
      for (const ch of [...channels]) ch.close('the controller is stopping')
      for (const s of [...sockets]) s.destroy()
      await closed
    },
  }
}
