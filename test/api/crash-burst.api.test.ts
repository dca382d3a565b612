// Reliability (issue 12): kill -9 of a child controller in the middle of a mixed burst from 50 clients, ten of each
// kind: identity creates and deletes; service and service-policy creates and deletes; updb enrollments (identity
// with an enrollment, then its redemption); logins and logouts; MFA enrollment, verification and removal. Every
// answer is written to a ledger: a 2xx fixes the fact (present/absent, the MFA state, the session valid/ended), a
// request the kill cut off leaves either outcome possible. After a restart on the same directory every fact must hold,
// nothing may be half-written (an enrolled identity has its enrollment or its authenticator, never both or neither),
// and the data must be consistent (`assertDataConsistent`: references through the API, then the integrity check).
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { totpCodeAt, totpStepAt } from '../../src/domain/identity/identity-mfa.ts'
import { childLogin, childRequest, killChildren, startChild, type ChildAnswer } from '../support/child-controller.ts'

const ADMIN_PASSWORD = 'crash-admin-pass-1'
const USER_PASSWORD = 'crash-user-pass-1'
const PER_KIND = 10
const M = '/edge/management/v1'
const C = '/edge/client/v1'
const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-crash-'))

afterAll(() => {
  killChildren()
  rmSync(dataDir, { recursive: true, force: true })
})

/**
 * What each acknowledged answer fixed. `begin` records the outcome a request would have, `ack` makes it the fact; a
 * request that got no answer (the kill) leaves its outcome possible beside the last acknowledged one.
 */
class Ledger {
  private readonly facts = new Map<string, { acked: string | undefined; maybe: string | undefined }>()
  readonly acks = new Map<string, number>()

  begin(key: string, outcome: string): void {
    const f = this.facts.get(key) ?? { acked: undefined, maybe: undefined }
    this.facts.set(key, { acked: f.acked, maybe: outcome })
  }

  ack(kind: string, key: string, outcome: string): void {
    this.facts.set(key, { acked: outcome, maybe: undefined })
    this.acks.set(kind, (this.acks.get(kind) ?? 0) + 1)
  }

  /** The facts whose outcome after the restart (`actual(key)`) is neither the acknowledged nor the cut-off one. */
  async broken(prefix: string, actual: (key: string) => Promise<string> | string): Promise<string[]> {
    const out: string[] = []
    for (const [key, f] of this.facts) {
      if (!key.startsWith(prefix) || f.acked === undefined) continue
      const got = await actual(key)
      if (got !== f.acked && got !== f.maybe) out.push(`${key}: ${got}, acknowledged ${f.acked}${f.maybe ? ` (or ${f.maybe})` : ''}`)
    }
    return out
  }

  get total(): number {
    let n = 0
    for (const v of this.acks.values()) n += v
    return n
  }
}

type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<ChildAnswer>

/** The five kinds of client; each loops until `running()` is false or its connection dies with the process. */
function workers(call: Call, admin: string, ledger: Ledger, running: () => boolean, users: { login: string[]; mfa: string[] }) {
  const identity = async (w: number) => {
    const mine: string[] = []
    for (let n = 0; running(); n++) {
      if (n % 3 === 2 && mine.length > 0) {
        const id = mine.shift()!
        ledger.begin(`identity:${id}`, 'absent')
        if ((await call('DELETE', `${M}/identities/${id}`, undefined, admin)).status === 200) ledger.ack('identity delete', `identity:${id}`, 'absent')
        continue
      }
      const res = await call('POST', `${M}/identities`, { name: `crash-id-${w}-${n}`, type: 'User', isAdmin: false, roleAttributes: ['crash'] }, admin)
      if (res.status !== 201) continue
      mine.push(res.body.data.id)
      ledger.ack('identity create', `identity:${res.body.data.id}`, 'present')
    }
  }
  const servicePolicy = async (w: number) => {
    for (let n = 0; running(); n++) {
      const svc = await call('POST', `${M}/services`, { name: `crash-svc-${w}-${n}`, roleAttributes: ['crash'], encryptionRequired: true }, admin)
      if (svc.status !== 201) continue
      const serviceId = svc.body.data.id
      ledger.ack('service create', `service:${serviceId}`, 'present')
      const policy = { name: `crash-sp-${w}-${n}`, type: 'Dial', semantic: 'AnyOf', identityRoles: ['#crash'], serviceRoles: [`@${serviceId}`], postureCheckRoles: [] }
      const sp = await call('POST', `${M}/service-policies`, policy, admin)
      if (sp.status !== 201) continue
      const policyId = sp.body.data.id
      ledger.ack('service policy create', `policy:${policyId}`, 'present')
      // every other round deletes the service (its policy stays, without the @id), the others the policy
      const [key, path] = n % 2 === 0 ? [`service:${serviceId}`, `${M}/services/${serviceId}`] : [`policy:${policyId}`, `${M}/service-policies/${policyId}`]
      ledger.begin(key, 'absent')
      if ((await call('DELETE', path, undefined, admin)).status === 200) ledger.ack(key.startsWith('service') ? 'service delete' : 'service policy delete', key, 'absent')
    }
  }
  const enrollment = async (w: number) => {
    for (let n = 0; running(); n++) {
      const username = `crash-enr-${w}-${n}`
      const res = await call('POST', `${M}/identities`, { name: username, type: 'User', isAdmin: false, enrollment: { updb: username } }, admin)
      if (res.status !== 201) continue
      const id = res.body.data.id
      ledger.ack('enrollment create', `enrolled:${id}`, 'enrollment')
      const detail = await call('GET', `${M}/identities/${id}`, undefined, admin)
      if (detail.status !== 200) continue
      ledger.begin(`enrolled:${id}`, 'authenticator')
      const redeemed = await call('POST', `${C}/enroll/updb?token=${detail.body.data.enrollment.updb.token}`, { password: USER_PASSWORD })
      if (redeemed.status === 200) ledger.ack('enrollment redeem', `enrolled:${id}`, 'authenticator')
    }
  }
  const login = async (w: number) => {
    for (let n = 0; running(); n++) {
      const res = await call('POST', `${C}/authenticate?method=password`, { username: users.login[w], password: USER_PASSWORD })
      if (res.status !== 200) continue
      const token = res.body.data.token
      ledger.ack('login', `session:${token}`, 'valid')
      if (n % 2 === 1) continue
      ledger.begin(`session:${token}`, 'ended')
      if ((await call('DELETE', `${C}/current-api-session`, undefined, token)).status === 200) ledger.ack('logout', `session:${token}`, 'ended')
    }
  }
  const mfa = async (w: number) => {
    const token = users.mfa[w]
    const key = `mfa:${token}`
    ledger.ack('mfa setup', key, 'none')
    while (running()) {
      ledger.begin(key, 'unverified')
      if ((await call('POST', `${C}/current-identity/mfa`, {}, token)).status !== 201) continue
      ledger.ack('mfa enroll', key, 'unverified')
      const detail = await call('GET', `${C}/current-identity/mfa`, undefined, token)
      if (detail.status !== 200) continue
      const secret = new URL(detail.body.data.provisioningUrl).searchParams.get('secret')!
      const step = totpStepAt(Date.now())
      ledger.begin(key, 'verified')
      if ((await call('POST', `${C}/current-identity/mfa/verify`, { code: totpCodeAt(secret, step) }, token)).status !== 200) continue
      ledger.ack('mfa verify', key, 'verified')
      // the next step's code: the one just used can not be used again
      ledger.begin(key, 'none')
      if ((await call('DELETE', `${C}/current-identity/mfa`, { code: totpCodeAt(secret, step + 1) }, token)).status !== 200) continue
      ledger.ack('mfa remove', key, 'none')
    }
  }
  const kinds = [identity, servicePolicy, enrollment, login, mfa]
  return kinds.flatMap((kind) => Array.from({ length: PER_KIND }, (_, w) => kind(w).catch(() => undefined)))
}

/** Every page of a Management list (the largest page the lists allow). */
async function listAll(url: string, token: string, path: string): Promise<any[]> {
  const out: any[] = []
  for (let offset = 0; ; offset += 500) {
    const res = await childRequest(url, 'GET', `${M}${path}${path.includes('?') ? '&' : '?'}limit=500&offset=${offset}`, { token })
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    out.push(...res.body.data)
    if (out.length >= res.body.meta.pagination.totalCount) return out
  }
}

/**
 * The data is consistent: every reference between records resolves. This is where the controller's own integrity
 * check plugs in (`POST /database/check-data-integrity`, then `GET /database/data-integrity-results` must list no
 * result) once it exists; until then the references the API shows are checked here: authenticators, enrollments and
 * API sessions name existing identities, service policies' `@id` roles name existing services and identities.
 */
async function assertDataConsistent(url: string, token: string): Promise<void> {
  const identities = new Set((await listAll(url, token, '/identities')).map((i) => i.id))
  const services = new Set((await listAll(url, token, '/services')).map((s) => s.id))
  const dangling: string[] = []
  for (const a of await listAll(url, token, '/authenticators')) if (!identities.has(a.identityId)) dangling.push(`authenticator ${a.id} → ${a.identityId}`)
  for (const e of await listAll(url, token, '/enrollments')) if (!identities.has(e.identityId)) dangling.push(`enrollment ${e.id} → ${e.identityId}`)
  for (const s of await listAll(url, token, '/api-sessions')) if (!identities.has(s.identityId)) dangling.push(`api session ${s.id} → ${s.identityId}`)
  for (const p of await listAll(url, token, '/service-policies')) {
    for (const r of p.serviceRoles as string[]) if (r.startsWith('@') && !services.has(r.slice(1))) dangling.push(`policy ${p.name} → service ${r}`)
    for (const r of p.identityRoles as string[]) if (r.startsWith('@') && !identities.has(r.slice(1))) dangling.push(`policy ${p.name} → identity ${r}`)
  }
  expect(dangling).toEqual([])
  // the data-integrity check over everything stored: references, unique values, the derived indexes
  expect((await childRequest(url, 'POST', `${M}/database/check-data-integrity`, { token })).status).toBe(202)
  for (;;) {
    const res = await childRequest(url, 'GET', `${M}/database/data-integrity-results`, { token })
    const state = res.body.data as { inProgress: boolean; error: string | null; results: { description: string }[] }
    if (state.inProgress) {
      await Bun.sleep(20)
      continue
    }
    expect(state.results.map((r) => r.description)).toEqual([])
    expect(state.error ?? '').toBe('')
    return
  }
}

describe('kill -9 during a mixed burst from 50 clients', () => {
  it('keeps every acknowledged write and delete, half-writes nothing, and stays consistent', async () => {
    const first = await startChild(dataDir, ADMIN_PASSWORD)
    const admin = await childLogin(first.url, 'admin', ADMIN_PASSWORD)
    const call: Call = (method, path, body, token) => childRequest(first.url, method, path, { body, token })
    // the login and MFA clients' users, and the MFA clients' sessions, exist before the burst
    const user = async (name: string) => {
      const id = (await call('POST', `${M}/identities`, { name, type: 'User', isAdmin: false }, admin)).body.data.id
      expect((await call('POST', `${M}/authenticators`, { identityId: id, method: 'updb', username: name, password: USER_PASSWORD }, admin)).status).toBe(201)
      return name
    }
    const users = {
      login: await Promise.all(Array.from({ length: PER_KIND }, (_, w) => user(`crash-login-${w}`))),
      mfa: await Promise.all(Array.from({ length: PER_KIND }, async (_, w) => childLogin(first.url, await user(`crash-mfa-${w}`), USER_PASSWORD))),
    }

    const ledger = new Ledger()
    let running = true
    const clients = workers(call, admin, ledger, () => running, users)
    expect(clients).toHaveLength(50)
    // let every kind get acknowledged writes in, then kill without warning while requests are in flight
    const kinds = ['identity create', 'identity delete', 'service create', 'service policy create', 'enrollment redeem', 'login', 'logout', 'mfa verify', 'mfa remove']
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline && (ledger.total < 400 || kinds.some((k) => (ledger.acks.get(k) ?? 0) < 3))) await Bun.sleep(10)
    first.proc.kill(9)
    running = false
    await Promise.all(clients)
    await first.proc.exited
    console.log(`crash burst: ${ledger.total} acknowledged answers before kill -9: ${JSON.stringify(Object.fromEntries(ledger.acks))}`)
    for (const k of kinds) expect(ledger.acks.get(k) ?? 0).toBeGreaterThanOrEqual(1)

    const second = await startChild(dataDir, ADMIN_PASSWORD)
    try {
      const url = second.url
      const token = await childLogin(url, 'admin', ADMIN_PASSWORD)
      const identities = new Set((await listAll(url, token, '/identities')).map((i) => i.id))
      const services = new Set((await listAll(url, token, '/services')).map((s) => s.id))
      const policies = new Set((await listAll(url, token, '/service-policies')).map((p) => p.id))
      const enrollments = new Set((await listAll(url, token, '/enrollments')).map((e) => e.identityId))
      const authenticators = new Set((await listAll(url, token, '/authenticators')).map((a) => a.identityId))
      const presence = (set: Set<string>) => (key: string) => (set.has(key.slice(key.indexOf(':') + 1)) ? 'present' : 'absent')
      expect(await ledger.broken('identity:', presence(identities))).toEqual([])
      expect(await ledger.broken('service:', presence(services))).toEqual([])
      expect(await ledger.broken('policy:', presence(policies))).toEqual([])
      // an enrolled identity has its enrollment or its authenticator: never both, never neither
      expect(await ledger.broken('enrolled:', (key) => {
        const id = key.slice('enrolled:'.length)
        const has = [enrollments.has(id), authenticators.has(id)]
        return has[0] && !has[1] ? 'enrollment' : has[1] && !has[0] ? 'authenticator' : `enrollment ${has[0]}, authenticator ${has[1]}`
      })).toEqual([])
      expect(await ledger.broken('session:', async (key) => {
        const res = await childRequest(url, 'GET', `${C}/current-api-session`, { token: key.slice('session:'.length) })
        return res.status === 200 ? 'valid' : res.status === 401 ? 'ended' : `status ${res.status}`
      })).toEqual([])
      expect(await ledger.broken('mfa:', async (key) => {
        const res = await childRequest(url, 'GET', `${C}/current-identity/mfa`, { token: key.slice('mfa:'.length) })
        if (res.status === 404) return 'none'
        return res.status === 200 ? (res.body.data.isVerified ? 'verified' : 'unverified') : `status ${res.status}`
      })).toEqual([])
      await assertDataConsistent(url, token)
    } finally {
      second.proc.kill('SIGTERM')
      expect(await second.proc.exited).toBe(0)
    }
  }, 90_000)
})
