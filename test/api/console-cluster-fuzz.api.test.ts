// A seeded fuzz of the paths issues 23 and 24 added: the console's files (`/console/…`), a cluster member's snapshot
// route (`/cluster/v1/snapshot`, with forged and broken membership proofs), `GET /controllers` on both APIs and
// `GET /cluster`, with every method, hostile paths, queries and headers; then clients that abort mid-request or
// dribble one. No answer may be a 5xx, and the node lives on and still answers and signs in.
// FUZZ_SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN, startTestServer, type TestServer } from '../support/harness.ts'
import { etcdAvailable, startEtcdCluster, type EtcdCluster } from '../support/etcd.ts'
import { openTls } from '../support/raw-wire.ts'
import { rng } from '../support/rng.ts'
import { PEER_HEADER, peerProof } from '../../src/cluster/cluster-snapshot.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261127)
const REQUESTS = 1_500
const IN_FLIGHT = 10

let etcd: EtcdCluster
let srv: TestServer
let token: string
let scriptPath: string

beforeAll(async () => {
  etcd = await startEtcdCluster({ members: 1 })
  srv = await startTestServer({ cluster: { endpoints: etcd.endpoints, nodeName: 'fuzz-node', prefix: `/fuzz-${process.pid}` } })
  token = await srv.login(ADMIN.username, ADMIN.password)
  const page = await (await fetch(`${srv.url}/console/`, { tls: { ca: srv.caPem } } as RequestInit)).text()
  scriptPath = page.match(/src="(\/console\/app-[0-9a-f]+\.js)"/)![1]
}, 60_000)

afterAll(async () => {
  await srv?.stop()
  await etcd?.stop()
})

describe.skipIf(!etcdAvailable())(`console and cluster fuzz (seed ${SEED})`, () => {
  it(`${REQUESTS} hostile requests to the console's files, the snapshot route, /controllers and /cluster: no 5xx`, async () => {
    const r = rng(SEED)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
    const paths = [
      '/console', '/console/', '/console/index.html', scriptPath, scriptPath.replace('.js', '.css'), '/console/app-000000000000.js',
      '/console/../edge/management/v1/version', '/console/%2e%2e/%2e%2e/etc/passwd', '/console/%00', '/console//', `/console/${'a'.repeat(5000)}`,
      '/cluster/v1/snapshot', '/cluster/v1/snapshot/', '/cluster/v1/', '/edge/management/v1/cluster', '/edge/management/v1/controllers',
      '/edge/client/v1/controllers', '/edge/management/v1/controllers/fuzz-node',
    ]
    const queries = ['', '?limit=-1', '?limit=abc&offset=-5', '?filter=name%3D', '?filter=' + encodeURIComponent('name = "fuzz-node"'), '?sort=nope%20up', `?x=${'y'.repeat(9000)}`, '?%ff%fe']
    const proofs = (): (string | undefined)[] => [
      undefined, '', 'v1', 'v1.fuzz-node.0.' + '0'.repeat(64), peerProof(Buffer.alloc(32, 1), 'fuzz-node', srv.clock.now()),
      `v1.${'n'.repeat(64)}.${srv.clock.now()}.${'a'.repeat(64)}`, `v1.fuzz-node.${'9'.repeat(20)}.${'b'.repeat(64)}`, 'v2.x.1.aa', '\u00e9\u00e9',
    ]
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
    const failures: string[] = []
    const one = async () => {
      const path = pick(paths) + pick(queries)
      const method = r() < 0.7 ? 'GET' : pick(methods)
      const headers: Record<string, string> = {}
      if (r() < 0.5) headers['zt-session'] = r() < 0.7 ? token : pick(['', 'nope', 'x'.repeat(3000)])
      const proof = pick(proofs())
      if (proof !== undefined) headers[PEER_HEADER] = proof
      if (r() < 0.2) headers['if-none-match'] = pick(['*', '"x"', ''])
      if (r() < 0.2) headers['accept-encoding'] = pick(['gzip', 'br', 'x'.repeat(500)])
      const body = method === 'GET' || method === 'HEAD' ? undefined : pick(['', '{"a":', '[]', 'x'.repeat(10_000)])
      try {
        const res = await fetch(`${srv.url}${path}`, { method, headers, body, tls: { ca: srv.caPem }, redirect: 'manual' } as RequestInit)
        await res.arrayBuffer()
        if (res.status >= 500) failures.push(`${method} ${path.slice(0, 120)} → ${res.status}`)
        // the snapshot route serves members only: no forged proof ever gets the store (OPTIONS is every path's empty CORS answer)
        if (path.startsWith('/cluster/v1/snapshot') && method !== 'OPTIONS' && res.status === 200) failures.push(`${method} ${path.slice(0, 120)} with ${proof} → 200`)
      } catch (e) {
        failures.push(`${method} ${path.slice(0, 120)}: ${String(e).slice(0, 200)}`)
      }
    }
    for (let i = 0; i < REQUESTS; i += IN_FLIGHT) await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, REQUESTS - i) }, one))
    expect(failures).toEqual([])
  }, 120_000)

  it('clients that abort or dribble a request on these paths leave the node answering', async () => {
    const port = Number(new URL(srv.url).port)
    for (const target of ['/console/', scriptPath, '/cluster/v1/snapshot', '/edge/management/v1/controllers', '/edge/management/v1/cluster']) {
      // sends half a request line and goes away
      const gone = await openTls(port)
      await gone.write(`GET ${target} HTTP/1.1\r\nhost: localhost\r\n${PEER_HEADER}: v1.`)
      gone.destroy()
      // dribbles the request a byte at a time: answered like any other
      const slow = await openTls(port)
      const text = `GET ${target} HTTP/1.1\r\nhost: localhost\r\nzt-session: ${token}\r\nconnection: close\r\n\r\n`
      for (const ch of text.slice(0, 20)) {
        await slow.write(ch)
        await Bun.sleep(5)
      }
      await slow.write(text.slice(20))
      await slow.until((bytes) => bytes.includes('\r\n\r\n'), 5_000)
      expect(slow.status()).toBeGreaterThanOrEqual(200)
      expect(slow.status()).toBeLessThan(500)
      slow.destroy()
    }
    expect((await fetch(`${srv.url}/console/`, { tls: { ca: srv.caPem } } as RequestInit)).status).toBe(200)
    expect(typeof (await srv.login(ADMIN.username, ADMIN.password))).toBe('string')
  }, 60_000)
})
