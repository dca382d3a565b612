/**
 * `GET /health-checks` on the listener, without a session, in the shape of the real controller's health-checks API:
 * `{data:{healthy, checks:[{id, healthy, lastCheckTime, lastCheckDuration, consecutiveFailures, failingSince?,
 * details}]}, meta:{}}`, 200 when every check passes, else 503 (the failing checks say `healthy: false` and why).
 * The checks run on each request (each is a read of memory or one LMDB read transaction, no write):
 * - `lmdb`: the environment answers a read of the schema version and the data directory is writable;
 * - `actors`: no actor's oldest queued message has waited longer than `stuckAfterMs`;
 * - `server-certificate`: the TLS server certificate is inside its validity window (within 30 days of its end it
 *   passes with a warning in its details);
 * - `cluster` (a cluster node only): the log is live and etcd answered the last heartbeat (http-cluster.ts).
 */
import type { MailboxView } from '../actors/runtime/actor-runtime.ts'

/** One check's verdict: healthy or not, and a line saying what it saw. */
export interface CheckVerdict {
  healthy: boolean
  details: string
}

export interface HealthDeps {
  /** Reads the store; throws or answers unhealthy when it cannot. */
  lmdb(): CheckVerdict
  mailboxes: readonly MailboxView[]
  /** The server certificate's validity window (epoch ms) as the listener serves it now. */
  serverCertificate(): { notBefore: number; notAfter: number }
  now(): number
  stuckAfterMs?: number
  /** A cluster node's check (absent on a single node). */
  cluster?(): CheckVerdict
}

export const CERT_WARN_DAYS = 30
const DAY_MS = 24 * 60 * 60_000

/** The verdict on a server certificate at `now`: expired or not yet valid is unhealthy; the last 30 days warn. */
export function certificateVerdict(validity: { notBefore: number; notAfter: number }, now: number): CheckVerdict {
  const until = new Date(validity.notAfter).toISOString()
  if (now < validity.notBefore) return { healthy: false, details: `not valid before ${new Date(validity.notBefore).toISOString()}` }
  if (now >= validity.notAfter) return { healthy: false, details: `expired at ${until}` }
  const days = Math.floor((validity.notAfter - now) / DAY_MS)
  return { healthy: true, details: days < CERT_WARN_DAYS ? `warning: expires in ${days} days (${until}); renew it` : `valid until ${until}` }
}

function actorsVerdict(mailboxes: readonly MailboxView[], stuckAfterMs: number): CheckVerdict {
  const stuck = mailboxes.filter((m) => m.oldestWaitMs() > stuckAfterMs)
  if (stuck.length > 0) {
    return { healthy: false, details: stuck.map((m) => `${m.name}: a message has waited ${Math.round(m.oldestWaitMs())} ms`).join('; ') }
  }
  return { healthy: true, details: mailboxes.map((m) => `${m.name}: ${m.mailboxDepth()} queued`).join('; ') }
}

interface CheckState {
  consecutiveFailures: number
  failingSince?: number
}

/** The health-checks answer, with the failure streak of each check kept between requests. */
export function createHealthChecks(deps: HealthDeps): () => Response {
  const stuckAfterMs = deps.stuckAfterMs ?? 10_000
  const checks: [string, () => CheckVerdict][] = [
    ['lmdb', deps.lmdb],
    ['actors', () => actorsVerdict(deps.mailboxes, stuckAfterMs)],
    ['server-certificate', () => certificateVerdict(deps.serverCertificate(), deps.now())],
    ...(deps.cluster ? [['cluster', deps.cluster] as [string, () => CheckVerdict]] : []),
  ]
  const states = new Map<string, CheckState>(checks.map(([id]) => [id, { consecutiveFailures: 0 }]))
  return () => {
    const results = checks.map(([id, run]) => {
      const startedAt = performance.now()
      let verdict: CheckVerdict
      try {
        verdict = run()
      } catch (e) {
        verdict = { healthy: false, details: (e as Error).message }
      }
      const at = deps.now()
      const state = states.get(id)!
      if (verdict.healthy) {
        state.consecutiveFailures = 0
        state.failingSince = undefined
      } else {
        state.consecutiveFailures++
        state.failingSince ??= at
      }
      return {
        id,
        healthy: verdict.healthy,
        lastCheckTime: new Date(at).toISOString(),
        lastCheckDuration: `${(performance.now() - startedAt).toFixed(3)}ms`,
        consecutiveFailures: state.consecutiveFailures,
        ...(state.failingSince !== undefined ? { failingSince: new Date(state.failingSince).toISOString() } : {}),
        details: verdict.details,
      }
    })
    const healthy = results.every((r) => r.healthy)
    return Response.json({ data: { healthy, checks: results }, meta: {} }, { status: healthy ? 200 : 503 })
  }
}
