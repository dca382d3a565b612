/**
 * @module
 * A client for etcd's v3 JSON gateway (etcd 3.4: `/v3/kv/*`, `/v3/lease/*`, `/v3/maintenance/status`, `/v3/watch`)
 * over `fetch`, with no dependency. What the gateway does on the wire (measured on etcd 3.4.23, see
 * ../shared/reference/etcd-as-command-log.md):
 * - keys and values are base64; int64 numbers arrive as decimal strings; proto3 JSON leaves out every field at its
 *   default (a failed txn has no `succeeded`, a PUT event has no `type`, a zero count or lease is missing);
 * - an error is `{error, code, message}` with a gRPC code (14 = unavailable: no leader, request timed out, stopping);
 * - a streaming call (watch, lease keep-alive) answers one `{"result": …}` or `{"error": …}` JSON object a line.
 *
 * Failure policy: every request is timed (`timeoutMs` per attempt). A transport error, a timeout or an "unavailable"
 * answer moves on to the next endpoint and sends the same request again; the endpoint that answered is remembered for
 * the next request. When every attempt failed the call throws {@link EtcdUnavailableError} naming each endpoint and
 * why. An answer from etcd that is an error of the request itself (a future revision, a missing lease) throws
 * {@link EtcdRequestError} at once. Keys and values are UTF-8 strings (commands are JSON).
 *
 * Retrying a plain {@link EtcdClient.put} after a timeout may apply it twice (the first attempt can have been committed
 * although its answer never came); {@link EtcdClient.putIfAbsent} is the submission that is safe to retry.
 */

/** A key-value pair as stored in etcd. `lease` is the lease id as a decimal string, absent when none. */
export interface EtcdKv {
  key: string
  value: string
  createRevision: number
  modRevision: number
  version: number
  lease?: string
}

/** A change seen by a watch. A DELETE's kv has the key and the deletion's revision as `modRevision` (no value). */
export interface EtcdEvent {
  type: 'PUT' | 'DELETE'
  kv: EtcdKv
}

/** Every endpoint failed or timed out; the message says which and why. */
export class EtcdUnavailableError extends Error {
  override name = 'EtcdUnavailableError'
  /**
   * Whether an attempt may have reached etcd's log: one timed out, or its connection broke after it was made. False
   * when every attempt was refused before anything was proposed (connection refused, or etcd's immediate "no leader":
   * every request asks a member without a leader to say so at once rather than queue it).
   */
  constructor(
    message: string,
    readonly outcomeUnknown = true,
  ) {
    super(message)
  }
}

/** The pause after an immediate "no leader" answer, per round of attempts (at most 500 ms). */
const NO_LEADER_PAUSE_MS = 100

/** A failure after which nothing was proposed: the member was not reached, or said at once it has no leader. */
function surelyNotProposed(e: unknown): boolean {
  if (e instanceof RetryableFailure) return /no leader/i.test(e.message)
  const code = (e as { code?: unknown } | null)?.code
  return code === 'ECONNREFUSED' || code === 'ConnectionRefused'
}

/** The revision asked for is below etcd's compaction point (`compactRevision`): its history is gone. */
export class EtcdCompactedError extends Error {
  override name = 'EtcdCompactedError'
  constructor(readonly compactRevision: number) {
    super(`etcd history before revision ${compactRevision} has been compacted`)
  }
}

/** etcd refused the request itself (`{error, code, message}` with a gRPC status code other than unavailable). */
export class EtcdRequestError extends Error {
  override name = 'EtcdRequestError'
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message)
  }
}

export interface EtcdClientOptions {
  /** Client URLs of the members, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[]
  /** Deadline of one attempt (the whole request and its answer), in ms. Default 1000. */
  timeoutMs?: number
  /**
   * How many times each endpoint is tried per call. Attempts go round the endpoints (a, b, c, a, b, c, …), so with 2
   * a call survives one full round of failures such as an election longer than a timeout. Default 1.
   */
  attemptsPerEndpoint?: number
}

/** One member's `/v3/maintenance/status`. Member ids are uint64, so they are decimal strings. */
export interface EndpointStatus {
  endpoint: string
  ok: boolean
  memberId?: string
  /** The member id of the leader this member knows, absent when it knows none. */
  leader?: string
  revision?: number
  raftTerm?: number
  raftIndex?: number
  version?: string
  dbSize?: number
  /** Alarms etcd reports (e.g. NOSPACE). */
  alarms?: string[]
  /** Why the member did not answer (ok false). */
  error?: string
}

export interface EtcdWatchHandlers {
  /** A batch of events in revision order (never split inside a revision). A returned promise is awaited before the
   *  stream is read further. If it throws, the same batch is delivered again after a backoff. */
  onEvents(events: EtcdEvent[], headerRevision: number): void | Promise<void>
  /** The start revision is below the compaction point: the watch has stopped and will not deliver anything more. */
  onCompacted(compactRevision: number): void
  /** 'connected' (detail: the member's URL) when a member accepted the watch; 'retrying' (detail: the member and
   *  why) after a stream broke or ended, before resuming on the next member. */
  onState?(s: 'connected' | 'retrying', detail?: string): void
  /** A progress notification: no event on the prefix up to `headerRevision` is left undelivered by the stream. */
  onProgress?(headerRevision: number): void
}

export interface EtcdWatchOptions {
  /** Ask etcd for progress notifications while idle (their period is the member's
   *  `--experimental-watch-progress-notify-interval`, 10 min by default). Default true. */
  progressNotify?: boolean
  /**
   * The stream is abandoned (and resumed elsewhere) after this long without a byte from the member; default Bun's
   * fetch idle timeout (5 min), 0 for none. Set it above the member's progress notification interval, or an idle
   * prefix makes the watch reconnect (harmlessly: it resumes from the same revision) each time it elapses. Bun checks
   * it coarsely (a 2 s setting fired after about 8 s).
   */
  idleTimeoutMs?: number
}

export interface EtcdWatch {
  /** Ends the watch: no handler is called after the one running (if any) returns. */
  stop(): void
  /** Settles when the watch loop has ended (after stop(), or after onCompacted). Never rejects. */
  done: Promise<void>
}

/** gRPC status codes after which the same request is sent to the next endpoint. */
const GRPC_UNAVAILABLE = 14
const GRPC_DEADLINE_EXCEEDED = 4
const GRPC_NOT_FOUND = 5

const COMPACTED_MESSAGE = 'required revision has been compacted'

const WATCH_BACKOFF_MIN_MS = 50
const WATCH_BACKOFF_MAX_MS = 1000

const encoder = new TextEncoder()

function b64(bytes: Uint8Array | string): string {
  return Buffer.from(typeof bytes === 'string' ? encoder.encode(bytes) : bytes).toString('base64')
}

function fromB64(s: unknown): string {
  return typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : ''
}

/** An int64 of the gateway (a decimal string, or missing when 0) as a number (revisions stay far below 2^53). */
function int(v: unknown): number {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && v !== '') {
    const n = Number(v)
    if (Number.isFinite(n)) return n
  }
  return 0
}

/** The range end that selects every key starting with `prefix`: the prefix with its last byte below 0xff incremented
 *  (trailing 0xff bytes dropped); [0] (every key from `prefix` on) when there is none. */
function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = Uint8Array.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++
      return end.slice(0, i + 1)
    }
  }
  return new Uint8Array([0])
}

/** The key and range end of a prefix selection; the empty prefix selects every key (key "\0", end "\0"). */
function prefixRange(prefix: string): { key: string; range_end: string } {
  const bytes = encoder.encode(prefix)
  if (bytes.length === 0) return { key: b64(new Uint8Array([0])), range_end: b64(new Uint8Array([0])) }
  return { key: b64(bytes), range_end: b64(prefixEnd(bytes)) }
}

type Json = Record<string, unknown>

function obj(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {}
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

function decodeKv(raw: unknown): EtcdKv {
  const kv = obj(raw)
  const out: EtcdKv = {
    key: fromB64(kv.key),
    value: fromB64(kv.value),
    createRevision: int(kv.create_revision),
    modRevision: int(kv.mod_revision),
    version: int(kv.version),
  }
  const lease = kv.lease
  if ((typeof lease === 'string' || typeof lease === 'number') && String(lease) !== '0') out.lease = String(lease)
  return out
}

function decodeEvent(raw: unknown): EtcdEvent {
  const ev = obj(raw)
  // proto3 JSON leaves the default PUT (0) out
  return { type: ev.type === 'DELETE' || ev.type === 1 ? 'DELETE' : 'PUT', kv: decodeKv(ev.kv) }
}

function headerRevision(res: Json): number {
  return int(obj(res.header).revision)
}

/** A gateway error object (`{error, code, message}` or, in a stream, `{grpc_code, http_code, message}`), if it is one. */
function gatewayError(res: Json): { code: number; message: string } | undefined {
  if (typeof res.code === 'number' && (typeof res.message === 'string' || typeof res.error === 'string')) {
    return { code: res.code, message: String(res.message ?? res.error) }
  }
  if (typeof res.grpc_code === 'number') return { code: res.grpc_code, message: String(res.message ?? 'error') }
  return undefined
}

function describeFailure(e: unknown, timeoutMs: number): string {
  if (e instanceof Error) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs} ms`
    const code = (e as { code?: unknown }).code
    return typeof code === 'string' && !e.message.includes(code) ? `${code}: ${e.message}` : e.message
  }
  return String(e)
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })
}

/** Thrown inside a request attempt for an answer that means "try the next endpoint". */
class RetryableFailure extends Error {}

export class EtcdClient {
  private readonly endpoints: string[]
  private readonly timeoutMs: number
  private readonly attemptsPerEndpoint: number
  /** Index of the endpoint tried first: the last one that answered, or the one after the last that failed. */
  private current = 0
  private readonly closing = new AbortController()
  private readonly watches = new Set<EtcdWatch>()

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new TypeError('EtcdClient needs at least one endpoint')
    this.endpoints = opts.endpoints.map((e) => e.replace(/\/+$/, ''))
    this.timeoutMs = opts.timeoutMs ?? 1000
    this.attemptsPerEndpoint = Math.max(1, opts.attemptsPerEndpoint ?? 1)
  }

  /**
   * Creates `key` only if it does not exist (txn: CREATE revision == 0), the submission that is safe to retry. On a
   * timeout or transport error the same txn goes to the next endpoint. When the compare fails, the txn's failure branch
   * reads the key: if its value is ours, an earlier attempt of this call was committed after all, and the answer is
   * created:true with that revision (one submission is never applied twice); otherwise created:false. `revision` is
   * the key's mod revision either way. The key or the value must be unique to the submission (a command key such as
   * `<prefix>/<node>/<seq>`, or a submission id in the value): two submitters of the same value under the same key
   * would both hear created:true.
   */
  async putIfAbsent(key: string, value: string, opts: { lease?: string } = {}): Promise<{ created: boolean; revision: number }> {
    const k = b64(key)
    const v = b64(value)
    const put: Json = { key: k, value: v }
    if (opts.lease !== undefined) put.lease = opts.lease
    const res = await this.call('/v3/kv/txn', {
      compare: [{ key: k, target: 'CREATE', result: 'EQUAL', create_revision: '0' }],
      success: [{ request_put: put }],
      failure: [{ request_range: { key: k } }],
    })
    if (res.succeeded === true) return { created: true, revision: headerRevision(res) }
    const range = obj(obj(arr(res.responses)[0]).response_range)
    const found = arr(range.kvs)[0]
    if (found === undefined) {
      // the compare failed, so the key existed when the txn ran: this cannot happen with a single key
      throw new EtcdRequestError(`etcd txn on ${key} failed without the key existing`, 0)
    }
    const kv = obj(found)
    const storedValue = typeof kv.value === 'string' ? kv.value : ''
    return { created: storedValue === v, revision: int(kv.mod_revision) }
  }

  /** Puts `key` (not safe to retry: see the module note). `revision` is the revision of the put. */
  async put(key: string, value: string, opts: { lease?: string } = {}): Promise<{ revision: number }> {
    const body: Json = { key: b64(key), value: b64(value) }
    if (opts.lease !== undefined) body.lease = opts.lease
    const res = await this.call('/v3/kv/put', body)
    return { revision: headerRevision(res) }
  }

  /** The key's current kv, undefined when absent. */
  async get(key: string): Promise<EtcdKv | undefined> {
    const { kvs } = await this.range(key)
    return kvs[0]
  }

  /**
   * Reads one key, a prefix (`prefix: true`) or [key, rangeEnd). `revision` reads the store as of that revision; below
   * the compaction point it throws {@link EtcdCompactedError}. The answer's `revision` is the header's: the store's
   * current revision when the member answered (also when an older revision was read).
   */
  async range(
    key: string,
    opts: { prefix?: boolean; rangeEnd?: string; limit?: number; revision?: number; keysOnly?: boolean } = {},
  ): Promise<{ kvs: EtcdKv[]; revision: number; more: boolean }> {
    const body: Json = opts.prefix ? prefixRange(key) : { key: b64(key) }
    if (!opts.prefix && opts.rangeEnd !== undefined) body.range_end = b64(opts.rangeEnd)
    if (opts.limit !== undefined) body.limit = opts.limit
    if (opts.revision !== undefined) body.revision = opts.revision
    if (opts.keysOnly) body.keys_only = true
    let res: Json
    try {
      res = await this.call('/v3/kv/range', body)
    } catch (e) {
      if (e instanceof EtcdRequestError && e.message.includes(COMPACTED_MESSAGE)) {
        throw new EtcdCompactedError(await this.compactRevision())
      }
      throw e
    }
    return { kvs: arr(res.kvs).map(decodeKv), revision: headerRevision(res), more: res.more === true }
  }

  /** Deletes one key, or [key, rangeEnd) (rangeEnd "\0": every key from key on). */
  async deleteRange(key: string, rangeEnd?: string): Promise<{ deleted: number; revision: number }> {
    const body: Json = { key: b64(key) }
    if (rangeEnd !== undefined) body.range_end = b64(rangeEnd)
    const res = await this.call('/v3/kv/deleterange', body)
    return { deleted: int(res.deleted), revision: headerRevision(res) }
  }

  /**
   * Compacts the history below `revision` (physical: answers once the space is reclaimed). Compacting at or below an
   * earlier compaction is a no-op (the history is already gone), not an error; a future revision throws.
   */
  async compact(revision: number, physical = false): Promise<void> {
    try {
      await this.call('/v3/kv/compaction', { revision, physical })
    } catch (e) {
      if (e instanceof EtcdRequestError && e.message.includes(COMPACTED_MESSAGE)) return
      throw e
    }
  }

  /** The store's current revision: the header of a count-only range on the key "\0". */
  async currentRevision(): Promise<number> {
    const res = await this.call('/v3/kv/range', { key: b64(new Uint8Array([0])), count_only: true })
    return headerRevision(res)
  }

  /**
   * etcd's compaction point: the lowest revision a range or watch may still start from (a watch from it replays; one
   * from below it is cancelled with this compact revision). 0 when nothing below revision 2 was compacted.
   *
   * etcd 3.4 has no call that tells it, and the "has been compacted" error does not say where. A range at revision r
   * fails exactly when r < compact revision, and that predicate is monotonic in r, so a binary search over
   * [1, current revision] with count-only ranges finds it in about log2(current) requests (each a few ms). Reads are
   * linearizable, so every member answers the same; a compaction running meanwhile can only move the answer up.
   */
  async compactRevision(): Promise<number> {
    const readable = async (revision: number): Promise<boolean> => {
      try {
        await this.call('/v3/kv/range', { key: b64(new Uint8Array([0])), count_only: true, revision })
        return true
      } catch (e) {
        if (e instanceof EtcdRequestError && e.message.includes(COMPACTED_MESSAGE)) return false
        throw e
      }
    }
    if (await readable(1)) return 0
    // the current revision is always readable (a compaction may be at most the current revision)
    let lo = 1 // not readable
    let hi = await this.currentRevision() // readable
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (await readable(mid)) hi = mid
      else lo = mid
    }
    return hi
  }

  /** Grants a lease of `ttlSeconds`; its id as a decimal string (lease ids are int64). */
  async leaseGrant(ttlSeconds: number): Promise<string> {
    const res = await this.call('/v3/lease/grant', { TTL: ttlSeconds })
    // LeaseGrantResponse carries its own error string
    if (typeof res.error === 'string' && res.error !== '') throw new EtcdRequestError(res.error, 0)
    const id = res.ID
    if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '0') {
      throw new EtcdRequestError('etcd granted a lease without an id', 0)
    }
    return String(id)
  }

  /** Renews the lease once; its remaining TTL in seconds, 0 when it has expired or never existed. */
  async leaseKeepAlive(id: string): Promise<number> {
    // a bidirectional stream on the gateway: one request line, one `{"result": …}` line back, then the stream ends
    const res = await this.call('/v3/lease/keepalive', { ID: id })
    return int(obj(res.result).TTL)
  }

  /** Revokes the lease and deletes its keys; a lease that is already gone is not an error. */
  async leaseRevoke(id: string): Promise<void> {
    try {
      await this.call('/v3/lease/revoke', { ID: id })
    } catch (e) {
      if (e instanceof EtcdRequestError && e.code === GRPC_NOT_FOUND) return
      throw e
    }
  }

  /** Every endpoint's status, asked in parallel, each with the request timeout; never throws. */
  async status(): Promise<EndpointStatus[]> {
    return Promise.all(
      this.endpoints.map(async (endpoint): Promise<EndpointStatus> => {
        try {
          const res = await this.attempt(endpoint, '/v3/maintenance/status', {})
          const header = obj(res.header)
          const out: EndpointStatus = {
            endpoint,
            ok: true,
            memberId: String(header.member_id ?? ''),
            revision: int(header.revision),
            raftTerm: int(res.raftTerm ?? header.raft_term),
            raftIndex: int(res.raftIndex),
            dbSize: int(res.dbSize),
          }
          if (typeof res.leader === 'string' && res.leader !== '0') out.leader = res.leader
          if (typeof res.version === 'string') out.version = res.version
          const alarms = arr(res.errors).filter((x): x is string => typeof x === 'string')
          if (alarms.length > 0) out.alarms = alarms
          return out
        } catch (e) {
          return { endpoint, ok: false, error: e instanceof Error ? e.message : String(e) }
        }
      }),
    )
  }

  /**
   * Watches every key under `prefix` from `fromRevision` on. Events arrive in revision order; after a stream error or
   * end the watch resumes on the next endpoint from the last delivered revision + 1 (a revision is never split over
   * two batches, so nothing is missed or repeated), after a backoff of 50 ms doubling to 1 s. A cancellation with a
   * compact revision calls onCompacted and ends the watch. The loop never throws; handler errors only cause a retry.
   * The watch asks the member to end it when it loses its leader (gRPC metadata `hasleader`), so a member cut off from
   * the quorum does not keep a silent stream.
   */
  watch(prefix: string, fromRevision: number, handlers: EtcdWatchHandlers, opts: EtcdWatchOptions = {}): EtcdWatch {
    // etcd reads 0 as "from now", which a resumed watch could not repeat: the caller names the revision
    if (!Number.isSafeInteger(fromRevision) || fromRevision < 1) {
      throw new TypeError(`a watch starts from a revision >= 1 (currentRevision() + 1 for "from now"), not ${fromRevision}`)
    }
    const stopping = new AbortController()
    const onClose = () => stopping.abort()
    this.closing.signal.addEventListener('abort', onClose)
    const watch: EtcdWatch = {
      stop: () => stopping.abort(),
      done: Promise.resolve(),
    }
    watch.done = this.watchLoop(prefix, fromRevision, handlers, opts, stopping.signal)
      .catch(() => undefined)
      .finally(() => {
        this.closing.signal.removeEventListener('abort', onClose)
        this.watches.delete(watch)
      })
    this.watches.add(watch)
    return watch
  }

  /** Stops every watch and aborts every request in flight; later calls throw EtcdUnavailableError. */
  close(): void {
    this.closing.abort()
    for (const w of this.watches) w.stop()
  }

  private async watchLoop(
    prefix: string,
    fromRevision: number,
    handlers: EtcdWatchHandlers,
    opts: EtcdWatchOptions,
    signal: AbortSignal,
  ): Promise<void> {
    const state = { next: fromRevision, connected: false, compacted: false }
    let index = this.current
    let backoff = 0
    while (!signal.aborted) {
      const endpoint = this.endpoints[index]
      let detail: string
      state.connected = false
      try {
        await this.watchStream(endpoint, prefix, handlers, opts, signal, state)
        detail = `${endpoint}: the watch stream ended`
      } catch (e) {
        // once connected, a timeout is Bun's idle timeout (or a failing handler), not the connect deadline
        const why = state.connected && e instanceof Error ? `the watch stream broke: ${e.name}: ${e.message}` : describeFailure(e, this.timeoutMs)
        detail = `${endpoint}: ${why}`
      }
      if (state.compacted || signal.aborted) return
      try {
        handlers.onState?.('retrying', detail)
      } catch {
        // a state handler's failure changes nothing
      }
      index = (index + 1) % this.endpoints.length
      backoff = state.connected ? WATCH_BACKOFF_MIN_MS : Math.min(Math.max(backoff * 2, WATCH_BACKOFF_MIN_MS), WATCH_BACKOFF_MAX_MS)
      await sleep(backoff, signal)
    }
  }

  /** One watch stream on one endpoint: returns when it ends, throws when it breaks. Advances state.next only after the
   *  handler took a batch. */
  private async watchStream(
    endpoint: string,
    prefix: string,
    handlers: EtcdWatchHandlers,
    opts: EtcdWatchOptions,
    signal: AbortSignal,
    state: { next: number; connected: boolean; compacted: boolean },
  ): Promise<void> {
    const controller = new AbortController()
    const onStop = () => controller.abort()
    signal.addEventListener('abort', onStop)
    // until the member confirms the watch, the usual per-attempt deadline applies
    const connectTimer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), this.timeoutMs)
    try {
      const res = await fetch(`${endpoint}/v3/watch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'grpc-metadata-hasleader': 'true' },
        body: JSON.stringify({
          create_request: { ...prefixRange(prefix), start_revision: state.next, progress_notify: opts.progressNotify ?? true },
        }),
        signal: controller.signal,
        ...(opts.idleTimeoutMs !== undefined ? { timeout: opts.idleTimeoutMs === 0 ? false : opts.idleTimeoutMs } : {}),
      })
      if (!res.ok || res.body === null) {
        const text = await res.text().catch(() => '')
        const first = obj(safeParse(text.split('\n')[0] ?? ''))
        const err = gatewayError(first) ?? gatewayError(obj(first.error))
        throw new Error(err ? err.message : `HTTP ${res.status}: ${text.slice(0, 200)}`)
      }
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      let buffered = ''
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        buffered += decoder.decode(value, { stream: true })
        let nl: number
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim()
          buffered = buffered.slice(nl + 1)
          if (line === '') continue
          const msg = obj(safeParse(line))
          if (msg.error !== undefined) {
            const err = gatewayError(obj(msg.error))
            throw new Error(err ? err.message : `watch error ${JSON.stringify(msg.error)}`)
          }
          const result = obj(msg.result)
          const header = headerRevision(result)
          if (result.canceled === true) {
            const compactRevision = int(result.compact_revision)
            if (compactRevision > 0) {
              state.compacted = true
              try {
                handlers.onCompacted(compactRevision)
              } catch {
                // the watch ends either way
              }
              return
            }
            throw new Error(`watch cancelled: ${String(result.cancel_reason ?? 'no reason given')}`)
          }
          if (result.created === true) {
            clearTimeout(connectTimer)
            state.connected = true
            try {
              handlers.onState?.('connected', endpoint)
            } catch {
              // a state handler's failure changes nothing
            }
          }
          const events = arr(result.events)
            .map(decodeEvent)
            .filter((e) => e.kv.modRevision >= state.next)
          if (events.length > 0) {
            try {
              await handlers.onEvents(events, header)
            } catch (e) {
              // the batch is delivered again, with a growing backoff (a handler that keeps failing is not hammered)
              state.connected = false
              throw new Error(`the events handler failed: ${describeFailure(e, this.timeoutMs)}`)
            }
            if (signal.aborted) return
            state.next = events[events.length - 1].kv.modRevision + 1
          } else if (result.created !== true && arr(result.events).length === 0) {
            try {
              handlers.onProgress?.(header)
            } catch {
              // a progress handler's failure changes nothing
            }
          }
        }
      }
    } finally {
      clearTimeout(connectTimer)
      signal.removeEventListener('abort', onStop)
      controller.abort()
    }
  }

  /**
   * Sends one request, going round the endpoints from the current one until an attempt answers; remembers the
   * endpoint that answered. Throws EtcdRequestError for etcd's own refusals, EtcdUnavailableError when every attempt
   * failed.
   */
  private async call(path: string, body: Json): Promise<Json> {
    const failures: string[] = []
    let outcomeUnknown = false
    const n = this.endpoints.length
    const start = this.current
    for (let i = 0; i < n * this.attemptsPerEndpoint; i++) {
      if (this.closing.signal.aborted) throw new EtcdUnavailableError('etcd client closed')
      const index = (start + i) % n
      const endpoint = this.endpoints[index]
      try {
        const res = await this.attempt(endpoint, path, body)
        this.current = index
        return res
      } catch (e) {
        if (e instanceof EtcdRequestError) {
          this.current = index
          throw e
        }
        failures.push(`${endpoint}: ${e instanceof RetryableFailure ? e.message : describeFailure(e, this.timeoutMs)}`)
        if (!surelyNotProposed(e)) outcomeUnknown = true
        // the next call starts after the endpoint that failed
        this.current = (index + 1) % n
        // "no leader" comes at once (the request asks for it): give an election time before the next attempt, longer
        // each round, rather than spend every attempt within a millisecond
        if (e instanceof RetryableFailure && /no leader/i.test(e.message) && i + 1 < n * this.attemptsPerEndpoint) {
          await new Promise((r) => setTimeout(r, Math.min(NO_LEADER_PAUSE_MS * (Math.floor(i / n) + 1), 500)))
        }
      }
    }
    throw new EtcdUnavailableError(`etcd ${path} failed on every endpoint: ${failures.join('; ')}`, outcomeUnknown)
  }

  /** One timed POST to one endpoint: the answer's JSON (the first line of a stream), or a thrown reason. */
  private async attempt(endpoint: string, path: string, body: Json): Promise<Json> {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), this.timeoutMs)
    const onClose = () => controller.abort()
    this.closing.signal.addEventListener('abort', onClose)
    try {
      const res = await fetch(`${endpoint}${path}`, {
        method: 'POST',
        // a member without a leader answers "no leader" at once instead of holding the request until its own deadline
        headers: { 'content-type': 'application/json', 'grpc-metadata-hasleader': 'true' },
        body: JSON.stringify(body),
        signal: controller.signal,
      })
      const text = await res.text()
      const firstLine = text.split('\n').find((l) => l.trim() !== '') ?? ''
      const parsed = safeParse(firstLine)
      if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
        throw new RetryableFailure(`HTTP ${res.status} with an answer that is not JSON`)
      }
      const json = parsed as Json
      // a stream's error line is {"error": {grpc_code, message, …}}
      const err = gatewayError(json) ?? (typeof json.error === 'object' ? gatewayError(obj(json.error)) : undefined)
      if (err !== undefined) {
        if (err.code === GRPC_UNAVAILABLE || err.code === GRPC_DEADLINE_EXCEEDED) throw new RetryableFailure(err.message)
        throw new EtcdRequestError(err.message, err.code)
      }
      if (!res.ok) throw new RetryableFailure(`HTTP ${res.status}`)
      return json
    } finally {
      clearTimeout(timer)
      this.closing.signal.removeEventListener('abort', onClose)
    }
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
