/**
 * The listener's table of open connections: how many there are in all and per source address (a new one beyond
 * either limit is refused), the phase each one is in and since when, and which have overstayed their phase.
 * Rules kept here:
 * - A connection is counted from the moment it is accepted (before its TLS handshake) until it closes.
 * - Each phase has one deadline: the handshake (handshakeTimeoutMs from the accept), a new connection's first request
 *   (headersTimeoutMs from the handshake), a request's headers (headersTimeoutMs from its first byte), its whole body
 *   (requestTimeoutMs from its first byte), the writing of its answer (writeTimeoutMs), the wait between requests
 *   (keepAliveTimeoutMs), and the last moments of a connection being closed (CLOSING_LINGER_MS). A request being
 *   worked on by the app has none (the app bounds its own work).
 * - Deadlines are absolute, so a client dribbling one byte at a time gains nothing; they are checked by one sweep
 *   (`sweep`, run by the listener's one timer), so that a request costs a few field writes, never a timer of its own.
 * - The first byte of a request after a wait is noticed by the sweep (the socket's count of bytes read moved), not
 *   on every chunk read: its time is known to within one sweep interval.
 * Pure bookkeeping: time is passed in, and what to do with an expired connection is the listener's business.
 */

/** Limits on connections and on the requests they carry; timeouts in milliseconds. */
export interface ConnectionLimits {
  /** From accepting a TCP connection to the end of its TLS handshake. */
  handshakeTimeoutMs: number
  /** To receive a request's line and headers: from its first byte (a new connection: from its handshake). */
  headersTimeoutMs: number
  /** To receive a whole request, headers and body, from its first byte. */
  requestTimeoutMs: number
  /** How long a connection may wait, open, for its next request. */
  keepAliveTimeoutMs: number
  /** To hand an answer to a client that reads it, from its first byte written (a client that stops reading is closed). */
  writeTimeoutMs: number
  /** The request line and headers together, in bytes (more: 431, refused by the HTTP parser). */
  maxHeaderBytes: number
  /** Header fields in one request (more: 431). */
  maxHeaders: number
  /** Open connections in all, TLS handshakes included (more: refused at once). */
  maxConnections: number
  /** Open connections from one source address (more: refused at once). */
  maxConnectionsPerAddress: number
}

/** The defaults (README, "Connection limits"). */
export const CONNECTION_LIMIT_DEFAULTS: Readonly<ConnectionLimits> = {
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  writeTimeoutMs: 30_000,
  maxHeaderBytes: 16 * 1024,
  maxHeaders: 100,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 2_000,
}

/** A connection closed by the server may linger this long (its answer on its way out), then it is destroyed. */
export const CLOSING_LINGER_MS = 1_000

/** What a connection is doing; its deadline follows from the phase and `since`. */
export const Phase = {
  /** Accepted, in its TLS handshake. */
  Handshake: 0,
  /** Handshake done, no byte of a first request yet. */
  Waiting: 1,
  /** Between two requests. */
  Idle: 2,
  /** Receiving a request's line and headers. */
  Headers: 3,
  /** Receiving a request's body. */
  Body: 4,
  /** Its request is being worked on by the app: no deadline. */
  Busy: 5,
  /** Its answer is being written. */
  Writing: 6,
  /** Being closed by the server. */
  Closing: 7,
} as const
export type Phase = (typeof Phase)[keyof typeof Phase]

/** The name of each phase a connection can time out in, as the metrics label it. */
export const PHASE_NAMES: Record<Phase, string> = {
  [Phase.Handshake]: 'handshake',
  [Phase.Waiting]: 'headers',
  [Phase.Headers]: 'headers',
  [Phase.Body]: 'body',
  [Phase.Busy]: 'busy',
  [Phase.Writing]: 'write',
  [Phase.Idle]: 'idle',
  [Phase.Closing]: 'closing',
}

/** How often the connection table is swept for connections past their deadline: a quarter of the shortest one. */
export function sweepEveryMs(limits: Readonly<ConnectionLimits>): number {
  const shortest = Math.min(limits.handshakeTimeoutMs, limits.headersTimeoutMs, limits.requestTimeoutMs, limits.writeTimeoutMs, limits.keepAliveTimeoutMs)
  return Math.max(10, Math.min(1_000, Math.floor(shortest / 4)))
}

/** One open connection. */
export interface Conn<S> {
  readonly socket: S
  /** The source address, as it was at the accept (a socket that is gone no longer says). */
  readonly address: string
  phase: Phase
  /** When the phase began; for Headers and Body, when the request's first byte came. */
  since: number
  /** Requests received and not yet answered (more than one when pipelined). */
  inflight: number
  /** While Waiting or Idle: the socket's bytes read when the wait began (-1: not yet looked at). */
  mark: number
}

export class ConnectionTable<S> {
  private readonly open = new Set<Conn<S>>()
  private readonly perAddress = new Map<string, number>()
  /** Connections refused since the last `takeRefused`. */
  private refused = 0

  /** `readOf` answers how many bytes a socket has read so far. */
  constructor(
    private readonly limits: Readonly<ConnectionLimits>,
    private readonly readOf: (socket: S) => number,
  ) {}

  get size(): number {
    return this.open.size
  }

  /** The open connections from `address`. */
  countOf(address: string): number {
    return this.perAddress.get(address) ?? 0
  }

  /** Admits a new connection, or answers undefined when a limit is reached (the caller closes it at once). */
  admit(socket: S, address: string, now: number): Conn<S> | undefined {
    const fromAddress = this.perAddress.get(address) ?? 0
    if (this.open.size >= this.limits.maxConnections || fromAddress >= this.limits.maxConnectionsPerAddress) {
      this.refused++
      return undefined
    }
    const conn: Conn<S> = { socket, address, phase: Phase.Handshake, since: now, inflight: 0, mark: -1 }
    this.open.add(conn)
    this.perAddress.set(address, fromAddress + 1)
    return conn
  }

  /** Forgets a closed connection (idempotent). */
  release(conn: Conn<S>): void {
    if (!this.open.delete(conn)) return
    const left = (this.perAddress.get(conn.address) ?? 1) - 1
    if (left <= 0) this.perAddress.delete(conn.address)
    else this.perAddress.set(conn.address, left)
  }

  /** The sockets of every open connection. */
  sockets(): S[] {
    return [...this.open].map((c) => c.socket)
  }

  /** How many connections were refused since the last call. */
  takeRefused(): number {
    const n = this.refused
    this.refused = 0
    return n
  }

  /**
   * Notes the connections waiting for a request that have started receiving one, and answers those whose phase's
   * deadline has passed at `now`.
   */
  sweep(now: number): Conn<S>[] {
    const out: Conn<S>[] = []
    for (const conn of this.open) {
      if (conn.phase === Phase.Waiting || conn.phase === Phase.Idle) {
        const read = this.readOf(conn.socket)
        if (conn.mark === -1) conn.mark = read
        else if (read !== conn.mark) bytesIn(conn, now)
      }
      const limit = this.limitOf(conn.phase)
      if (limit !== undefined && now - conn.since > limit) out.push(conn)
    }
    return out
  }

  private limitOf(phase: Phase): number | undefined {
    switch (phase) {
      case Phase.Handshake:
        return this.limits.handshakeTimeoutMs
      case Phase.Waiting:
      case Phase.Headers:
        return this.limits.headersTimeoutMs
      case Phase.Body:
        return this.limits.requestTimeoutMs
      case Phase.Idle:
        return this.limits.keepAliveTimeoutMs
      case Phase.Writing:
        return this.limits.writeTimeoutMs
      case Phase.Closing:
        return Math.min(CLOSING_LINGER_MS, this.limits.headersTimeoutMs)
      case Phase.Busy:
        return undefined
    }
  }
}

/** The handshake is done (its socket had read `read` bytes): the connection waits for its first request. */
export function handshaken(conn: Conn<unknown>, now: number, read: number): void {
  if (conn.phase === Phase.Handshake) {
    conn.phase = Phase.Waiting
    conn.since = now
    conn.mark = read
  }
}

/**
 * Bytes came in: a connection waiting between requests starts receiving one (its clock starts now); a new
 * connection's first request keeps the clock of its handshake.
 */
export function bytesIn(conn: Conn<unknown>, now: number): void {
  if (conn.phase === Phase.Idle) {
    conn.phase = Phase.Headers
    conn.since = now
  } else if (conn.phase === Phase.Waiting) conn.phase = Phase.Headers
}

/** A request's headers are in: it is being answered (until `awaitingBody` says its body is awaited first). */
export function requestIn(conn: Conn<unknown>, now: number): void {
  conn.inflight++
  if (conn.phase === Phase.Closing) return
  // a pipelined request read with the previous one: its clock starts now
  if (conn.phase !== Phase.Headers) conn.since = now
  conn.phase = Phase.Busy
}

/** The request's body is awaited: it must be in within requestTimeoutMs of the request's first byte. */
export function awaitingBody(conn: Conn<unknown>): void {
  if (conn.phase === Phase.Busy) conn.phase = Phase.Body
}

/** The request's body is in: it is being answered. */
export function bodyIn(conn: Conn<unknown>): void {
  if (conn.phase === Phase.Body) conn.phase = Phase.Busy
}

/** The answer is being written: it must be out within writeTimeoutMs. */
export function writing(conn: Conn<unknown>, now: number): void {
  if (conn.phase === Phase.Busy) {
    conn.phase = Phase.Writing
    conn.since = now
  }
}

/** A request was answered: the connection waits for the next one, unless others are still being answered. */
export function answered(conn: Conn<unknown>, now: number): void {
  if (conn.inflight > 0) conn.inflight--
  if (conn.phase === Phase.Writing) conn.phase = Phase.Busy
  if (conn.inflight === 0 && conn.phase === Phase.Busy) {
    conn.phase = Phase.Idle
    conn.since = now
    conn.mark = -1
  }
}

/** The server closes the connection: it may linger a moment, then it is destroyed. */
export function closing(conn: Conn<unknown>, now: number): void {
  if (conn.phase === Phase.Closing) return
  conn.phase = Phase.Closing
  conn.since = now
}
