// Posture in use: responses (client.yml /posture-response, /posture-response-bulk), the client service list's
// postureQueries, 409 INVALID_POSTURE at POST /sessions, failed service requests and posture data
// (management.yml /identities/{id}/failed-service-requests, /identities/{id}/posture-data); controller-behaviour.md
// §7, §8. Time is the fake clock; a session completes MFA as a client does (enroll and verify, then
// POST /authenticate/mfa with a TOTP code from a real generator).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { expectError, expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'

let srv: TestServer
const ids: Record<string, string> = {}
const HASH = 'ef'.repeat(64)
const FP = '12'.repeat(20)

interface Client {
  id: string
  sessionId: string
  client: ApiClient
}

async function identityWithLogin(name: string, roleAttributes: string[]): Promise<Client> {
  const id = await srv.create('/identities', { name, type: 'User', isAdmin: false, roleAttributes })
  expectStatus(await srv.mgmt.post('/authenticators', { method: 'updb', identityId: id, username: name, password: `${name}-pass-1` }), 201)
  const token = await srv.login(name, `${name}-pass-1`, 'client')
  const client = srv.as(token, 'client')
  const sessionId = (await client.get('/current-api-session')).body.data.id as string
  return { id, sessionId, client }
}

/** TOTP secrets of the identities that enrolled, by identity id. */
const mfaSecrets = new Map<string, string>()
const totpNow = (secret: string) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: srv.clock.now() })

/** Answers a TOTP code on the client's session: enrolling (verify completes the session) the first time. */
async function completeMfa(c: Client): Promise<void> {
  const secret = mfaSecrets.get(c.id)
  if (!secret) {
    expectStatus(await c.client.post('/current-identity/mfa', {}), 201)
    const started = (await c.client.get('/current-identity/mfa')).body.data
    const fresh = new URL(started.provisioningUrl).searchParams.get('secret')!
    mfaSecrets.set(c.id, fresh)
    expectStatus(await c.client.post('/current-identity/mfa/verify', { code: totpNow(fresh) }), 200)
    return
  }
  srv.clock.advance(30_000) // a code of the next time step: each step is accepted once
  expectStatus(await c.client.post('/authenticate/mfa', { code: totpNow(secret) }), 200)
}

/** The postureQueries of one service as the client lists it. */
async function postureOf(c: Client, serviceId: string) {
  const res = await c.client.get('/services?limit=500')
  expectStatus(res, 200)
  return res.body.data.find((s: { id: string }) => s.id === serviceId).postureQueries as {
    policyId: string
    policyType: string
    isPassing: boolean
    postureQueries: { id: string; queryType: string; isPassing: boolean; timeout: number; timeoutRemaining: number; timeoutAt?: string | null }[]
  }[]
}

const dial = (c: Client, serviceId: string) => c.client.post('/sessions', { serviceId, type: 'Dial' })

/** A service dialled by `#<role>` identities through a policy gated by the given checks. */
async function gatedService(name: string, role: string, checkIds: string[]): Promise<string> {
  const service = await srv.create('/services', { name, encryptionRequired: true, roleAttributes: ['routed'] })
  await srv.create('/service-policies', {
    name: `${name}-dial`, type: 'Dial', semantic: 'AllOf', identityRoles: [`#${role}`], serviceRoles: [`@${service}`], postureCheckRoles: checkIds.map((id) => `@${id}`),
  })
  return service
}

beforeAll(async () => {
  srv = await startTestServer()
  await srv.create('/edge-routers', { name: 'er1', roleAttributes: ['public'] })
  await srv.create('/edge-router-policies', { name: 'all-public', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['#public'] })
  await srv.create('/service-edge-router-policies', { name: 'routed-public', semantic: 'AnyOf', serviceRoles: ['#routed'], edgeRouterRoles: ['#public'] })
})
afterAll(async () => {
  await srv.stop()
})

describe('postureQueries before any posture check exists', () => {
  it('shows the placeholder entry per permission and answers posture responses with no services', async () => {
    const c = await identityWithLogin('early', ['early'])
    const s = await gatedService('early-svc', 'early', [])
    expect(await postureOf(c, s)).toEqual([{ policyId: 'dummy dial policy: no posture checks defined', policyType: 'Dial', isPassing: true, postureQueries: [] }])
    const res = await c.client.post('/posture-response', { id: 'x', typeId: 'DOMAIN', domain: 'corp' })
    expectStatus(res, 201)
    expect(res.body.data.services).toEqual([])
  })
})

describe('a DOMAIN check', () => {
  let c: Client
  beforeAll(async () => {
    ids.domain = await srv.create('/posture-checks', { name: 'corp-domain', typeId: 'DOMAIN', domains: ['corp.example'] })
    c = await identityWithLogin('dana', ['dana'])
    ids.domainSvc = await gatedService('domain-svc', 'dana', [ids.domain])
  })

  it('fails without posture data: the entry and its query say so, and POST /sessions is 409 INVALID_POSTURE', async () => {
    const pq = await postureOf(c, ids.domainSvc!)
    expect(pq).toHaveLength(1)
    expect(pq[0]).toMatchObject({ policyType: 'Dial', isPassing: false })
    expect(pq[0]!.postureQueries).toEqual([expect.objectContaining({ id: ids.domain, queryType: 'DOMAIN', isPassing: false, timeout: -1, timeoutRemaining: -1 })])
    const res = await dial(c, ids.domainSvc!)
    expectError(res, 409, 'INVALID_POSTURE')
    expect(res.body.error.cause.message).toBe(`Failed to pass posture checks for service policies: [${pq[0]!.policyId}]`)
    expect(res.body.error.cause.data[pq[0]!.policyId]).toEqual([
      { postureCheckId: ids.domain, postureCheckName: 'corp-domain', postureCheckType: 'DOMAIN', actualValue: '', expectedValue: ['corp.example'] },
    ])
  })

  it('records each refusal in failed-service-requests', async () => {
    const res = await srv.mgmt.get(`/identities/${c.id}/failed-service-requests`)
    expectStatus(res, 200)
    expect(res.body.data).toHaveLength(1)
    expect(res.body.data[0]).toMatchObject({
      apiSessionId: c.sessionId, serviceId: ids.domainSvc, serviceName: 'domain-svc', sessionType: 'Dial',
      policyFailures: [{ policyName: 'domain-svc-dial', checks: [{ postureCheckId: ids.domain, postureCheckType: 'DOMAIN' }] }],
    })
    expectError(await srv.mgmt.get('/identities/nope/failed-service-requests'), 404, 'NOT_FOUND')
  })

  it('a wrong domain still fails; the right one (any case) passes, the answer names the service, and the session is made', async () => {
    const wrong = await c.client.post('/posture-response', { id: ids.domain, typeId: 'DOMAIN', domain: 'home.example' })
    expectStatus(wrong, 201)
    expect(wrong.body.data.services).toEqual([])
    expectError(await dial(c, ids.domainSvc!), 409, 'INVALID_POSTURE')
    const right = await c.client.post('/posture-response', { id: ids.domain, typeId: 'DOMAIN', domain: 'CORP.example' })
    expectStatus(right, 201)
    expect(right.body.data.services).toEqual([{ id: ids.domainSvc, name: 'domain-svc', postureQueryType: 'DOMAIN', timeout: -1, timeoutRemaining: -1 }])
    expect((await postureOf(c, ids.domainSvc!))[0]).toMatchObject({ isPassing: true, postureQueries: [expect.objectContaining({ isPassing: true })] })
    expectStatus(await dial(c, ids.domainSvc!), 201)
  })

  it('a listing repeated unchanged answers the same text; the next one after a posture check changes shows it', async () => {
    // an answer asked for twice is kept for the next asks: a change of a check's content must reach the next one
    const list = async () => (await c.client.get('/services?limit=500')).text
    const before = await list()
    for (let i = 0; i < 2; i++) expect(await list()).toBe(before)
    expectStatus(await srv.mgmt.patch(`/posture-checks/${ids.domain}`, { typeId: 'DOMAIN', domains: ['elsewhere.example'] }), 200)
    for (let i = 0; i < 2; i++) expect((await postureOf(c, ids.domainSvc!))[0]).toMatchObject({ isPassing: false, postureQueries: [expect.objectContaining({ isPassing: false })] })
    expectStatus(await srv.mgmt.patch(`/posture-checks/${ids.domain}`, { typeId: 'DOMAIN', domains: ['corp.example'] }), 200)
    expect((await postureOf(c, ids.domainSvc!))[0]).toMatchObject({ isPassing: true })
    const again = JSON.parse(await list())
    expect(again.data).toHaveLength(JSON.parse(before).data.length)
  })

  it('a second policy without checks lets the service through even while the gated one fails', async () => {
    const other = await identityWithLogin('dora', ['dana'])
    expectError(await dial(other, ids.domainSvc!), 409, 'INVALID_POSTURE')
    const open = await srv.create('/service-policies', { name: 'domain-svc-open', type: 'Dial', semantic: 'AllOf', identityRoles: [`@${other.id}`], serviceRoles: [`@${ids.domainSvc}`], postureCheckRoles: [] })
    const pq = await postureOf(other, ids.domainSvc!)
    expect(pq.find((e) => e.policyId === open)).toEqual({ policyId: open, policyType: 'Dial', isPassing: true, postureQueries: [] })
    expect(pq.filter((e) => !e.isPassing)).toHaveLength(1)
    expectStatus(await dial(other, ids.domainSvc!), 201)
  })

  it('a row follows its policy\'s checks and their records, and an unrelated policy change leaves it as it was', async () => {
    const before = await postureOf(c, ids.domainSvc!)
    expect(before[0]).toMatchObject({ isPassing: true })
    const unrelated = await srv.create('/service-policies', { name: 'unrelated-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#nobody'], serviceRoles: ['#nothing'], postureCheckRoles: [] })
    expect(await postureOf(c, ids.domainSvc!)).toEqual(before)
    expectStatus(await srv.mgmt.del(`/service-policies/${unrelated}`), 200)
    expect(await postureOf(c, ids.domainSvc!)).toEqual(before)
    // the gated policy gets a second check, failing (no MAC reported): the row shows both and fails
    const mac = await srv.create('/posture-checks', { name: 'dana-mac', typeId: 'MAC', macAddresses: ['00:11:22:33:44:55'] })
    const policyId = before[0]!.policyId
    expectStatus(await srv.mgmt.patch(`/service-policies/${policyId}`, { postureCheckRoles: [`@${ids.domain}`, `@${mac}`] }), 200)
    const two = await postureOf(c, ids.domainSvc!)
    expect(two[0]!.isPassing).toBe(false)
    expect(two[0]!.postureQueries.map((q) => q.id).sort()).toEqual([ids.domain!, mac].sort())
    // that check now passes for the reported MAC: the same row, judged again
    expectStatus(await c.client.post('/posture-response', { id: mac, typeId: 'MAC', macAddresses: ['00:11:22:33:44:55'] }), 201)
    expect((await postureOf(c, ids.domainSvc!))[0]).toMatchObject({ isPassing: true })
    expectStatus(await srv.mgmt.patch(`/posture-checks/${mac}`, { typeId: 'MAC', macAddresses: ['66:77:88:99:AA:BB'] }), 200)
    expect((await postureOf(c, ids.domainSvc!))[0]).toMatchObject({ isPassing: false })
    // back to the domain check alone
    expectStatus(await srv.mgmt.patch(`/service-policies/${policyId}`, { postureCheckRoles: [`@${ids.domain}`] }), 200)
    expect(await postureOf(c, ids.domainSvc!)).toEqual(before)
    expectStatus(await srv.mgmt.del(`/posture-checks/${mac}`), 200)
    expect(await postureOf(c, ids.domainSvc!)).toEqual(before)
  })

  it('shows the caller\'s posture entries in the Management service view too', async () => {
    const admin = (await srv.mgmt.get('/current-identity')).body.data.id as string
    await srv.create('/service-policies', { name: 'admin-dial', type: 'Dial', semantic: 'AllOf', identityRoles: [`@${admin}`], serviceRoles: [`@${ids.domainSvc}`], postureCheckRoles: [`@${ids.domain}`] })
    const res = await srv.mgmt.get(`/services/${ids.domainSvc}`)
    expectStatus(res, 200)
    expect(res.body.data.permissions).toEqual(['Dial'])
    expect(res.body.data.postureQueries).toEqual([expect.objectContaining({ policyType: 'Dial', isPassing: false, postureQueries: [expect.objectContaining({ id: ids.domain, queryType: 'DOMAIN' })] })])
  })

  it('shows the reported domain in the identity\'s posture data, and forgets it with the API session', async () => {
    const res = await srv.mgmt.get(`/identities/${c.id}/posture-data`)
    expectStatus(res, 200)
    expect(res.body.data.domain).toMatchObject({ domain: 'CORP.example', postureCheckId: ids.domain, timedOut: false })
    expect(Object.keys(res.body.data.apiSessionPostureData)).toEqual([c.sessionId])
    expect(res.body.data.apiSessionPostureData[c.sessionId].mfa).toMatchObject({ apiSessionId: c.sessionId, passedMfa: false })
    expectStatus(await c.client.del('/current-api-session'), 200)
    const after = (await srv.mgmt.get(`/identities/${c.id}/posture-data`)).body.data
    expect(after.domain.domain).toBe('')
    expect(after.apiSessionPostureData).toEqual({})
  })
})

describe('OS, MAC and process checks', () => {
  let c: Client
  beforeAll(async () => {
    ids.os = await srv.create('/posture-checks', { name: 'win10', typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041 <11'] }, { type: 'macOS', versions: [] }] })
    ids.mac = await srv.create('/posture-checks', { name: 'macs', typeId: 'MAC', macAddresses: ['AA:BB:CC:DD:EE:FF'] })
    ids.proc = await srv.create('/posture-checks', { name: 'agent', typeId: 'PROCESS', process: { osType: 'Windows', path: 'C:\\agent.exe', hashes: [HASH], signerFingerprint: FP } })
    ids.multiAll = await srv.create('/posture-checks', {
      name: 'both', typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes: [{ osType: 'Linux', path: '/bin/a' }, { osType: 'Linux', path: '/bin/b' }],
    })
    ids.multiAny = await srv.create('/posture-checks', {
      name: 'either', typeId: 'PROCESS_MULTI', semantic: 'AnyOf', processes: [{ osType: 'Linux', path: '/bin/a' }, { osType: 'Linux', path: '/bin/b' }],
    })
    c = await identityWithLogin('olga', ['olga'])
    for (const k of ['os', 'mac', 'proc', 'multiAll', 'multiAny']) ids[`${k}Svc`] = await gatedService(`${k}-svc`, 'olga', [ids[k]!])
  })
  const passing = async (k: string) => (await postureOf(c, ids[`${k}Svc`]!))[0]!.isPassing

  it('an OS check passes on a listed type and a version in range only', async () => {
    expectStatus(await c.client.post('/posture-response', { id: ids.os, typeId: 'OS', type: 'Windows', version: '10.0.17763' }), 201)
    expect(await passing('os')).toBe(false)
    const res = await c.client.post('/posture-response', { id: ids.os, typeId: 'OS', type: 'windows', version: '10.0.19045.2006', build: '2006' })
    expect(res.body.data.services.map((s: { name: string }) => s.name)).toEqual(['os-svc'])
    expect(await passing('os')).toBe(true)
    expectStatus(await c.client.post('/posture-response', { id: ids.os, typeId: 'OS', type: 'macOS', version: 'anything' }), 201)
    expect(await passing('os')).toBe(true)
    expectStatus(await c.client.post('/posture-response', { id: ids.os, typeId: 'OS', type: 'Linux', version: '6.1' }), 201)
    expect(await passing('os')).toBe(false)
  })

  it('a MAC check passes when any reported address is listed, in any notation', async () => {
    expectStatus(await c.client.post('/posture-response', { id: ids.mac, typeId: 'MAC', macAddresses: ['11:22:33:44:55:66'] }), 201)
    expect(await passing('mac')).toBe(false)
    expectStatus(await c.client.post('/posture-response', { id: ids.mac, typeId: 'MAC', macAddresses: ['11:22:33:44:55:66', 'aa-bb-cc-dd-ee-ff'] }), 201)
    expect(await passing('mac')).toBe(true)
  })

  it('a process check needs the process running with a listed hash and signer', async () => {
    const report = (o: Record<string, unknown>) => c.client.post('/posture-response', { id: ids.proc, typeId: 'PROCESS', path: 'c:\\AGENT.exe', ...o })
    expectStatus(await report({ isRunning: false, hash: HASH, signerFingerprints: [FP] }), 201)
    expect(await passing('proc')).toBe(false)
    expectStatus(await report({ isRunning: true, hash: 'aa'.repeat(64), signerFingerprints: [FP] }), 201)
    expect(await passing('proc')).toBe(false)
    expectStatus(await report({ isRunning: true, hash: HASH.toUpperCase(), signerFingerprints: ['99'.repeat(20)] }), 201)
    expect(await passing('proc')).toBe(false)
    expectStatus(await report({ isRunning: true, hash: HASH, signerFingerprints: ['99'.repeat(20), FP] }), 201)
    expect(await passing('proc')).toBe(true)
    const q = (await postureOf(c, ids.procSvc!))[0]!.postureQueries[0] as unknown as { process: unknown }
    expect(q.process).toEqual({ osType: 'Windows', path: 'C:\\agent.exe' })
  })

  it('multi-process checks follow their semantic (bulk responses)', async () => {
    const bulk = await c.client.post('/posture-response-bulk', [{ id: ids.multiAll, typeId: 'PROCESS', path: '/bin/a', isRunning: true }])
    expectStatus(bulk, 200)
    expect(await passing('multiAll')).toBe(false)
    expect(await passing('multiAny')).toBe(true)
    expectStatus(await c.client.post('/posture-response-bulk', [{ id: ids.multiAll, typeId: 'PROCESS', path: '/bin/b', isRunning: true }]), 200)
    expect(await passing('multiAll')).toBe(true)
  })

  it('refuses a bad response with 400 and applies no part of a bulk request that holds one', async () => {
    const res = await c.client.post('/posture-response-bulk', [
      { id: ids.mac, typeId: 'MAC', macAddresses: ['00:00:00:00:00:01'] },
      { id: ids.os, typeId: 'OS', type: 'Linux' },
    ])
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('[1].version')
    expect(await passing('mac')).toBe(true)
    const unknown = await c.client.post('/posture-response', { id: 'x', typeId: 'FINGERPRINT' })
    expectError(unknown, 400, 'COULD_NOT_VALIDATE')
    expect(unknown.body.error.cause.field).toBe('typeId')
    expectError(await c.client.post('/posture-response', { typeId: 'MAC', macAddresses: [] }), 400, 'COULD_NOT_VALIDATE')
  })

  it('shows the reported processes, MAC and OS in the identity\'s posture data', async () => {
    const d = (await srv.mgmt.get(`/identities/${c.id}/posture-data`)).body.data
    expect(d.os).toMatchObject({ type: 'Linux', version: '6.1' })
    expect(d.mac.addresses).toEqual(['11:22:33:44:55:66', 'aa-bb-cc-dd-ee-ff'])
    expect(d.processes.map((p: { path: string }) => p.path).sort()).toEqual(['/bin/a', '/bin/b', 'c:\\AGENT.exe'])
  })

  it('needs a session', async () => {
    expectError(await srv.client.post('/posture-response', { id: 'x', typeId: 'DOMAIN', domain: 'a' }), 401, 'UNAUTHORIZED')
  })
})

describe('an MFA check (timeout, prompt on wake and unlock)', () => {
  let c: Client
  beforeAll(async () => {
    ids.mfa = await srv.create('/posture-checks', { name: 'mfa-5m', typeId: 'MFA', timeoutSeconds: 300, promptOnWake: true, promptOnUnlock: false })
    c = await identityWithLogin('mona', ['mona'])
    ids.mfaSvc = await gatedService('mfa-svc', 'mona', [ids.mfa])
  })
  const query = async () => (await postureOf(c, ids.mfaSvc!))[0]!.postureQueries[0]!

  it('fails until the session completes MFA', async () => {
    expect(await query()).toMatchObject({ queryType: 'MFA', isPassing: false, timeout: 300, timeoutRemaining: 0, promptOnWake: true, promptOnUnlock: false })
    const res = await dial(c, ids.mfaSvc!)
    expectError(res, 409, 'INVALID_POSTURE')
    const failure = Object.values(res.body.error.cause.data)[0] as Record<string, unknown>[]
    expect(failure[0]).toMatchObject({ postureCheckType: 'MFA', actualValue: { passedMfa: false }, criteria: { timeoutSeconds: 300 } })
  })

  it('passes after MFA, counts the time down on the clock, and times out', async () => {
    await completeMfa(c)
    const at = srv.clock.now()
    expect(await query()).toMatchObject({ isPassing: true, timeout: 300, timeoutRemaining: 300, timeoutAt: new Date(at + 300_000).toISOString() })
    expectStatus(await dial(c, ids.mfaSvc!), 201)
    srv.clock.advance(120_000)
    expect(await query()).toMatchObject({ isPassing: true, timeoutRemaining: 180 })
    srv.clock.advance(180_000)
    expect(await query()).toMatchObject({ isPassing: false, timeoutRemaining: 0 })
    expectError(await dial(c, ids.mfaSvc!), 409, 'INVALID_POSTURE')
    const data = (await srv.mgmt.get(`/identities/${c.id}/posture-data`)).body.data
    expect(data.apiSessionPostureData[c.sessionId].mfa).toMatchObject({ passedMfa: true, passedAt: new Date(at).toISOString() })
  })

  it('fails after the endpoint wakes until MFA is answered again; an unlock does not matter here', async () => {
    await completeMfa(c)
    expect((await query()).isPassing).toBe(true)
    srv.clock.advance(1_000)
    const unlocked = await c.client.post('/posture-response', { id: 'state', typeId: 'ENDPOINT_STATE', unlocked: true })
    expect(unlocked.body.data.services).toEqual([])
    expect((await query()).isPassing).toBe(true)
    const woken = await c.client.post('/posture-response', { id: 'state', typeId: 'ENDPOINT_STATE', woken: true })
    expect(woken.body.data.services).toEqual([expect.objectContaining({ id: ids.mfaSvc, postureQueryType: 'MFA', timeout: 300 })])
    expect((await query()).isPassing).toBe(false)
    srv.clock.advance(1_000)
    await completeMfa(c)
    expect((await query()).isPassing).toBe(true)
  })

  it('without a timeout (-1), stays passing', async () => {
    expectStatus(await srv.mgmt.patch(`/posture-checks/${ids.mfa}`, { typeId: 'MFA', timeoutSeconds: -1, promptOnWake: false }), 200)
    srv.clock.advance(20 * 60_000)
    expect(await query()).toMatchObject({ isPassing: true, timeout: -1, timeoutRemaining: -1, timeoutAt: null })
  })
})

describe('volatile posture data', () => {
  it('forgets posture data and refused requests on a restart, and clients report again', async () => {
    const olga = (await srv.mgmt.get('/identities?filter=name="olga"')).body.data[0].id as string
    const dana = (await srv.mgmt.get('/identities?filter=name="dana"')).body.data[0].id as string
    expect((await srv.mgmt.get(`/identities/${olga}/posture-data`)).body.data.os.type).not.toBe('')
    expect((await srv.mgmt.get(`/identities/${dana}/failed-service-requests`)).body.data).not.toEqual([])
    await srv.restart()
    expect((await srv.mgmt.get(`/identities/${olga}/posture-data`)).body.data.os).toMatchObject({ type: '', version: '', lastUpdatedAt: '0001-01-01T00:00:00.000Z' })
    expect((await srv.mgmt.get(`/identities/${dana}/failed-service-requests`)).body.data).toEqual([])
    expect((await srv.mgmt.get(`/posture-checks/${ids.os}`)).body.data.name).toBe('win10')
  })
})
