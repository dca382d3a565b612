// The signing keys OIDC tokens are checked against in a cluster (flows/oidc/oidc-keys.ts, actors/ca/ca-node-keys.ts):
// a member's server certificate from the shared intermediate verifies its tokens; a certificate whose SHA-1 is not the
// kid its record claims, or one another PKI issued, gives no key (logged once); the map follows the aggregate.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT, jwtVerify } from 'jose'
import { FakeClock } from '../../../src/lib/clock.ts'
import { ensureControllerPki, type ControllerPki } from '../../../src/pki/pki-bootstrap.ts'
import { importPrivateKeyPem, publicKeyFromPrivateKey } from '../../../src/pki/pki-keys.ts'
import { jwtAlgorithmOf } from '../../../src/actors/ca/ca-actor.ts'
import { nodeJwtVerifier } from '../../../src/actors/ca/ca-node-keys.ts'
import type { JwtVerifier } from '../../../src/actors/ca/ca-state.ts'
import { createTokenKeys } from '../../../src/flows/oidc/oidc-keys.ts'

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'))
const root = mkdtempSync(join(tmpdir(), 'edgeplane-oidc-keys-'))
let nodeA: ControllerPki
let nodeB: ControllerPki
let foreign: ControllerPki
const opts = { hostname: 'localhost', extraSans: [], clock }

beforeAll(async () => {
  nodeA = await ensureControllerPki(join(root, 'a'), { ...opts, nodeName: 'node-a' })
  // node B: a copy of A's PKI (a restored backup) that issues its own server certificate from the same intermediate
  cpSync(join(root, 'a'), join(root, 'b'), { recursive: true })
  nodeB = await ensureControllerPki(join(root, 'b'), { ...opts, nodeName: 'node-b' })
  foreign = await ensureControllerPki(join(root, 'c'), { ...opts, nodeName: 'node-c' })
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const record = (p: ControllerPki, name: string) => ({ name, certPem: p.server.certPem, fingerprint: p.server.view.fingerprintSha1 })

async function ownVerifier(p: ControllerPki): Promise<JwtVerifier> {
  const key = await importPrivateKeyPem(p.server.keyPem)
  return { publicKey: await publicKeyFromPrivateKey(key), alg: jwtAlgorithmOf(key), kid: p.server.view.fingerprintSha1 }
}

async function tokenOf(p: ControllerPki): Promise<string> {
  const key = await importPrivateKeyPem(p.server.keyPem)
  return new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: jwtAlgorithmOf(key), kid: p.server.view.fingerprintSha1 }).sign(key)
}

describe('nodeJwtVerifier', () => {
  it('verifies the tokens of a member whose certificate the shared intermediate issued', async () => {
    expect(nodeB.intermediate.certPem).toBe(nodeA.intermediate.certPem)
    expect(nodeB.server.view.fingerprintSha1).not.toBe(nodeA.server.view.fingerprintSha1)
    const v = nodeJwtVerifier(record(nodeB, 'node-b'), [nodeA.intermediate.certPem], clock.now())
    if (typeof v === 'string') throw new Error(`refused: ${v}`)
    expect(v.kid).toBe(nodeB.server.view.fingerprintSha1)
    const { payload } = await jwtVerify(await tokenOf(nodeB), v.publicKey, { algorithms: [v.alg] })
    expect(payload.sub).toBe('x')
    // and not A's tokens
    await expect(jwtVerify(await tokenOf(nodeA), v.publicKey, { algorithms: [v.alg] })).rejects.toThrow()
  })

  it('refuses a record whose fingerprint is not its certificate\'s', () => {
    const lent = { name: 'node-b', certPem: nodeB.server.certPem, fingerprint: nodeA.server.view.fingerprintSha1 }
    expect(nodeJwtVerifier(lent, [nodeA.intermediate.certPem], clock.now())).toBe('fingerprint mismatch')
  })

  it('refuses a certificate of another PKI, and one that is not a certificate', () => {
    expect(nodeJwtVerifier(record(foreign, 'node-c'), [nodeA.intermediate.certPem], clock.now())).toBe('not issued by this cluster\'s intermediate CA')
    expect(nodeJwtVerifier({ certPem: 'nonsense', fingerprint: 'ab' }, [nodeA.intermediate.certPem], clock.now())).toBe('unreadable')
  })
})

describe('createTokenKeys', () => {
  it('holds this node\'s key and every accepted member\'s, logs a refused one once, and follows the aggregate', async () => {
    const own = await ownVerifier(nodeA)
    let nodes = [record(nodeA, 'node-a'), record(nodeB, 'node-b'), record(foreign, 'node-c')]
    const lines: string[] = []
    const ring = createTokenKeys({ own: () => own, nodes: () => nodes, issuers: () => [nodeA.intermediate.certPem], now: () => clock.now(), log: (l) => lines.push(l) })
    const kids = () => [...ring.keys().keys()].sort()
    expect(kids()).toEqual([nodeA.server.view.fingerprintSha1, nodeB.server.view.fingerprintSha1].sort())
    expect(ring.keys().get(nodeA.server.view.fingerprintSha1)).toBe(own)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain('node-c')
    // cached until the aggregate changes
    expect(ring.keys()).toBe(ring.keys())
    ring.invalidate()
    kids()
    expect(lines).toHaveLength(1)
    nodes = [record(nodeA, 'node-a')]
    expect(kids()).toEqual([nodeA.server.view.fingerprintSha1, nodeB.server.view.fingerprintSha1].sort())
    ring.invalidate()
    expect(kids()).toEqual([nodeA.server.view.fingerprintSha1])
  })

  it('holds only this node\'s key on a single node', async () => {
    const own = await ownVerifier(nodeA)
    const ring = createTokenKeys({ own: () => own, issuers: () => [nodeA.intermediate.certPem], now: () => clock.now(), log: () => undefined })
    expect([...ring.keys().keys()]).toEqual([nodeA.server.view.fingerprintSha1])
  })
})
