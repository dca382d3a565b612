// `edgeplane explain` and `edgeplane preview` (issue 15) against a real controller over HTTPS: the controller's CA
// from --ca, an admin session from --username and EDGEPLANE_PASSWORD, answers printed as tables with what is
// missing; exit codes 0 answered, 1 refused, 2 usage.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN, startTestServer, type TestServer } from '../support/harness.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
let srv: TestServer
let dir: string
const ids: Record<string, string> = {}

async function cli(args: string[], stdin?: string) {
  const proc = Bun.spawn(['bun', MAIN, ...args, '--url', srv.url, '--ca', join(dir, 'ca.pem'), '--username', ADMIN.username], {
    stdout: 'pipe', stderr: 'pipe', stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
    env: { ...process.env, EDGEPLANE_PASSWORD: ADMIN.password, NO_COLOR: '1' },
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

beforeAll(async () => {
  srv = await startTestServer()
  dir = mkdtempSync(join(tmpdir(), 'edgeplane-cli-'))
  writeFileSync(join(dir, 'ca.pem'), srv.caPem)
  ids.laptop = await srv.create('/identities', { name: 'laptop', type: 'User', isAdmin: false, roleAttributes: ['employees'] })
  ids.payroll = await srv.create('/services', { name: 'payroll', encryptionRequired: true, roleAttributes: ['finance-apps'] })
  ids.policy = await srv.create('/service-policies', {
    name: 'payroll-dial', type: 'Dial', semantic: 'AllOf', identityRoles: ['#employees', '#finance'], serviceRoles: ['#finance-apps'],
  })
  ids.er = await srv.create('/edge-routers', { name: 'er-eu', roleAttributes: ['eu'] })
}, 30_000)

afterAll(async () => {
  await srv.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('edgeplane explain', () => {
  it('case=prints the policy table with the missing role and the smallest fixes', async () => {
    const r = await cli(['explain', '--identity', 'laptop', '--service', 'payroll'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Identity laptop → service payroll')
    expect(r.stdout).toContain('DIAL: denied')
    expect(r.stdout).toMatch(/payroll-dial\s+AllOf\s+#employees #finance\s+no\s+#finance/)
    expect(r.stdout).toContain('give identity laptop role attribute #finance (selected by payroll-dial)')
    expect(r.stdout).toContain('no Bind service policy names this service')
    expect(r.stdout).toContain('routers in common: none')
  }, 30_000)

  it('case=explains an edge router', async () => {
    const r = await cli(['explain', '--identity', 'laptop', '--edge-router', 'er-eu'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Identity laptop → edge router er-eu: denied')
    expect(r.stdout).toContain('no edge router policy names this router')
  }, 30_000)

  it('case=exit 1 for an unknown identity, 2 for missing flags', async () => {
    expect((await cli(['explain', '--identity', 'nobody', '--service', 'payroll'])).code).toBe(1)
    const usage = await cli(['explain', '--identity', 'laptop'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--service')
  }, 30_000)
})

describe('edgeplane preview', () => {
  it('case=prints the totals and the changes of a policy patch, and changes nothing', async () => {
    const file = join(dir, 'change.json')
    writeFileSync(file, JSON.stringify({ operation: 'patch', entityType: 'service-policies', id: ids.policy, body: { identityRoles: ['#employees'] } }))
    const r = await cli(['preview', '--file', file])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Preview (nothing was changed)')
    expect(r.stdout).toMatch(/DIAL GAINED\s+DIAL LOST[^\n]*\n1\s+0\s+0\s+0\s+0\s+1\s+1/)
    expect(r.stdout).toMatch(/gained\s+Dial\s+laptop\s+payroll/)
    const still = await srv.mgmt.get(`/identities/${ids.laptop}/policy-advice/${ids.payroll}`)
    expect(still.body.data.isDialAllowed).toBe(false)
  }, 30_000)

  it('case=summarises from stdin', async () => {
    const r = await cli(['preview', '--file', '-', '--summary'], JSON.stringify({ operation: 'delete', entityType: 'service-policies', id: ids.policy }))
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Preview (nothing was changed)')
  }, 30_000)

  it('case=exit 1 with the controller\'s error for a refused change, 2 for a file that is not JSON', async () => {
    const refused = await cli(['preview', '--file', '-'], JSON.stringify({ operation: 'delete', entityType: 'service-policies', id: 'nope' }))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('404 NOT_FOUND')
    expect((await cli(['preview', '--file', '-'], '{not json')).code).toBe(2)
  }, 30_000)
})
