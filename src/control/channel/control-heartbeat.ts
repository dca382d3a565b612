/**
 * Heartbeat bookkeeping of one control channel, pure (time is passed in, in monotonic milliseconds):
 * - our stamp (header 5) is due when none went out for sendIntervalMs;
 * - the peer's stamp is answered once, with its own 8 bytes (header 6), on the next frame out;
 * - the peer is unresponsive when none of our stamps was answered for closeUnresponsiveMs, counted from the
 *   last answer, or, before the first one, from `start + 2 × closeUnresponsiveMs` (the real controller's grace for a
 *   new router: it is closed 90 s after connecting at the earliest).
 * @see router-control-plane.md §2.7; openziti/channel heartbeater.go, ziti controller/handler_ctrl/bind.go
 */

export interface HeartbeatOptions {
  sendIntervalMs: number
  closeUnresponsiveMs: number
}

/** The real channel's defaults: a stamp every 10 s, close after 30 s without an answer. */
export const HEARTBEAT_DEFAULTS: Readonly<HeartbeatOptions> = { sendIntervalMs: 10_000, closeUnresponsiveMs: 30_000 }

export class Heartbeat {
  private lastStampAt = -Infinity
  private lastAnswerAt: number
  private unanswered: Uint8Array | undefined

  constructor(
    readonly options: Readonly<HeartbeatOptions>,
    start: number,
  ) {
    this.lastAnswerAt = start + 2 * options.closeUnresponsiveMs
  }

  stampDue(now: number): boolean {
    return now - this.lastStampAt > this.options.sendIntervalMs
  }

  stamped(now: number): void {
    this.lastStampAt = now
  }

  /** The peer's stamp (8 bytes), to be answered. */
  received(value: Uint8Array): void {
    this.unanswered = value
  }

  hasUnanswered(): boolean {
    return this.unanswered !== undefined
  }

  /** The stamp to answer on the frame going out now, once. */
  takeUnanswered(): Uint8Array | undefined {
    const v = this.unanswered
    this.unanswered = undefined
    return v
  }

  /** The peer answered one of our stamps. */
  answered(now: number): void {
    this.lastAnswerAt = now
  }

  unresponsive(now: number): boolean {
    return now - this.lastAnswerAt > this.options.closeUnresponsiveMs
  }
}
