// Management API: posture check types and posture checks (CRUD, each kind's fields and validation, role attributes,
// service policies naming them), edge-api management.yml /posture-check-types, /posture-checks; seed "Posture check";
// controller-behaviour.md §10.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
const HASH = 'ab'.repeat(64)
const FP = 'cd'.repeat(20)

beforeAll(async () => {
  srv = await startTestServer()
})
afterAll(async () => {
  await srv.stop()
})

const bodies: Record<string, Record<string, unknown>> = {
  OS: { typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10.0.0 <11', '=6.1.7601'] }, { type: 'Linux', versions: [] }] },
  PROCESS: { typeId: 'PROCESS', process: { osType: 'Windows', path: 'C:\\agent.exe', hashes: [HASH.toUpperCase()], signerFingerprint: FP } },
  PROCESS_MULTI: { typeId: 'PROCESS_MULTI', semantic: 'AnyOf', processes: [{ osType: 'Linux', path: '/usr/bin/agent', hashes: [], signerFingerprints: [FP] }] },
  DOMAIN: { typeId: 'DOMAIN', domains: ['corp.example'] },
  MAC: { typeId: 'MAC', macAddresses: ['AA:BB:CC:DD:EE:FF', '00-11-22-33-44-55'] },
  MFA: { typeId: 'MFA', timeoutSeconds: 300, promptOnWake: true },
}

describe('GET /posture-check-types', () => {
  it('lists the six types with the seeded operating systems', async () => {
    const res = await srv.mgmt.get('/posture-check-types')
    expectStatus(res, 200)
    expect(res.body.data.map((t: { id: string }) => t.id).sort()).toEqual(['DOMAIN', 'MAC', 'MFA', 'OS', 'PROCESS', 'PROCESS_MULTI'])
    const os = res.body.data.find((t: { id: string }) => t.id === 'OS')
    expect(os.name).toBe('Operating System Check')
    expect(os.operatingSystems.find((o: { type: string }) => o.type === 'Windows').versions).toEqual(['Vista', '7', '8', '10', '2000'])
    expect(res.body.meta.pagination.totalCount).toBe(6)
  })

  it('gets one type by id, and 404 for an unknown one', async () => {
    const res = await srv.mgmt.get('/posture-check-types/DOMAIN')
    expectStatus(res, 200)
    expect(res.body.data).toMatchObject({ id: 'DOMAIN', name: 'Windows Domain Check', operatingSystems: [{ type: 'Windows' }] })
    expectError(await srv.mgmt.get('/posture-check-types/NOPE'), 404, 'NOT_FOUND')
  })
})

describe('POST /posture-checks', () => {
  it('creates a check of every kind, each shown with its own fields and version 1', async () => {
    for (const [typeId, body] of Object.entries(bodies)) {
      const id = await srv.create('/posture-checks', { name: `pc-${typeId}`, roleAttributes: ['kinds'], ...body })
      const res = await srv.mgmt.get(`/posture-checks/${id}`)
      expectStatus(res, 200)
      expect(res.body.data).toMatchObject({ id, name: `pc-${typeId}`, typeId, version: 1, roleAttributes: ['kinds'] })
    }
    const list = (await srv.mgmt.get('/posture-checks?filter=typeId="PROCESS"')).body.data
    expect(list).toHaveLength(1)
    expect(list[0].process).toEqual({ osType: 'Windows', path: 'C:\\agent.exe', hashes: [HASH], signerFingerprint: FP })
    const mfa = (await srv.mgmt.get('/posture-checks?filter=typeId="MFA"')).body.data[0]
    expect(mfa).toMatchObject({ timeoutSeconds: 300, promptOnWake: true, promptOnUnlock: false, ignoreLegacyEndpoints: false })
    const mac = (await srv.mgmt.get('/posture-checks?filter=typeId="MAC"')).body.data[0]
    expect(mac.macAddresses).toEqual(['AA:BB:CC:DD:EE:FF', '00-11-22-33-44-55'])
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['an unknown typeId', { typeId: 'FINGERPRINT' }, 'typeId'],
    ['an OS check without operatingSystems', { typeId: 'OS' }, 'operatingSystems'],
    ['an OS check with no operating system', { typeId: 'OS', operatingSystems: [] }, 'operatingSystems'],
    ['an unknown OS type', { typeId: 'OS', operatingSystems: [{ type: 'BeOS', versions: [] }] }, 'operatingSystems[0].type'],
    ['a version that is no range', { typeId: 'OS', operatingSystems: [{ type: 'Linux', versions: ['5.4', '>=five'] }] }, 'operatingSystems[0].versions[1]'],
    ['a process without path', { typeId: 'PROCESS', process: { osType: 'Linux', path: ' ' } }, 'process.path'],
    ['a hash that is no SHA-512', { typeId: 'PROCESS', process: { osType: 'Linux', path: '/a', hashes: ['abc'] } }, 'process.hashes[0]'],
    ['a signer fingerprint that is no SHA-1', { typeId: 'PROCESS', process: { osType: 'Linux', path: '/a', signerFingerprint: 'xyz' } }, 'process.signerFingerprint'],
    ['a process check without process', { typeId: 'PROCESS' }, 'process'],
    ['a multi-process check without semantic', { typeId: 'PROCESS_MULTI', processes: [{ osType: 'Linux', path: '/a' }] }, 'semantic'],
    ['a multi-process check with a bad semantic', { typeId: 'PROCESS_MULTI', semantic: 'Most', processes: [{ osType: 'Linux', path: '/a' }] }, 'semantic'],
    ['a multi-process check without processes', { typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes: [] }, 'processes'],
    ['a multi-process with an unknown osType', { typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes: [{ osType: 'Plan9', path: '/a' }] }, 'processes[0].osType'],
    ['a domain check without domains', { typeId: 'DOMAIN', domains: [] }, 'domains'],
    ['a blank domain', { typeId: 'DOMAIN', domains: ['ok', ''] }, 'domains[1]'],
    ['a MAC check without addresses', { typeId: 'MAC' }, 'macAddresses'],
    ['a MAC address that is none', { typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee'] }, 'macAddresses[0]'],
    ['an MFA timeout below -1', { typeId: 'MFA', timeoutSeconds: -5 }, 'timeoutSeconds'],
  ]
  for (const [what, body, field] of bad) {
    it(`refuses ${what} with 400 naming ${field}`, async () => {
      const res = await srv.mgmt.post('/posture-checks', { name: `bad-${field}`, ...body })
      expectError(res, 400, 'COULD_NOT_VALIDATE')
      expect(res.body.error.cause.field).toBe(field)
    })
  }

  it('refuses a duplicate name and a missing one', async () => {
    await srv.create('/posture-checks', { name: 'dup', typeId: 'DOMAIN', domains: ['a'] })
    const res = await srv.mgmt.post('/posture-checks', { name: 'dup', typeId: 'DOMAIN', domains: ['a'] })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('name')
    expectError(await srv.mgmt.post('/posture-checks', { typeId: 'DOMAIN', domains: ['a'] }), 400, 'COULD_NOT_VALIDATE')
  })
})

describe('PUT, PATCH and DELETE /posture-checks/{id}', () => {
  it('patches the given fields, puts all, and counts versions', async () => {
    const id = await srv.create('/posture-checks', { name: 'dom', typeId: 'DOMAIN', domains: ['a.example'], roleAttributes: ['x'] })
    expectStatus(await srv.mgmt.patch(`/posture-checks/${id}`, { typeId: 'DOMAIN', domains: ['b.example'] }), 200)
    let d = (await srv.mgmt.get(`/posture-checks/${id}`)).body.data
    expect(d).toMatchObject({ name: 'dom', domains: ['b.example'], roleAttributes: ['x'], version: 2 })
    expectStatus(await srv.mgmt.put(`/posture-checks/${id}`, { name: 'dom2', typeId: 'DOMAIN', domains: ['c.example'] }), 200)
    d = (await srv.mgmt.get(`/posture-checks/${id}`)).body.data
    expect(d).toMatchObject({ name: 'dom2', domains: ['c.example'], roleAttributes: [], version: 3 })
  })

  it('refuses a put without the kind fields and a change of type', async () => {
    const id = await srv.create('/posture-checks', { name: 'mac1', typeId: 'MAC', macAddresses: ['aabbccddeeff'] })
    const noMacs = await srv.mgmt.put(`/posture-checks/${id}`, { name: 'mac1' })
    expectError(noMacs, 400, 'COULD_NOT_VALIDATE')
    expect(noMacs.body.error.cause.field).toBe('macAddresses')
    const retype = await srv.mgmt.patch(`/posture-checks/${id}`, { typeId: 'DOMAIN', domains: ['a'] })
    expectError(retype, 400, 'COULD_NOT_VALIDATE')
    expect(retype.body.error.cause.field).toBe('typeId')
    expect((await srv.mgmt.get(`/posture-checks/${id}`)).body.data.version).toBe(1)
  })

  it('answers 404 for an unknown check', async () => {
    expectError(await srv.mgmt.get('/posture-checks/nope'), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.patch('/posture-checks/nope', { typeId: 'MFA' }), 404, 'NOT_FOUND')
    expectError(await srv.mgmt.del('/posture-checks/nope'), 404, 'NOT_FOUND')
  })

  it('survives a restart', async () => {
    const id = await srv.create('/posture-checks', { name: 'kept', typeId: 'MFA', timeoutSeconds: 60, roleAttributes: ['kept'] })
    await srv.restart()
    expect((await srv.mgmt.get(`/posture-checks/${id}`)).body.data).toMatchObject({ name: 'kept', timeoutSeconds: 60 })
    expect((await srv.mgmt.get('/posture-check-role-attributes')).body.data).toContain('kept')
  })
})

describe('posture checks in service policies', () => {
  it('resolves @id and #attr in postureCheckRoles, shows names, and drops @id when the check goes', async () => {
    const a = await srv.create('/posture-checks', { name: 'sp-a', typeId: 'DOMAIN', domains: ['a'], roleAttributes: ['gate'] })
    const b = await srv.create('/posture-checks', { name: 'sp-b', typeId: 'DOMAIN', domains: ['b'] })
    const sp = await srv.create('/service-policies', { name: 'gated', type: 'Dial', semantic: 'AnyOf', identityRoles: [], serviceRoles: [], postureCheckRoles: ['#gate', `@${b}`] })
    const d = (await srv.mgmt.get(`/service-policies/${sp}`)).body.data
    expect(d.postureCheckRolesDisplay).toEqual([{ role: '#gate', name: '#gate' }, { role: `@${b}`, name: '@sp-b' }])
    const listed = await srv.mgmt.get(`/service-policies/${sp}/posture-checks`)
    expectStatus(listed, 200)
    expect(listed.body.data.map((c: { id: string }) => c.id).sort()).toEqual([a, b].sort())
    expectStatus(await srv.mgmt.del(`/posture-checks/${b}`), 200)
    expect((await srv.mgmt.get(`/service-policies/${sp}`)).body.data.postureCheckRoles).toEqual(['#gate'])
    expect((await srv.mgmt.get(`/service-policies/${sp}/posture-checks`)).body.data.map((c: { id: string }) => c.id)).toEqual([a])
  })

  it('refuses an @id that names no posture check', async () => {
    const res = await srv.mgmt.post('/service-policies', { name: 'bad-pc', type: 'Dial', semantic: 'AllOf', postureCheckRoles: ['@nope'] })
    expectError(res, 400, 'COULD_NOT_VALIDATE')
    expect(res.body.error.cause.field).toBe('postureCheckRoles')
  })

  it('lists role attributes in use and filters the list by role', async () => {
    await srv.create('/posture-checks', { name: 'r1', typeId: 'DOMAIN', domains: ['a'], roleAttributes: ['blue', 'green'] })
    await srv.create('/posture-checks', { name: 'r2', typeId: 'DOMAIN', domains: ['a'], roleAttributes: ['blue'] })
    const attrs = (await srv.mgmt.get('/posture-check-role-attributes')).body.data
    expect(attrs).toEqual(expect.arrayContaining(['blue', 'green']))
    const all = (await srv.mgmt.get('/posture-checks?roleFilter=%23blue&roleFilter=%23green&roleSemantic=AllOf')).body.data
    expect(all.map((c: { name: string }) => c.name)).toEqual(['r1'])
    const any = (await srv.mgmt.get('/posture-checks?roleFilter=%23blue&roleFilter=%23green&roleSemantic=AnyOf&limit=100')).body.data
    expect(any.map((c: { name: string }) => c.name).sort()).toEqual(['r1', 'r2'])
  })

  it('counts posture checks and types in the summary', async () => {
    const res = await srv.mgmt.get('/summary')
    expect(res.body.data.postureCheckTypes).toBe(6)
    expect(res.body.data.postureChecks).toBe((await srv.mgmt.get('/posture-checks')).body.meta.pagination.totalCount)
  })
})
