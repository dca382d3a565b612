// Issue 21: one anonymous request must not end the process. The controller runs in a child process (`edgeplane run`)
// so that a crash shows as its death instead of ending the test run: a 5 MB body sent chunked (no Content-Length) to
// the public login was answered 413 and then the process died, its log line reading the socket's address after the
// socket was gone.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childLogin, childRequest, killChildren, startChild, type ChildController } from '../support/child-controller.ts'
import { chunked, openTls } from '../support/raw-wire.ts'

const PASSWORD = 'listener-crash-pass-1'
const dataDir = mkdtempSync(join(tmpdir(), 'edgeplane-listener-crash-'))
let child: ChildController
let port: number

beforeAll(async () => {
  child = await startChild(dataDir, PASSWORD)
  port = Number(new URL(child.url).port)
})
afterAll(() => {
  killChildren()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The child is alive and serving: /version answers, the admin logs in, and a write commits. */
async function expectServing(tag: string): Promise<void> {
  expect({ tag, exitCode: child.proc.exitCode }).toEqual({ tag, exitCode: null })
  expect((await childRequest(child.url, 'GET', '/edge/client/v1/version')).status).toBe(200)
  const token = await childLogin(child.url, 'admin', PASSWORD)
  const created = await childRequest(child.url, 'POST', '/edge/management/v1/identities', {
    token,
    body: { name: `after-${tag}-${Math.random().toString(36).slice(2)}`, type: 'User', isAdmin: false },
  })
  expect(created.status).toBe(201)
}

describe('a body over the limit sent chunked', () => {
  it('is answered 413 and the process goes on serving (5 MB to POST /authenticate?method=password)', async () => {
    for (let round = 0; round < 3; round++) {
      const conn = await openTls(port)
      await conn.write(
        'POST /edge/client/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n' +
          'transfer-encoding: chunked\r\n\r\n',
      )
      // the server may stop reading (and close) before all of it is written: not waited for
      void conn.write(chunked(Buffer.alloc(5 * 1024 * 1024, 'a')))
      await conn.closed
      expect(conn.status()).toBe(413)
      expect(conn.text()).toContain('REQUEST_ENTITY_TOO_LARGE')
      await expectServing(`chunked-413-${round}`)
    }
  })

  it('is answered 413 when the body is declared too large, and when it is aborted after the 413', async () => {
    const conn = await openTls(port)
    await conn.write('POST /edge/client/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-length: 5000000\r\n\r\n{"a":')
    await conn.waitFor('REQUEST_ENTITY_TOO_LARGE')
    expect(conn.status()).toBe(413)
    conn.destroy()
    await expectServing('declared-413')
  })
})
