/**
 * Routers for the control-plane benchmark (bench/bench-control.ts): enrollment through the API as `ziti router enroll`
 * does it, and a router's control channel as a real `ziti router` (v2) speaks it: a TLS connection with ALPN
 * `ziti-ctrl` and the enrolled client certificate, the hello of test/support/router-emulator.ts (same headers and
 * capability mask), heartbeat answers, the ClientHello reply to a ServerHello, and data model subscriptions.
 * Unlike the test emulator it keeps no frames: each data model frame is handed to its callbacks with the time it was
 * received, and bodies are skimmed (counted, their first bytes kept) unless asked for, so that 1,000 connections, or
 * 100 full states of many MiB at once, cost the load generator little memory and CPU.
 */
import tls from 'node:tls'
import { create, toBinary } from '@bufbuild/protobuf'
import { encodeMessage } from '../src/control/control-messages.ts'
import { ClientHelloSchema, ContentType, Header, SubscribeToDataModelRequestSchema } from '../src/control/pb/edge_ctrl_pb.ts'
import {
  ChannelContentType,
  ChannelHeader,
  decodeHeaders,
  decodePrefix,
  encodeFrame,
  FRAME_PREFIX_BYTES,
  HELLO_SEQUENCE,
  type FrameCaps,
  type HeaderMap,
} from '../src/control/wire/control-frame.ts'
import { encodeBool, encodeI32, encodeString, encodeU64, readString } from '../src/control/wire/control-headers.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../src/pki/pki-keys.ts'
import { makeCsrPem } from '../test/support/pki.ts'
import { pool, type Api } from './policy-scale.ts'

/** The capability mask a v2 router sends (as test/support/router-emulator.ts). */
const V2_ROUTER_CAPABILITIES = Uint8Array.of(0x40, 0, 0, 0, 0, 0, 0, 0x76)
/** The version header of a source build of the router (as test/support/router-emulator.ts). */
const DEV_ROUTER_VERSION = 'v0.0.0|local|2020-01-01 01:01:01|linux|amd64'

/** Body bytes kept of a skimmed frame: enough for a change set's index (field 1, a varint). */
export const HEAD_BYTES = 32

/** What the bench reads: no cap worth the name (a full state of a large network is what is measured). */
export const BENCH_CAPS: Readonly<FrameCaps> = { maxHeaderBytes: 1024 * 1024, maxBodyBytes: 0x7fffffff }

/** A frame as the skimmer gives it: the body only when kept, else its length and first bytes. */
export interface SkimmedFrame {
  contentType: number
  sequence: number
  headers: HeaderMap
  bodyBytes: number
  /** The whole body, when `keepBody` asked for it. */
  body: Uint8Array | undefined
  /** The first HEAD_BYTES bytes of the body (fewer when it is shorter). */
  head: Uint8Array
}

/**
 * Cuts a byte stream into channel frames (the V2 layout of src/control/wire/control-frame.ts), copying a body only
 * when `keepBody(contentType, bodyBytes)` says so; otherwise only its first bytes. Throws FrameError on a bad magic or
 * a declared length past the caps.
 */
export class FrameSkimmer {
  private phase: 'prefix' | 'headers' | 'body' = 'prefix'
  private buf = new Uint8Array(FRAME_PREFIX_BYTES)
  private filled = 0
  private prefix: ReturnType<typeof decodePrefix> | undefined
  private headers: HeaderMap = new Map()
  private body: Uint8Array | undefined
  private head = new Uint8Array(HEAD_BYTES)
  private headFilled = 0
  private bodySeen = 0

  constructor(
    private readonly keepBody: (contentType: number, bodyBytes: number) => boolean,
    private readonly caps: Readonly<FrameCaps> = BENCH_CAPS,
  ) {}

  push(chunk: Uint8Array): SkimmedFrame[] {
    const out: SkimmedFrame[] = []
    let at = 0
    for (;;) {
      if (this.phase !== 'body') {
        const n = Math.min(this.buf.length - this.filled, chunk.length - at)
        this.buf.set(chunk.subarray(at, at + n), this.filled)
        this.filled += n
        at += n
        if (this.filled < this.buf.length) break
        if (this.phase === 'prefix') {
          this.prefix = decodePrefix(this.buf, this.caps)
          this.phase = 'headers'
          this.buf = new Uint8Array(this.prefix.headerBytes)
          this.filled = 0
          continue
        }
        const p = this.prefix!
        this.headers = decodeHeaders(this.buf)
        this.body = this.keepBody(p.contentType, p.bodyBytes) ? new Uint8Array(p.bodyBytes) : undefined
        this.head = new Uint8Array(Math.min(HEAD_BYTES, p.bodyBytes))
        this.headFilled = 0
        this.bodySeen = 0
        this.phase = 'body'
        continue
      }
      const p = this.prefix!
      const n = Math.min(p.bodyBytes - this.bodySeen, chunk.length - at)
      if (this.body) this.body.set(chunk.subarray(at, at + n), this.bodySeen)
      else if (this.headFilled < this.head.length) {
        const h = Math.min(this.head.length - this.headFilled, n)
        this.head.set(chunk.subarray(at, at + h), this.headFilled)
        this.headFilled += h
      }
      this.bodySeen += n
      at += n
      if (this.bodySeen < p.bodyBytes) break
      out.push({
        contentType: p.contentType,
        sequence: p.sequence,
        headers: this.headers,
        bodyBytes: p.bodyBytes,
        body: this.body,
        head: this.body ? this.body.subarray(0, HEAD_BYTES) : this.head,
      })
      this.phase = 'prefix'
      this.buf = new Uint8Array(FRAME_PREFIX_BYTES)
      this.filled = 0
      this.body = undefined
    }
    return out
  }
}

/** The index of an encoded DataState.ChangeSet from its first bytes (field 1, a varint, comes first); undefined if absent. */
export function changeSetIndexOf(head: Uint8Array): bigint | undefined {
  if (head[0] !== 0x08) return undefined
  let v = 0n
  for (let i = 1, shift = 0n; i < head.length && i <= 10; i++, shift += 7n) {
    v |= BigInt(head[i] & 0x7f) << shift
    if ((head[i] & 0x80) === 0) return v
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// enrollment

/** An enrolled router: its id, and the client certificate and key it connects with. */
export interface EnrolledRouter {
  id: string
  name: string
  cert: string
  key: string
}

/** Creates `count` edge routers named `<prefix>-<n>` through the Management API; answers their ids. */
export async function createEdgeRouters(mgmt: Api, prefix: string, count: number, concurrency: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
  return pool(names, concurrency, (name) => mgmt.create('/edge-routers', { name, roleAttributes: [], isTunnelerEnabled: false }))
}

/**
 * Enrolls edge routers as `ziti router enroll` does: one P-256 key per router for both CSRs (client, CN = the router
 * id; server, with localhost and 127.0.0.1), posted to `POST /edge/client/v1/enroll?method=erott&token=` as
 * `{certCsr, serverCertCsr}`. `client` is the Client API without a session.
 */
export async function enrollEdgeRouters(mgmt: Api, client: Api, ids: readonly string[], concurrency: number): Promise<EnrolledRouter[]> {
  const sans = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }
  return pool(ids, concurrency, async (id) => {
    const view = (await mgmt.must(200, 'GET', `/edge-routers/${id}`)).data
    const keys = await generateKeyPair('ec-p256')
    const [certCsr, serverCertCsr] = await Promise.all([makeCsrPem(keys, { commonName: id, ...sans }), makeCsrPem(keys, { commonName: id, ...sans })])
    const answer = await client.must(200, 'POST', `/enroll?method=erott&token=${encodeURIComponent(view.enrollmentToken)}`, { certCsr, serverCertCsr })
    return { id, name: view.name as string, cert: answer.data.cert as string, key: await exportPrivateKeyPem(keys.privateKey) }
  })
}

// ---------------------------------------------------------------------------------------------------------------
// the control channel

/** A data model frame (DataState or DataState.ChangeSet) as received. */
export interface DataModelFrame extends SkimmedFrame {
  /** performance.now() when its last byte was read. */
  atMs: number
  /** Header 1026, when present (absent: a synthetic change set such as the public keys). */
  subscriptionId: string | undefined
}

export interface BenchRouterOptions {
  host: string
  port: number
  router: EnrolledRouter
  /** How long to wait for the hello's answer (default 30 s). */
  helloTimeoutMs?: number
}

/** Bodies kept whole unless told otherwise: up to 64 KiB. */
const keepSmall = (_contentType: number, bodyBytes: number) => bodyBytes <= 64 * 1024

/** Times of one connection (performance.now()). */
export interface ConnectTimes {
  startMs: number
  tlsMs?: number
  /** The hello's answer: the channel is open. */
  openMs?: number
  serverHelloMs?: number
  /** The public keys (a synthetic change set without subscription id): the edge sync is done. */
  keysMs?: number
}

export class BenchRouter {
  readonly times: ConnectTimes
  /** Data model frames received, and the bytes of their bodies. */
  dataModelFrames = 0
  dataModelBytes = 0
  /** Frames received, every kind (heartbeats, current index messages too). */
  frames = 0
  heartbeatsAnswered = 0
  /** Whether a frame's body is kept whole (read when its prefix arrives); otherwise it is counted and skimmed. */
  keepBody: (contentType: number, bodyBytes: number) => boolean = keepSmall
  /** Resolves at the ServerHello (the controller has registered the router) and at the public keys (its sync). */
  readonly serverHello: Promise<void>
  readonly synced: Promise<void>
  private helloSeen!: () => void
  private keysSeen!: () => void
  private sequence = 1
  private closedFlag = false
  private listeners = new Set<(f: DataModelFrame) => void>()
  private socket!: tls.TLSSocket

  private constructor(readonly router: EnrolledRouter) {
    this.times = { startMs: performance.now() }
    this.serverHello = new Promise((resolve) => (this.helloSeen = resolve))
    this.synced = new Promise((resolve) => (this.keysSeen = resolve))
  }

  get isClosed(): boolean {
    return this.closedFlag
  }

  /** Connects and says hello; resolves once the controller answered it (rejects when it closes first or in time). */
  static connect(opts: BenchRouterOptions): Promise<BenchRouter> {
    const r = new BenchRouter(opts.router)
    const skimmer = new FrameSkimmer((contentType, bodyBytes) => r.keepBody(contentType, bodyBytes))
    return new Promise<BenchRouter>((resolve, reject) => {
      const socket = tls.connect({
        host: opts.host,
        port: opts.port,
        rejectUnauthorized: false,
        servername: 'localhost',
        ALPNProtocols: ['ziti-ctrl'],
        cert: opts.router.cert,
        key: opts.router.key,
      })
      r.socket = socket
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new Error(`router ${opts.router.id}: no answer to the hello within ${opts.helloTimeoutMs ?? 30_000} ms`))
      }, opts.helloTimeoutMs ?? 30_000)
      socket.on('error', () => {})
      socket.once('close', () => {
        r.closedFlag = true
        clearTimeout(timer)
        if (r.times.openMs === undefined) reject(new Error(`router ${opts.router.id}: the controller closed the connection without answering the hello`))
      })
      socket.once('secureConnect', () => {
        r.times.tlsMs = performance.now()
        const headers: HeaderMap = new Map<number, Uint8Array>([
          [ChannelHeader.HelloVersion, encodeString(DEV_ROUTER_VERSION)],
          [1002, V2_ROUTER_CAPABILITIES],
          [ChannelHeader.IsGrouped, encodeBool(true)],
          [ChannelHeader.Type, encodeString('ctrl.default')],
          [ChannelHeader.IsFirstGroupConnection, encodeBool(true)],
        ])
        socket.write(encodeFrame({ contentType: ChannelContentType.Hello, sequence: HELLO_SEQUENCE, headers, body: encodeString(opts.router.id) }))
      })
      socket.on('data', (chunk: Buffer) => {
        const atMs = performance.now()
        let frames: SkimmedFrame[]
        try {
          frames = skimmer.push(chunk)
        } catch {
          socket.destroy()
          return
        }
        for (const f of frames) {
          if (r.times.openMs === undefined) {
            r.times.openMs = atMs
            clearTimeout(timer)
            resolve(r)
            continue
          }
          r.take(f, atMs)
        }
      })
    })
  }

  /**
   * Sends SubscribeToDataModelRequest (20505) as a router does, fire and forget. A renewal (`renew`, the same id and
   * the timeline held) keeps the subscription alive past its duration; both controllers then keep the index they
   * track for the router, so `currentIndex` does not matter for it.
   */
  subscribe(subscriptionId: string, o: { currentIndex?: bigint; timelineId?: string; durationS?: number; renew?: boolean } = {}): void {
    this.send(ContentType.SubscribeToDataModelRequestType, new Map(), encodeMessage(SubscribeToDataModelRequestSchema, {
      currentIndex: o.currentIndex ?? 0n, subscriptionDurationSeconds: o.durationS ?? 300, renew: o.renew ?? false, timelineId: o.timelineId ?? '', subscriptionId,
    }))
  }

  /** Calls `fn` with every data model frame received from now on; answers the function that stops it. */
  onDataModel(fn: (f: DataModelFrame) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** The next data model frame matching `pred` (received from now on). */
  next(pred: (f: DataModelFrame) => boolean, timeoutMs: number, what: string): Promise<DataModelFrame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        stop()
        reject(new Error(`router ${this.router.id}: ${what} did not come within ${timeoutMs} ms`))
      }, timeoutMs)
      const stop = this.onDataModel((f) => {
        if (!pred(f)) return
        clearTimeout(timer)
        stop()
        resolve(f)
      })
    })
  }

  close(): void {
    this.socket.destroy()
  }

  private send(contentType: number, headers: HeaderMap, body: Uint8Array): void {
    if (this.closedFlag) return
    this.socket.write(encodeFrame({ contentType, sequence: this.sequence++, headers, body }))
  }

  private take(f: SkimmedFrame, atMs: number): void {
    this.frames++
    const hb = f.headers.get(ChannelHeader.Heartbeat)
    if (hb?.length === 8) {
      this.heartbeatsAnswered++
      this.send(ChannelContentType.Heartbeat, new Map([[ChannelHeader.HeartbeatResponse, hb]]), new Uint8Array(0))
    }
    if (f.contentType === ContentType.ServerHelloType) {
      this.times.serverHelloMs = atMs
      this.replyClientHello(f)
      this.helloSeen()
      return
    }
    if (f.contentType !== ContentType.DataStateType && f.contentType !== ContentType.DataStateChangeSetType) return
    const subscriptionId = readString(f.headers, Header.RouterDataModelSubscriptionId)
    if (f.contentType === ContentType.DataStateChangeSetType && subscriptionId === undefined && this.times.keysMs === undefined) {
      this.times.keysMs = atMs
      this.keysSeen()
    }
    this.dataModelFrames++
    this.dataModelBytes += f.bodyBytes
    const frame: DataModelFrame = { ...f, atMs, subscriptionId }
    for (const fn of [...this.listeners]) fn(frame)
  }

  /** The ClientHello a router answers a ServerHello with: one edge listener, the data model supported, index 0. */
  private replyClientHello(serverHello: SkimmedFrame): void {
    const hello = create(ClientHelloSchema, {
      version: 'v0.0.0',
      hostname: '127.0.0.1',
      protocols: ['tls'],
      protocolPorts: ['3022'],
      data: {},
      listeners: [{
        address: { value: 'tls:0.0.0.0:3022', protocol: 'tls', hostname: '0.0.0.0', port: 3022 },
        advertise: { value: 'tls:127.0.0.1:3022', protocol: 'tls', hostname: '127.0.0.1', port: 3022 },
      }],
    })
    this.send(ContentType.ClientHelloType, new Map([
      [ChannelHeader.ReplyFor, encodeI32(serverHello.sequence)],
      [Header.RouterDataModel as number, encodeBool(true)],
      [Header.RouterDataModelIndex as number, encodeU64(0n)],
    ]), toBinary(ClientHelloSchema, hello))
  }
}
