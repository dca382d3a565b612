/**
 * The data integrity check and fix (`/database/check-data-integrity`, `/database/fix-data-integrity`,
 * `/database/data-integrity-results`): one run at a time, in the background, results kept until the next run.
 *
 * A run reads a copy of the store (store/store-copy.ts, taken by LMDB from one read transaction while writers go on),
 * in slices, so service listings, logins and writes keep being answered; it holds no actor's mailbox. It then checks
 * the stored records (integrity-checks.ts) and the actors' derived in-memory structures against them
 * (integrity-derived.ts), one table at a time, and rebuilds the policy index in slices: the event loop answers what
 * waits between any two pieces of work.
 * The fix writes a database snapshot first (the copy it checks), then sends each owning actor its repairs as one
 * message: the actors stay the only writers, and every repair is idempotent (a record already gone or already right
 * is left alone), so a repeated fix or a write racing the fix does no harm.
 * Failure story: a repair message refused or a commit failing leaves the findings not fixed (reported so); what was
 * committed before stays, and a second run finds only what is left. A crash mid-fix leaves the snapshot to go back to.
 */
import { readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ApiError } from '../../errors/api-error.ts'
import type { Clock } from '../../lib/clock.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { SessionRegistryActor } from '../../actors/session-registry/session-registry-actor.ts'
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { PolicyIndex } from '../../domain/policy/policy-index.ts'
import { storedRecordSteps, type Finding, type Repair } from './integrity-checks.ts'
import { checkPolicyIndex, derivedSteps } from './integrity-derived.ts'
import type { StoredRecords } from '../../domain/integrity/integrity-records.ts'
import type { DatabaseSnapshots } from './database-snapshot.ts'

/** Results kept per run (the real controller's limit); more set `tooManyErrors`. */
export const MAX_INTEGRITY_RESULTS = 1000

export interface IntegrityResults {
  startTime: number | null
  endTime: number | null
  error: string | null
  fixingErrors: boolean
  inProgress: boolean
  results: { description: string; fixed: boolean }[]
  tooManyErrors: boolean
}

export interface IntegrityDeps {
  /** The store's file: the check's temporary copy goes beside it. */
  dbPath: string
  /** Writes a consistent copy of the store to a path (store/store-copy.ts `copyStore`). */
  copyStore(destPath: string): Promise<void>
  /** Reads every record of a copy (store/store-copy.ts `readStoreCopy`), in slices. */
  readCopy(path: string): Promise<StoredRecords>
  identities: IdentityActor
  sessions: SessionRegistryActor
  graph: PolicyGraphActor
  ca: CaActor
  /** The policy resolver's maintained index. */
  policyIndex: Pick<PolicyIndex, 'dump'>
  snapshots: DatabaseSnapshots
  clock: Clock
}

export interface IntegrityRunner {
  /** Starts a check (or a check and fix) in the background; 429 RATE_LIMITED while one runs. */
  start(fix: boolean): void
  results(): IntegrityResults
  /** Resolves when no run is in progress (tests, shutdown). */
  idle(): Promise<void>
}

/** The check's temporary copy of the store, beside it: `integrity-check-<ms>.mdb` (removed when the check has read it). */
const CHECK_COPY_PREFIX = 'integrity-check-'

/** Lets the event loop answer what waits (requests, actors' commits) before the next slice of work. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve))

const SYSTEM: ChangeContext = { author: 'system', source: 'system' }

export function createIntegrityRunner(deps: IntegrityDeps): IntegrityRunner {
  let state: IntegrityResults = { startTime: null, endTime: null, error: null, fixingErrors: false, inProgress: false, results: [], tooManyErrors: false }
  let running: Promise<void> = Promise.resolve()
  return {
    start(fix) {
      if (state.inProgress) throw new ApiError('RATE_LIMITED')
      state = { startTime: deps.clock.now(), endTime: null, error: null, fixingErrors: fix, inProgress: true, results: [], tooManyErrors: false }
      const run = state
      running = runIntegrity(deps, fix)
        .then(({ findings, fixed }) => {
          run.tooManyErrors = findings.length > MAX_INTEGRITY_RESULTS
          run.results = findings.slice(0, MAX_INTEGRITY_RESULTS).map((f, i) => ({ description: f.description, fixed: fixed[i] ?? false }))
        })
        .catch((e: unknown) => {
          run.error = e instanceof Error ? e.message : String(e)
        })
        .finally(() => {
          run.endTime = deps.clock.now()
          run.inProgress = false
        })
    },
    results: () => state,
    idle: () => running,
  }
}

/** One run: the findings, and for a fix whether each was fixed. */
export async function runIntegrity(deps: IntegrityDeps, fix: boolean): Promise<{ findings: Finding[]; fixed: boolean[] }> {
  const dir = dirname(deps.dbPath)
  // a check's copy left by a process that stopped mid-run goes first
  for (const f of readdirSync(dir)) if (f.startsWith(CHECK_COPY_PREFIX)) rmSync(join(dir, f), { force: true })
  const copyPath = fix ? await deps.snapshots.write() : join(dir, `${CHECK_COPY_PREFIX}${deps.clock.now()}.mdb`)
  let records: StoredRecords
  try {
    if (!fix) await deps.copyStore(copyPath)
    records = await deps.readCopy(copyPath)
  } finally {
    // the check's own copy goes; the fix's copy is its snapshot: kept
    if (!fix) rmSync(copyPath, { force: true })
  }
  const live = { identities: deps.identities.snapshot(), graph: deps.graph.snapshot(), ca: deps.ca.snapshot(), policyIndex: deps.policyIndex }
  const findings: Finding[] = []
  for (const step of [...storedRecordSteps(records, findings), ...derivedSteps(live, records, findings)]) {
    step()
    await yieldToRequests()
  }
  findings.push(...(await checkPolicyIndex(live, yieldToRequests)))
  return { findings, fixed: fix ? await repair(deps, findings) : findings.map(() => false) }
}

/** Sends every owning actor its repairs in one message; a finding is fixed when its actor committed them. */
async function repair(deps: IntegrityDeps, findings: readonly Finding[]): Promise<boolean[]> {
  const of = <A extends Repair['actor']>(actor: A) =>
    findings.flatMap((f) => (f.repair?.actor === actor ? [f.repair.repair] : [])) as Extract<Repair, { actor: A }>['repair'][]
  const done = new Map<Repair['actor'], boolean>()
  const settle = async (actor: Repair['actor'], send: () => Promise<unknown>) => {
    try {
      await send()
      done.set(actor, true)
    } catch {
      done.set(actor, false)
    }
  }
  const sends: [Repair['actor'], () => Promise<unknown>][] = [
    ['identity', () => deps.identities.ask({ type: 'integrity.repair', repairs: of('identity'), change: SYSTEM })],
    ['policy-graph', () => deps.graph.ask({ type: 'integrity.repair', repairs: of('policy-graph'), change: SYSTEM })],
    ['session-registry', () => deps.sessions.ask({ type: 'integrity.repair', repairs: of('session-registry'), change: SYSTEM })],
  ]
  for (const [actor, send] of sends) if (findings.some((f) => f.repair?.actor === actor)) await settle(actor, send)
  return findings.map((f) => (f.repair ? (done.get(f.repair.actor) ?? false) : false))
}
