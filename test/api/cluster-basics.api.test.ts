// A cluster of three in-process nodes on a 3-member etcd: one state served by every node, over HTTPS. Writes on one
// node are read on the others, a race for one name has one winner and the same refusal everywhere, sessions and
// enrollments made on one node work on the others (token enrollment and request-extend too), and a node that joins
// from a backup or restarts answers only once it has caught up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SignJWT } from 'jose'
import { generateKeyPair, exportPrivateKeyPem } from '../../src/pki/pki-keys.ts'
import { makeCsrPem, makeTestCa } from '../support/pki.ts'
import { startTestCluster, pollUntil, type TestCluster, type TestNode } from '../support/cluster.ts'

let c: TestCluster
let admin: string
const MGMT = '/edge/management/v1'
const CLIENT = '/edge/client/v1'
const byName = (name: string) => `filter=${encodeURIComponent(`name="${name}"`)}`

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3 })
  admin = await c.login(c.nodes[0])
}, 60_000)

afterAll(async () => {
  await c?.stop()
})

/** Polls a node until `path` answers `status` (other nodes apply within milliseconds; the deadline is generous). */
const until = (n: TestNode, path: string, status: number, token = admin, timeoutMs = 5_000) =>
  pollUntil(`${path} answering ${status} on ${n.name}`, async () => {
    const r = await c.call(n, 'GET', path, { token })
    return r.status === status ? r : undefined
  }, timeoutMs)

describe('a cluster of three nodes', () => {
  test('a write on one node is read on the others', async () => {
    const [a, b, d] = c.nodes
    const created = await c.call(a, 'POST', `${MGMT}/services`, { token: admin, body: { name: 'read-everywhere', encryptionRequired: true } })
    expect(created.status).toBe(201)
    const id = created.body.data.id
    // the writer answers its own read with its write applied
    expect((await c.call(a, 'GET', `${MGMT}/services/${id}`, { token: admin })).status).toBe(200)
    for (const n of [b, d]) {
      const got = await until(n, `${MGMT}/services/${id}`, 200)
      expect(got.body.data).toMatchObject({ id, name: 'read-everywhere', encryptionRequired: true })
    }
    // an update on another node is read back on the first
    const patched = await c.call(b, 'PATCH', `${MGMT}/services/${id}`, { token: admin, body: { roleAttributes: ['everywhere'] } })
    expect(patched.status).toBe(200)
    const seen = await pollUntil('the update on node-1', async () => {
      const r = await c.call(a, 'GET', `${MGMT}/services/${id}`, { token: admin })
      return r.body.data.roleAttributes?.includes('everywhere') ? r : undefined
    }, 5_000)
    expect(seen.body.data.roleAttributes).toEqual(['everywhere'])
  })

  test('the same name created on three nodes at once: one 201, the same 400 on the others', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race-${round}`
      const answers = await Promise.all(
        c.nodes.map((n) => c.call(n, 'POST', `${MGMT}/identities`, { token: admin, body: { name, type: 'Default', isAdmin: false } })),
      )
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses).toEqual([201, 400, 400])
      const losers = answers.filter((r) => r.status === 400)
      expect(losers[0].body.error.code).toBe(losers[1].body.error.code)
      const winnerId = answers.find((r) => r.status === 201)!.body.data.id
      await c.waitForRevision()
      for (const n of c.nodes) {
        // every node holds the one winner, and refuses the name again with the losers' answer
        const list = await c.call(n, 'GET', `${MGMT}/identities?${byName(name)}`, { token: admin })
        expect(list.body.data.map((i: { id: string }) => i.id)).toEqual([winnerId])
        const again = await c.call(n, 'POST', `${MGMT}/identities`, { token: admin, body: { name, type: 'Default', isAdmin: false } })
        expect(again.status).toBe(400)
        expect(again.body.error.code).toBe(losers[0].body.error.code)
      }
    }
  })

  test('a login on one node gives a token every node accepts', async () => {
    const [a, b, d] = c.nodes
    const token = await c.login(b, 'client')
    const me = (await c.call(b, 'GET', `${CLIENT}/current-identity`, { token })).body.data
    expect(me.isDefaultAdmin).toBe(true)
    for (const n of [a, b, d]) {
      const session = await until(n, `${CLIENT}/current-api-session`, 200, token)
      expect(session.body.data.token).toBe(token)
      expect(session.body.data.identityId).toBe(me.id)
      expect((await c.call(n, 'GET', `${CLIENT}/current-identity`, { token })).body.data.id).toBe(me.id)
    }
  })

  test('a logout on one node is refused on the others within a second', async () => {
    const [a, b, d] = c.nodes
    const token = await c.login(a, 'client')
    for (const n of [b, d]) await until(n, `${CLIENT}/current-api-session`, 200, token)
    const out = await c.call(b, 'DELETE', `${CLIENT}/current-api-session`, { token })
    expect(out.status).toBe(200)
    for (const n of [a, d]) {
      const refused = await until(n, `${CLIENT}/current-api-session`, 401, token, 1_000)
      expect(refused.body.error.code).toBe('UNAUTHORIZED')
    }
    expect((await c.call(b, 'GET', `${CLIENT}/current-api-session`, { token })).status).toBe(401)
  })

  test('an identity created on one node enrolls (ott) on another and logs in with its certificate on the third', async () => {
    const [a, b, d] = c.nodes
    const created = await c.call(a, 'POST', `${MGMT}/identities`, {
      token: admin,
      body: { name: 'roaming-device', type: 'Device', isAdmin: false, enrollment: { ott: true } },
    })
    expect(created.status).toBe(201)
    const id = created.body.data.id
    const jwt = (await c.call(a, 'GET', `${MGMT}/identities/${id}`, { token: admin })).body.data.enrollment.ott.token as string
    // the enrollment JWT was signed by node-1; node-2 verifies it and issues the certificate
    await until(b, `${MGMT}/identities/${id}`, 200)
    const keys = await generateKeyPair('ec-p256')
    const enrolled = await c.call(b, 'POST', `${CLIENT}/enroll/ott`, { body: { token: jwt, clientCsr: await makeCsrPem(keys, { commonName: 'roaming-device' }) } })
    expect(enrolled.status).toBe(200)
    const cert = { cert: enrolled.body.data.cert as string, key: await exportPrivateKeyPem(keys.privateKey) }
    // node-3 knows the authenticator node-2 created, and the enrollment is used up everywhere
    const login = await pollUntil('a certificate login on node-3', async () => {
      const r = await c.call(d, 'POST', `${CLIENT}/authenticate?method=cert`, { body: {}, cert })
      return r.status === 200 ? r : undefined
    }, 5_000)
    expect(login.body.data.identity.id).toBe(id)
    const token = login.body.data.token as string
    expect((await c.call(a, 'GET', `${CLIENT}/current-identity`, { token })).body.data.id).toBe(id)
    const again = await c.call(a, 'POST', `${CLIENT}/enroll/ott`, { body: { token: jwt, clientCsr: await makeCsrPem(keys, { commonName: 'roaming-device' }) } })
    expect(again.status).toBeGreaterThanOrEqual(400)
    expect(again.status).toBeLessThan(500)
  })

  test('token enrollment through a signer made on another node, and an extension asked on a third, are the same everywhere', async () => {
    const [a, b, d] = c.nodes
    // the signer's check reads the auth policy on every node, in log order: the policy is made on one node, the signer on another
    const policy = await c.call(d, 'POST', `${MGMT}/auth-policies`, {
      token: admin,
      body: {
        name: 'cluster-enroll',
        primary: {
          cert: { allowed: true, allowExpiredCerts: true },
          extJwt: { allowed: true, allowedSigners: [] },
          updb: { allowed: false, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 },
        },
        secondary: { requireTotp: false },
      },
    })
    expect(policy.status).toBe(201)
    const ca = await makeTestCa({ commonName: 'cluster enroll signer' })
    const signer = await c.call(a, 'POST', `${MGMT}/external-jwt-signers`, {
      token: admin,
      body: {
        name: 'cluster-enroll', enabled: true, issuer: 'https://cluster-idp.test', audience: 'cluster', certPem: ca.certPem,
        enrollToCertEnabled: true, enrollAuthPolicyId: policy.body.data.id,
      },
    })
    expect(signer.status).toBe(201)
    await until(b, `${MGMT}/external-jwt-signers/${signer.body.data.id}`, 200)
    const jwt = await new SignJWT({ iss: 'https://cluster-idp.test', aud: 'cluster', sub: 'cluster-enrollee', exp: Math.floor(Date.now() / 1000) + 300 })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(ca.keyPair.privateKey)
    const keys = await generateKeyPair('ec-p256')
    const enrolled = await c.call(b, 'POST', `${CLIENT}/enroll/token`, { body: { clientCsr: await makeCsrPem(keys) }, headers: { authorization: `Bearer ${jwt}` } })
    expect(enrolled.status).toBe(200)
    // a second enrollment of the token on another node is refused there too
    await c.waitForRevision()
    const again = await c.call(d, 'POST', `${CLIENT}/enroll/token`, { body: { clientCsr: await makeCsrPem(keys) }, headers: { authorization: `Bearer ${jwt}` } })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe('ENROLLMENT_IDENTITY_ALREADY_ENROLLED')
    const cert = { cert: enrolled.body.data.cert as string, key: await exportPrivateKeyPem(keys.privateKey) }
    const login = await c.call(d, 'POST', `${CLIENT}/authenticate?method=cert`, { body: {}, cert })
    expect(login.status).toBe(200)
    expect(login.body.data.identity.name).toBe('cluster-enrollee')
    const authenticatorId = login.body.data.authenticatorId as string
    // asked on node-1, seen on node-3's session and authenticator
    expect((await c.call(a, 'POST', `${MGMT}/authenticators/${authenticatorId}/request-extend`, { token: admin, body: { rollKeys: true } })).status).toBe(200)
    const flagged = await pollUntil('the request on node-3', async () => {
      const r = await c.call(d, 'GET', `${CLIENT}/current-api-session`, { token: login.body.data.token })
      return r.body.data.isCertExtendRequested ? r : undefined
    }, 5_000)
    expect(flagged.body.data.isCertKeyRollRequested).toBe(true)
    // the policy a signer enrolls into is not deleted on any node
    const refused = await c.call(b, 'DELETE', `${MGMT}/auth-policies/${policy.body.data.id}`, { token: admin })
    expect(refused.status).toBe(409)
    const digests = await c.settledDigests()
    expect(digests.map((x) => `${x.revision} ${x.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
  }, 60_000)

  test('a node joined from an older backup has caught up before it answers', async () => {
    const [a] = c.nodes
    const backup = await c.backup(a)
    // writes after the backup: the new node must replay them from the log before its listener opens
    const names = Array.from({ length: 20 }, (_, i) => `after-backup-${i}`)
    for (const name of names) {
      expect((await c.call(a, 'POST', `${MGMT}/services`, { token: admin, body: { name, encryptionRequired: true } })).status).toBe(201)
    }
    const aRevision = await c.revision(a)
    const joined = await c.addNode('node-4', { backupFile: backup })
    expect(await c.revision(joined)).toBeGreaterThanOrEqual(aRevision)
    // its first answers: no polling
    const list = await c.call(joined, 'GET', `${MGMT}/services?limit=500&${encodeURIComponent('filter')}=${encodeURIComponent('name contains "after-backup-"')}`, { token: admin })
    expect(list.status).toBe(200)
    expect(list.body.data.map((s: { name: string }) => s.name).sort()).toEqual([...names].sort())
    // and it takes writes the others read
    const own = await c.call(joined, 'POST', `${MGMT}/services`, { token: admin, body: { name: 'from-node-4', encryptionRequired: false } })
    expect(own.status).toBe(201)
    await until(a, `${MGMT}/services/${own.body.data.id}`, 200)
    const digests = await c.settledDigests()
    expect(digests.map((d) => `${d.revision} ${d.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
  }, 60_000)

  test('a restarted node has caught up before it answers', async () => {
    const [a, , d] = c.nodes
    await c.stopNode(d)
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await c.call(a, 'POST', `${MGMT}/configs`, {
        token: admin,
        body: { name: `while-down-${i}`, configTypeId: 'host.v1', data: { protocol: 'tcp', address: 'localhost', port: 8000 + i } },
      })
      expect(r.status).toBe(201)
      ids.push(r.body.data.id)
    }
    const deleted = await c.call(a, 'DELETE', `${MGMT}/services/${(await c.call(a, 'GET', `${MGMT}/services?${byName('read-everywhere')}`, { token: admin })).body.data[0].id}`, { token: admin })
    expect(deleted.status).toBe(200)
    const aRevision = await c.revision(a)
    await c.restartNode(d)
    expect(await c.revision(d)).toBeGreaterThanOrEqual(aRevision)
    for (const id of ids) expect((await c.call(d, 'GET', `${MGMT}/configs/${id}`, { token: admin })).status).toBe(200)
    expect((await c.call(d, 'GET', `${MGMT}/services?${byName('read-everywhere')}`, { token: admin })).body.data).toEqual([])
    const digests = await c.settledDigests()
    expect(digests.map((d) => `${d.revision} ${d.digest}`)).toEqual(digests.map(() => `${digests[0].revision} ${digests[0].digest}`))
  }, 60_000)
})
