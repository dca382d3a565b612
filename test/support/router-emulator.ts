// A router's control channel as a real `ziti router` (v2) speaks it, for tests that cannot run Go: a TLS client with
// ALPN ziti-ctrl and the router's enrolled client certificate, the hello a v2 router sends (headers 4, 1002
// `40 00 00 00 00 00 00 76`, 9/7/11; body = its id), heartbeat answers (header 6, standalone within 2 ms), a
// ClientHello reply to a ServerHello (with its edge listeners, 1024/1025), and every frame it receives kept, decoded,
// so tests can assert on what the controller sent. Written from router-control-plane.md §2 and §3.1.
import tls from 'node:tls'
import { create, toBinary } from '@bufbuild/protobuf'
import { ClientHelloSchema, ContentType as EdgeType, Header as EdgeHeader } from '../../src/control/pb/edge_ctrl_pb.ts'
import { ChannelContentType, ChannelHeader, encodeFrame, FRAME_CAPS, HELLO_SEQUENCE, type Frame, type HeaderMap } from '../../src/control/wire/control-frame.ts'
import { FrameReader } from '../../src/control/wire/control-reader.ts'
import { encodeBool, encodeI32, encodeString, encodeU64, readI32 } from '../../src/control/wire/control-headers.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../src/pki/pki-keys.ts'
import { expectStatus, type TestServer } from './harness.ts'
import { makeCsrPem } from './pki.ts'

/** The capability mask a v2 router sends (bits 1, 2, 4, 5, 6 and 62). */
export const V2_ROUTER_CAPABILITIES = Uint8Array.of(0x40, 0, 0, 0, 0, 0, 0, 0x76)
/** The version header of a source build of the router. */
export const DEV_ROUTER_VERSION = 'v0.0.0|local|2020-01-01 01:01:01|linux|amd64'

/** An enrolled router: its id and the client certificate (chain) and key it connects with. */
export interface RouterIdentity {
  id: string
  name: string
  cert: string
  key: string
}

/** Creates a router (edge unless `fabric`) and enrolls it as `ziti router enroll` does (erott, two CSRs). */
export async function enrollRouter(srv: TestServer, name: string, opts: { fabric?: boolean; tunneler?: boolean } = {}): Promise<RouterIdentity> {
  const path = opts.fabric ? '/routers' : '/edge-routers'
  const id = await srv.create(path, opts.fabric ? { name } : { name, isTunnelerEnabled: opts.tunneler ?? false })
  const view = await srv.mgmt.get(`${path}/${id}`)
  expectStatus(view, 200)
  const clientKeys = await generateKeyPair('ec-p256')
  const serverKeys = await generateKeyPair('ec-p256')
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  const res = await srv.client.post(
    '/enroll/erott',
    {
      token: view.body.data.enrollmentToken,
      clientCsr: await makeCsrPem(clientKeys, { commonName: id, ...sans }),
      serverCsr: await makeCsrPem(serverKeys, { commonName: id, ...sans }),
    },
    { session: null },
  )
  expectStatus(res, 200)
  return { id, name, cert: res.body.data.cert, key: await exportPrivateKeyPem(clientKeys.privateKey) }
}

/** An edge listener as a ClientHello lists it. */
export interface EmulatedListener {
  protocol: string
  host: string
  port: number
}

export interface EmulatorOptions {
  port: number
  host?: string
  /** The controller's CA bundle (the router's identity.ca); the server certificate is checked against it (unset: not checked). */
  caPem?: string
  /** The client certificate presented (none: no certificate). */
  tls?: { cert: string; key: string }
  /** The id the hello names (its body). */
  routerId: string
  /** ALPN offered (default ['ziti-ctrl']; null: none). */
  alpn?: string[] | null
  /** Headers of the hello instead of a v2 router's (null values remove one). */
  helloHeaders?: Record<number, Uint8Array | null>
  /** The edge listeners of its ClientHello (default one tls listener on 127.0.0.1:3022). */
  listeners?: EmulatedListener[]
  /** Answer heartbeats (default true). */
  answerHeartbeats?: boolean
  /** Reply to ServerHello with a ClientHello (default true). */
  answerServerHello?: boolean
  /** How long to wait for the hello's answer (default 5 s). */
  helloTimeoutMs?: number
}

/** Why a connection produced no channel. */
export type ConnectOutcome = { ok: true; router: RouterEmulator } | { ok: false; closed: true; received: Uint8Array } | { ok: false; closed: false; error: string }

export class RouterEmulator {
  /** Every frame received after the hello's answer, decoded. */
  readonly received: Frame[] = []
  private sequence = 1
  private unansweredHeartbeat: Uint8Array | undefined
  private waiters = new Set<() => void>()
  private readonly frameListeners: ((f: Frame) => void)[] = []
  private closedFlag = false
  readonly closed: Promise<void>

  private constructor(
    readonly socket: tls.TLSSocket,
    readonly helloAnswer: Frame,
    private readonly opts: EmulatorOptions,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.once('close', () => {
      this.closedFlag = true
      this.wake()
    })
  }

  get isClosed(): boolean {
    return this.closedFlag
  }

  /** Connects, says hello, and answers the outcome: a channel, or a connection closed without one. */
  static async tryConnect(opts: EmulatorOptions): Promise<ConnectOutcome> {
    const socket = tls.connect({
      host: opts.host ?? '127.0.0.1',
      port: opts.port,
      ...(opts.caPem !== undefined ? { ca: opts.caPem } : { rejectUnauthorized: false }),
      servername: 'localhost',
      ALPNProtocols: opts.alpn === null ? undefined : (opts.alpn ?? ['ziti-ctrl']),
      ...(opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : {}),
    })
    socket.on('error', () => {})
    const reader = new FrameReader(FRAME_CAPS)
    let early: Frame[] = []
    const bytes: Buffer[] = []
    const outcome = await new Promise<ConnectOutcome>((resolve) => {
      const timer = setTimeout(() => resolve({ ok: false, closed: false, error: 'no answer to the hello in time' }), opts.helloTimeoutMs ?? 5_000)
      socket.once('secureConnect', () => {
        const headers: HeaderMap = new Map<number, Uint8Array>([
          [ChannelHeader.HelloVersion, encodeString(DEV_ROUTER_VERSION)],
          [1002, V2_ROUTER_CAPABILITIES],
          [ChannelHeader.IsGrouped, encodeBool(true)],
          [ChannelHeader.Type, encodeString('ctrl.default')],
          [ChannelHeader.IsFirstGroupConnection, encodeBool(true)],
        ])
        for (const [k, v] of Object.entries(opts.helloHeaders ?? {})) {
          if (v === null) headers.delete(Number(k))
          else headers.set(Number(k), v)
        }
        socket.write(encodeFrame({ contentType: ChannelContentType.Hello, sequence: HELLO_SEQUENCE, headers, body: encodeString(opts.routerId) }))
      })
      socket.on('data', (d: Buffer) => {
        bytes.push(d)
        try {
          early.push(...reader.push(d))
        } catch {
          // not frames (an unknown-version answer): kept in `received`
        }
        if (early.length > 0) {
          clearTimeout(timer)
          const [answer, ...rest] = early
          early = rest
          resolve({ ok: true, router: new RouterEmulator(socket, answer, opts) })
        }
      })
      socket.once('close', () => {
        clearTimeout(timer)
        resolve({ ok: false, closed: true, received: Buffer.concat(bytes) })
      })
    })
    if (!outcome.ok) {
      socket.destroy()
      return outcome
    }
    const router = outcome.router
    socket.removeAllListeners('data')
    for (const f of early) router.take(f)
    socket.on('data', (d: Buffer) => {
      try {
        for (const f of reader.push(d)) router.take(f)
      } catch {
        socket.destroy()
      }
    })
    return outcome
  }

  /** Connects and expects a channel. */
  static async connect(opts: EmulatorOptions): Promise<RouterEmulator> {
    const o = await RouterEmulator.tryConnect(opts)
    if (!o.ok) throw new Error(o.closed ? 'the controller closed the connection without answering the hello' : o.error)
    return o.router
  }

  /** Calls `fn` with every frame received from now on, as it arrives (a router's reactions: answering routes, …). */
  onFrame(fn: (f: Frame) => void): void {
    this.frameListeners.push(fn)
  }

  /** Sends a frame with the next sequence (and a pending heartbeat answer); answers its sequence. */
  send(frame: { contentType: number; headers?: HeaderMap; body?: Uint8Array }): number {
    const sequence = this.sequence++
    const headers: HeaderMap = new Map(frame.headers ?? [])
    if (this.unansweredHeartbeat) {
      headers.set(ChannelHeader.HeartbeatResponse, this.unansweredHeartbeat)
      this.unansweredHeartbeat = undefined
    }
    this.socket.write(encodeFrame({ contentType: frame.contentType, sequence, headers, body: frame.body ?? new Uint8Array(0) }))
    return sequence
  }

  /** Sends a reply to `to` (header 1 = its sequence). */
  reply(to: Frame, frame: { contentType: number; headers?: HeaderMap; body?: Uint8Array }): number {
    const headers: HeaderMap = new Map(frame.headers ?? [])
    headers.set(ChannelHeader.ReplyFor, encodeI32(to.sequence))
    return this.send({ ...frame, headers })
  }

  /** Sends a heartbeat of its own (header 5). */
  heartbeat(ns = 1n): number {
    return this.send({ contentType: ChannelContentType.Heartbeat, headers: new Map([[ChannelHeader.Heartbeat, encodeU64(ns)]]) })
  }

  /** Waits for a received frame matching `pred` (one already received counts). */
  waitFor(pred: (f: Frame) => boolean, timeoutMs = 5_000, what = 'a frame'): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const f = this.received.find(pred)
        if (f) return finish(() => resolve(f))
        if (this.closedFlag) finish(() => reject(new Error(`closed while waiting for ${what}`)))
      }
      const timer = setTimeout(() => finish(() => reject(new Error(`${what} did not come within ${timeoutMs} ms`))), timeoutMs)
      const finish = (fn: () => void) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        fn()
      }
      this.waiters.add(check)
      check()
    })
  }

  /** Waits until the controller closes the connection; false when it is still open after `timeoutMs`. */
  async waitClosed(timeoutMs = 5_000): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const t = new Promise<false>((r) => (timer = setTimeout(() => r(false), timeoutMs)))
    const result = await Promise.race([this.closed.then(() => true as const), t])
    clearTimeout(timer)
    return result
  }

  close(): void {
    this.socket.destroy()
  }

  private take(f: Frame): void {
    this.received.push(f)
    for (const fn of this.frameListeners) fn(f)
    const hb = f.headers.get(ChannelHeader.Heartbeat)
    if (hb?.length === 8 && this.opts.answerHeartbeats !== false) {
      this.unansweredHeartbeat = hb
      setTimeout(() => {
        if (this.unansweredHeartbeat && !this.closedFlag) this.send({ contentType: ChannelContentType.Heartbeat })
      }, 2)
    }
    if (f.contentType === EdgeType.ServerHelloType && this.opts.answerServerHello !== false) {
      const listeners = this.opts.listeners ?? [{ protocol: 'tls', host: '127.0.0.1', port: 3022 }]
      const hello = create(ClientHelloSchema, {
        version: 'v0.0.0',
        hostname: listeners[0]?.host ?? '',
        protocols: listeners.map((l) => l.protocol),
        protocolPorts: listeners.map((l) => String(l.port)),
        data: {},
        listeners: listeners.map((l) => ({
          address: { value: `${l.protocol}:0.0.0.0:${l.port}`, protocol: l.protocol, hostname: '0.0.0.0', port: l.port },
          advertise: { value: `${l.protocol}:${l.host}:${l.port}`, protocol: l.protocol, hostname: l.host, port: l.port },
        })),
      })
      this.reply(f, {
        contentType: EdgeType.ClientHelloType,
        headers: new Map([
          [EdgeHeader.RouterDataModel as number, encodeBool(true)],
          [EdgeHeader.RouterDataModelIndex as number, encodeU64(0n)],
        ]),
        body: toBinary(ClientHelloSchema, hello),
      })
    }
    this.wake()
  }

  private wake(): void {
    for (const w of [...this.waiters]) w()
  }
}

/** The reply-for header of a frame (undefined when it is not a reply). */
export const replyForOf = (f: Frame): number | undefined => readI32(f.headers, ChannelHeader.ReplyFor)
