/**
 * `edgeplane status`: what an operator checks first. Offline (`--data DIR`, a running controller is not disturbed:
 * the store is opened read-only) or online (`--url URL`, through the Management API with an admin login).
 */
import { lstat, readdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathExists } from '../lib/path-exists.ts'
import { callJson } from '../lib/json-call.ts'
import { CONTROLLER_PKI_FILES } from '../pki/pki-bootstrap.ts'
import { parseCertificatePem } from '../pki/pki-certs.ts'
import { storePathOf } from '../store/store-env.ts'
import { SCHEMA_VERSION } from '../store/store-migrations.ts'
import { readStoreFacts } from '../store/store-stats.ts'
import { PKI_DIR_NAME } from './operate-backup.ts'

const DAY_MS = 24 * 60 * 60_000
/** A certificate expiring within this many days is a warning (as the start-up warning). */
export const CERT_WARN_DAYS = 30

export interface CertificateStatus {
  file: string
  subject: string
  notAfter: string
  daysLeft: number
}

/** The offline status of a data directory. */
export interface DataDirStatus {
  dataDir: string
  schemaVersion: number
  /** This binary's schema version: a store newer than it will not start. */
  binarySchemaVersion: number
  counts: Record<string, number>
  /** A cluster member's data directory: its cluster and the log revision its state is at. */
  cluster?: { id: string; appliedRevision: number }
  /** The LMDB file's size on disk. */
  storeBytes: number
  /** Everything in the data directory. */
  dataDirBytes: number
  certificates: CertificateStatus[]
  /** Findings an operator should act on: certificates expiring soon, a newer schema. */
  warnings: string[]
}

export async function readDataDirStatus(dir: string, now: number): Promise<DataDirStatus> {
  const dataDir = resolve(dir)
  const { schemaVersion, counts, cluster } = await readStoreFacts(dataDir)
  const warnings: string[] = []
  if (schemaVersion > SCHEMA_VERSION) warnings.push(`the store has schema version ${schemaVersion}; this edgeplane understands up to ${SCHEMA_VERSION}`)
  const certificates: CertificateStatus[] = []
  for (const file of [CONTROLLER_PKI_FILES.serverCert, CONTROLLER_PKI_FILES.intermediateCert, CONTROLLER_PKI_FILES.rootCert]) {
    const path = join(dataDir, PKI_DIR_NAME, file)
    if (!(await pathExists(path))) {
      warnings.push(`${path} is missing`)
      continue
    }
    const view = parseCertificatePem(await readFile(path, 'utf8'))
    const daysLeft = Math.floor((view.notAfter - now) / DAY_MS)
    certificates.push({ file, subject: view.subjectCn, notAfter: new Date(view.notAfter).toISOString(), daysLeft })
    if (daysLeft < CERT_WARN_DAYS) warnings.push(`${file} (${view.subjectCn}) ${daysLeft < 0 ? 'has expired' : `expires in ${daysLeft} days`}`)
  }
  return {
    dataDir,
    schemaVersion,
    binarySchemaVersion: SCHEMA_VERSION,
    counts,
    ...(cluster ? { cluster } : {}),
    storeBytes: (await lstat(storePathOf(dataDir))).size,
    dataDirBytes: await treeBytes(dataDir),
    certificates,
    warnings,
  }
}

async function treeBytes(path: string): Promise<number> {
  const st = await lstat(path)
  if (!st.isDirectory()) return st.size
  let total = 0
  for (const name of await readdir(path)) total += await treeBytes(join(path, name))
  return total
}

export function renderDataDirStatus(s: DataDirStatus): string {
  const lines = [
    `data directory: ${s.dataDir}`,
    `schema version: ${s.schemaVersion} (this edgeplane: ${s.binarySchemaVersion})`,
    `store size: ${formatBytes(s.storeBytes)} (data directory: ${formatBytes(s.dataDirBytes)})`,
    ...(s.cluster ? [clusterLine(s.cluster)] : []),
    'records:',
    ...Object.entries(s.counts).map(([k, n]) => `  ${k}: ${n}`),
    'certificates:',
    ...s.certificates.map((c) => `  ${c.file} (${c.subject}): valid until ${c.notAfter}, ${c.daysLeft} days left`),
  ]
  lines.push(s.warnings.length === 0 ? 'health: ok' : `health: ${s.warnings.length} warning(s)`, ...s.warnings.map((w) => `  warning: ${w}`))
  return `${lines.join('\n')}\n`
}

/** The line of a cluster member's store (status of a data directory, backup, restore). */
export function clusterLine(c: { id: string; appliedRevision: number }): string {
  return `cluster: member of cluster ${c.id}, state at log revision ${c.appliedRevision}`
}

/** A running controller's status, read through the Management API. */
export interface ServerStatus {
  url: string
  version: string
  revision: string
  startedAt: string
  uptimeSeconds: number
  /** GET /summary. */
  counts: Record<string, number>
  /** GET /health-checks: `not served` when the controller has no such endpoint. */
  health: { status: number | 'not served'; healthy: boolean; failing: string[] }
}

export interface ServerStatusOptions {
  url: string
  username: string
  password: string
  /** PEM of the CA that signed the controller's server certificate; undefined = the system's roots. */
  caPem?: string
  insecure?: boolean
}

const MGMT = '/edge/management/v1'

export async function readServerStatus(o: ServerStatusOptions): Promise<ServerStatus> {
  const base = o.url.replace(/\/+$/, '')
  const tls = o.insecure ? { rejectUnauthorized: false } : o.caPem !== undefined ? { ca: o.caPem } : undefined
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const { status, envelope } = await callJson(`${base}${path}`, method, { token, body, tls })
    return { status, data: (envelope?.data ?? {}) as Record<string, unknown> }
  }
  const login = await call('POST', `${MGMT}/authenticate?method=password`, undefined, { username: o.username, password: o.password })
  if (login.status !== 200 || typeof login.data.token !== 'string') throw new Error(`login as ${o.username} at ${base} failed (HTTP ${login.status})`)
  const token = login.data.token
  try {
    const info = await call('GET', `${MGMT}/edgeplane-status`, token)
    if (info.status !== 200) throw new Error(`GET ${MGMT}/edgeplane-status answered HTTP ${info.status} (is ${o.username} an admin?)`)
    const summary = await call('GET', `${MGMT}/summary`, token)
    if (summary.status !== 200) throw new Error(`GET ${MGMT}/summary answered HTTP ${summary.status}`)
    return {
      url: base,
      version: String(info.data.version),
      revision: String(info.data.revision),
      startedAt: String(info.data.startedAt),
      uptimeSeconds: Number(info.data.uptimeSeconds),
      counts: summary.data as Record<string, number>,
      health: await readHealth(call),
    }
  } finally {
    await call('DELETE', `${MGMT}/current-api-session`, token)
  }
}

/**
 * HEALTH CALL SITE: the controller's `GET /health-checks` (no session). Answers `not served` where the controller
 * has no such endpoint; otherwise healthy on 200, with the ids of the checks that report themselves unhealthy.
 */
async function readHealth(
  call: (method: string, path: string) => Promise<{ status: number; data: Record<string, unknown> }>,
): Promise<ServerStatus['health']> {
  const res = await call('GET', '/health-checks')
  if (res.status === 404) return { status: 'not served', healthy: true, failing: [] }
  const checks = Array.isArray(res.data.checks) ? (res.data.checks as { id?: unknown; healthy?: unknown }[]) : []
  const failing = checks.filter((c) => c.healthy === false).map((c) => String(c.id))
  return { status: res.status, healthy: res.status === 200 && failing.length === 0, failing }
}

export function renderServerStatus(s: ServerStatus): string {
  const health =
    s.health.status === 'not served'
      ? 'health: not served by this controller'
      : `health: ${s.health.healthy ? 'ok' : 'FAILING'} (HTTP ${s.health.status}${s.health.failing.length > 0 ? `; failing: ${s.health.failing.join(', ')}` : ''})`
  return [
    `controller: ${s.url}`,
    `version: ${s.version} (revision ${s.revision})`,
    `started: ${s.startedAt} (up ${formatDuration(s.uptimeSeconds)})`,
    'counts:',
    ...Object.entries(s.counts).map(([k, n]) => `  ${k}: ${n}`),
    health,
    '',
  ].join('\n')
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`
  return `${(n / 1024 ** 3).toFixed(2)} GiB`
}

function formatDuration(seconds: number): string {
  const d = Math.floor(seconds / 86400)
  const h = Math.floor((seconds % 86400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  return `${d > 0 ? `${d}d ` : ''}${h}h ${m}m ${Math.floor(seconds % 60)}s`
}
