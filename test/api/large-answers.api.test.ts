// Large answers (a client's service list of hundreds of KiB) are rendered into pooled buffers that the listener
// gives back after writing them: concurrent answers must never see each other's bytes.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectStatus, startTestServer, type ApiClient, type TestServer } from '../support/harness.ts'
import { CORK_MAX_BYTES } from '../../src/http/http-listener.ts'

let srv: TestServer
const clients: ApiClient[] = []

async function login(name: string, roleAttributes: string[]): Promise<ApiClient> {
  const id = await srv.create('/identities', { name, type: 'User', isAdmin: false, roleAttributes })
  await srv.create('/authenticators', { method: 'updb', identityId: id, username: name, password: `${name}-pass-1` })
  return srv.as(await srv.login(name, `${name}-pass-1`, 'client'), 'client')
}

beforeAll(async () => {
  srv = await startTestServer()
  const pad = 'x'.repeat(120)
  // in bursts of 90: the write queue admits 100 write requests at once (more are answered 429)
  for (let from = 0; from < 360; from += 90) {
    await Promise.all(
      Array.from({ length: 90 }, (_, k) => from + k).map((i) =>
        srv.create('/services', { name: `svc-${String(i).padStart(3, '0')}-${pad}`, encryptionRequired: true, roleAttributes: [i % 3 === 0 ? 'third' : 'rest', `tag-${i % 7}`] }),
      ),
    )
  }
  await srv.create('/service-policies', { name: 'third', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#third'], serviceRoles: ['#third'], postureCheckRoles: [] })
  await srv.create('/service-policies', { name: 'rest', type: 'Bind', semantic: 'AnyOf', identityRoles: ['#rest'], serviceRoles: ['#rest'], postureCheckRoles: [] })
  await srv.create('/service-policies', { name: 'all', type: 'Dial', semantic: 'AnyOf', identityRoles: ['#all-of-it'], serviceRoles: ['#all'], postureCheckRoles: [] })
  clients.push(await login('third-user', ['third']), await login('rest-user', ['rest']), await login('every-user', ['all-of-it', 'third']))
})
afterAll(async () => {
  await srv.stop()
})

describe('large answers', () => {
  it('concurrent service lists of different identities each arrive whole and exactly as answered alone', async () => {
    const path = '/services?limit=500'
    const alone: string[] = []
    for (const c of clients) {
      const res = await c.get(path)
      expectStatus(res, 200)
      expect(res.text.length).toBeGreaterThan(64 * 1024)
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text))
      alone.push(res.text)
    }
    expect(new Set(alone).size).toBe(3)
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => clients[i % 3]!.get(path)))
      answers.forEach((res, i) => {
        expectStatus(res, 200)
        expect(res.text).toBe(alone[i % 3]!)
      })
    }
  })

  it('a single service and small pages are answered the ordinary way', async () => {
    const page = await clients[2]!.get('/services?limit=2')
    expectStatus(page, 200)
    expect(page.body.data.length).toBe(2)
    const one = await clients[2]!.get(`/services/${page.body.data[0].id}`)
    expectStatus(one, 200)
    expect(one.body.data).toEqual(page.body.data[0])
  })

  it('answers on either side of the corking limit arrive whole, in order, on one kept-alive connection', async () => {
    // a small answer leaves with its head in one write, a larger one in two: interleave both on the same connections
    const whole = await clients[2]!.get('/services?limit=500')
    const rowBytes = Buffer.byteLength(whole.text) / whole.body.data.length
    const below = Math.floor((CORK_MAX_BYTES * 0.8) / rowBytes)
    const above = Math.ceil((CORK_MAX_BYTES * 1.5) / rowBytes)
    const sizes = new Map<number, number>()
    for (let round = 0; round < 10; round++) {
      for (const limit of [below, above, 1, above, below]) {
        const res = await clients[2]!.get(`/services?limit=${limit}&offset=${round}`)
        expectStatus(res, 200)
        const bytes = Buffer.byteLength(res.text)
        expect(Number(res.headers.get('content-length'))).toBe(bytes)
        expect(res.body.data.map((s: { id: string }) => s.id)).toEqual(whole.body.data.slice(round, round + limit).map((s: { id: string }) => s.id))
        sizes.set(limit, bytes)
      }
    }
    expect(sizes.get(below)!).toBeLessThan(CORK_MAX_BYTES)
    expect(sizes.get(above)!).toBeGreaterThan(CORK_MAX_BYTES)
  })
})
