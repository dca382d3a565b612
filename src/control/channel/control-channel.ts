/**
 * One logical control channel over one connection (edgeplane leaves the grouped-underlay capability off, so a
 * router keeps a single connection per controller). It knows sequences, replies, heartbeats and dispatch, never
 * what a message means. Rules kept here:
 * - Every frame sent gets the next sequence of the channel, from 1 (a reply too); the hello and its answer use -1
 *   and are exchanged before the channel exists (control-listener.ts).
 * - A reply carries header 1 = the request's sequence and the request's header 128, if it had one.
 * - A received frame with header 1 goes to the waiter of that sequence; without a waiter it is dispatched by content
 *   type like any other frame (a router's ClientHello, CreateTerminatorV2Response and RouteResult depend on it).
 * - Ping (1) is answered with a successful Result "ok"; a heartbeat (5) carries nothing to dispatch.
 * - A content type without a handler is counted and dropped; the first few distinct ones are logged once each.
 * - Heartbeats (control-heartbeat.ts): header 5 is stamped on an outgoing frame every sendInterval, a standalone
 *   heartbeat goes out when nothing else did; a received header 5 is answered in header 6 of the next frame out, or
 *   of a standalone heartbeat within 2 ms; a peer that answers none for closeUnresponsive is closed.
 * - Sending never waits: a frame goes to the connection's buffer; a peer that lets more than maxBufferedBytes pile
 *   up there (it stopped reading) is closed.
 * - A handler that throws or rejects is logged; the channel goes on. Closing is idempotent: waiters are rejected,
 *   timers cleared, close listeners told once.
 */
import { ChannelContentType, ChannelHeader, type Frame, type HeaderMap, encodeFrame, encodeFrameHead } from '../wire/control-frame.ts'

/** Bodies this large are written after their frame's head rather than copied into one buffer with it. */
const SHARED_BODY_BYTES = 64 * 1024
import { encodeBool, encodeI32, encodeString, readI32 } from '../wire/control-headers.ts'
import { Heartbeat, HEARTBEAT_DEFAULTS, type HeartbeatOptions } from './control-heartbeat.ts'

/** What a channel writes to and closes: a TLS socket in production, a pipe in tests. */
export interface ChannelTransport {
  /** Queues bytes for the peer. */
  write(bytes: Uint8Array): void
  /** Bytes queued and not yet handed to the network. */
  bufferedBytes(): number
  /** Ends the connection (no more reads or writes). */
  close(): void
}

/** A handler of one content type. It may answer through `ch`; what it returns is awaited only for its errors. */
export type ControlHandler = (frame: Frame, ch: ControlChannel) => void | Promise<void>

/** Content type → handler: the binding of one kind of peer (handlers/control-bind.ts). */
export type HandlerTable = ReadonlyMap<number, ControlHandler>

/** What a channel reports about traffic (the metrics). */
export interface ChannelObserver {
  received(contentType: number): void
  sent(contentType: number): void
  unhandled(contentType: number): void
}

export interface ChannelOptions {
  /** How the channel names itself in the log (the router id once admitted). */
  label: string
  transport: ChannelTransport
  /** The handlers by content type; may also be given later with bind() (before the first frame is received). */
  handlers?: HandlerTable
  log: (level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void
  heartbeat?: Partial<HeartbeatOptions>
  /** A monotonic clock in milliseconds (default performance.now). */
  monotonicMs?: () => number
  /** Wall time in nanoseconds for heartbeat stamps (default: from performance.timeOrigin). */
  wallNs?: () => bigint
  /** Past this many bytes waiting in the connection's buffer the peer is closed as not reading (default 8 MiB). */
  maxBufferedBytes?: number
  observer?: ChannelObserver
}

/** A request that got no reply in time, or whose channel closed. */
export class ChannelRequestError extends Error {
  constructor(
    readonly reason: 'timeout' | 'closed',
    message: string,
  ) {
    super(message)
  }
}

/** What a frame to send may carry; its content type is set by the typed senders (control-senders.ts). */
export interface OutgoingFrame {
  contentType: number
  headers?: HeaderMap
  body?: Uint8Array
}

/** Distinct unhandled content types logged per channel (the rest are only counted). */
const UNHANDLED_LOGGED = 16
/** After a received heartbeat, how long a frame may take to carry its answer before a standalone one goes out. */
const HEARTBEAT_ANSWER_MS = 2

const defaultWallNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1_000_000))

export class ControlChannel {
  readonly label: string
  private nextSequence = 1
  private readonly waiters = new Map<number, { resolve: (f: Frame) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> }>()
  private readonly closeListeners: Array<(reason: string) => void> = []
  private readonly unhandledSeen = new Set<number>()
  private readonly heartbeat: Heartbeat
  private answerTimer: ReturnType<typeof setTimeout> | undefined
  private closedReason: string | undefined
  private readonly monotonicMs: () => number
  private readonly wallNs: () => bigint
  private readonly maxBufferedBytes: number
  private handlers: HandlerTable

  constructor(private readonly opts: ChannelOptions) {
    this.label = opts.label
    this.handlers = opts.handlers ?? new Map()
    this.monotonicMs = opts.monotonicMs ?? (() => performance.now())
    this.wallNs = opts.wallNs ?? defaultWallNs
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 8 * 1024 * 1024
    this.heartbeat = new Heartbeat({ ...HEARTBEAT_DEFAULTS, ...opts.heartbeat }, this.monotonicMs())
  }

  get isClosed(): boolean {
    return this.closedReason !== undefined
  }

  /** Why the channel closed (undefined while open). */
  get closeReason(): string | undefined {
    return this.closedReason
  }

  /** Sets the handlers of the channel (its binding: handlers/control-bind.ts). */
  bind(handlers: HandlerTable): void {
    this.handlers = handlers
  }

  /** Runs `fn` once when the channel closes (at once if it already has). */
  onClose(fn: (reason: string) => void): void {
    if (this.closedReason !== undefined) fn(this.closedReason)
    else this.closeListeners.push(fn)
  }

  /** Sends a frame; answers its sequence (undefined when the channel is closed: nothing was sent). */
  send(frame: OutgoingFrame): number | undefined {
    if (this.closedReason !== undefined) return undefined
    const sequence = this.nextSequence++
    // wraps as the int32 of the real channel does, skipping -1 (the hello's) and 0
    if (this.nextSequence > 0x7fffffff) this.nextSequence = 1
    const headers: HeaderMap = new Map(frame.headers ?? [])
    const now = this.monotonicMs()
    const stamp = this.heartbeat.stampDue(now) ? this.wallNs() : undefined
    if (stamp !== undefined) {
      headers.set(ChannelHeader.Heartbeat, u64Bytes(stamp))
      this.heartbeat.stamped(now)
    }
    const answer = this.heartbeat.takeUnanswered()
    if (answer !== undefined) headers.set(ChannelHeader.HeartbeatResponse, answer)
    const out = { contentType: frame.contentType, sequence, headers, body: frame.body ?? new Uint8Array(0) }
    let length: number
    if (out.body.length >= SHARED_BODY_BYTES) {
      // a large body (a full data model, shared by every router that gets it) goes as it is, after its head
      const head = encodeFrameHead(out)
      this.opts.transport.write(head)
      this.opts.transport.write(out.body)
      length = head.length + out.body.length
    } else {
      const bytes = encodeFrame(out)
      this.opts.transport.write(bytes)
      length = bytes.length
    }
    this.opts.observer?.sent(frame.contentType)
    // what waited before this frame: one large frame (a full data model) is not a peer that does not read
    if (this.opts.transport.bufferedBytes() - length > this.maxBufferedBytes) {
      this.close(`the peer does not read: more than ${this.maxBufferedBytes} bytes wait to be sent`)
    }
    return sequence
  }

  /** Sends `frame` as the reply to `to` (header 1 = its sequence, its header 128 copied). */
  reply(to: Frame, frame: OutgoingFrame): number | undefined {
    const headers: HeaderMap = new Map(frame.headers ?? [])
    headers.set(ChannelHeader.ReplyFor, encodeI32(to.sequence))
    const reflected = to.headers.get(ChannelHeader.Reflected)
    if (reflected !== undefined) headers.set(ChannelHeader.Reflected, reflected)
    return this.send({ ...frame, headers })
  }

  /** Answers `to` with a Result (content type 2): header 2 = success, body = the text. */
  replyResult(to: Frame, success: boolean, text = ''): void {
    this.reply(to, { contentType: ChannelContentType.Result, headers: new Map([[ChannelHeader.ResultSuccess, encodeBool(success)]]), body: encodeString(text) })
  }

  /** Sends a frame and waits for its reply, up to `timeoutMs`. */
  request(frame: OutgoingFrame, timeoutMs: number): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const sequence = this.send(frame)
      if (sequence === undefined) return reject(new ChannelRequestError('closed', `channel ${this.label} is closed`))
      const timer = setTimeout(() => {
        this.waiters.delete(sequence)
        reject(new ChannelRequestError('timeout', `no reply to ${frame.contentType} within ${timeoutMs} ms`))
      }, timeoutMs)
      timer.unref?.()
      this.waiters.set(sequence, { resolve, reject, timer })
    })
  }

  /** Takes one frame from the peer (the listener calls this for each frame after the hello). */
  receive(frame: Frame): void {
    if (this.closedReason !== undefined) return
    this.opts.observer?.received(frame.contentType)
    const hb = frame.headers.get(ChannelHeader.Heartbeat)
    if (hb?.length === 8) this.heartbeatReceived(hb)
    if (frame.headers.get(ChannelHeader.HeartbeatResponse)?.length === 8) this.heartbeat.answered(this.monotonicMs())
    const replyFor = readI32(frame.headers, ChannelHeader.ReplyFor)
    if (replyFor !== undefined && replyFor !== -1) {
      const waiter = this.waiters.get(replyFor)
      if (waiter) {
        this.waiters.delete(replyFor)
        clearTimeout(waiter.timer)
        waiter.resolve(frame)
        return
      }
    }
    switch (frame.contentType) {
      case ChannelContentType.Heartbeat:
        return
      case ChannelContentType.Ping:
        return this.replyResult(frame, true, 'ok')
    }
    const handler = this.handlers.get(frame.contentType)
    if (!handler) return this.unhandled(frame)
    try {
      const done = handler(frame, this)
      if (done instanceof Promise) done.catch((e) => this.handlerFailed(frame, e))
    } catch (e) {
      this.handlerFailed(frame, e)
    }
  }

  /** Heartbeat upkeep, run every second or so by the listener's sweep: a standalone beat when due, the unresponsive close. */
  tick(): void {
    if (this.closedReason !== undefined) return
    const now = this.monotonicMs()
    if (this.heartbeat.unresponsive(now)) {
      this.close(`no heartbeat answered for ${this.heartbeat.options.closeUnresponsiveMs} ms`)
      return
    }
    if (this.heartbeat.stampDue(now)) this.send({ contentType: ChannelContentType.Heartbeat })
  }

  /** Closes the channel and its connection (idempotent). */
  close(reason: string): void {
    if (this.closedReason !== undefined) return
    this.closedReason = reason
    if (this.answerTimer) clearTimeout(this.answerTimer)
    for (const [, w] of this.waiters) {
      clearTimeout(w.timer)
      w.reject(new ChannelRequestError('closed', `channel ${this.label} closed: ${reason}`))
    }
    this.waiters.clear()
    try {
      this.opts.transport.close()
    } finally {
      for (const fn of this.closeListeners.splice(0)) {
        try {
          fn(reason)
        } catch (e) {
          this.opts.log('warn', { channel: this.label, err: String(e) }, 'a close listener of a control channel failed')
        }
      }
    }
  }

  private heartbeatReceived(value: Uint8Array): void {
    this.heartbeat.received(value)
    if (this.answerTimer) return
    // a frame going out in the next moments carries the answer; else a heartbeat of its own does
    this.answerTimer = setTimeout(() => {
      this.answerTimer = undefined
      if (this.heartbeat.hasUnanswered()) this.send({ contentType: ChannelContentType.Heartbeat })
    }, HEARTBEAT_ANSWER_MS)
    this.answerTimer.unref?.()
  }

  private unhandled(frame: Frame): void {
    this.opts.observer?.unhandled(frame.contentType)
    if (this.unhandledSeen.has(frame.contentType) || this.unhandledSeen.size >= UNHANDLED_LOGGED) return
    this.unhandledSeen.add(frame.contentType)
    this.opts.log('debug', { channel: this.label, contentType: frame.contentType }, 'control channel: no handler for this content type; dropped (logged once)')
  }

  private handlerFailed(frame: Frame, e: unknown): void {
    this.opts.log('warn', { channel: this.label, contentType: frame.contentType, err: e instanceof Error ? e.message : String(e) }, 'control channel: a handler failed')
  }
}

function u64Bytes(v: bigint): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, v), true)
  return out
}
