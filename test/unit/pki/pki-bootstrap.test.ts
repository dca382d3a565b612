/**
 * src/pki/pki-bootstrap.ts: the controller PKI on disk. Created once, reused and never overwritten afterwards;
 * half-written directories are completed; corrupt files stop start-up with an Error naming the file.
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:tls'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeClock } from '../../../src/lib/clock.ts'
import { decodePem } from '../../../src/lib/pem.ts'
import { CONTROLLER_PKI_FILES, ensureControllerPki, type ControllerPki } from '../../../src/pki/pki-bootstrap.ts'
import { issueServerCertificate, parseCertificatePem, parseCertificatesPem } from '../../../src/pki/pki-certs.ts'
import { verifyCertificateChain } from '../../../src/pki/pki-chain.ts'
import { exportPrivateKeyPem, generateKeyPair } from '../../../src/pki/pki-keys.ts'
import { fetchTls, hasOpenssl, makeClientCert, makeTestCa, runOpenssl } from '../../support/pki.ts'

const base = mkdtempSync(join(tmpdir(), 'edgeplane-bootstrap-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))
const clock = new FakeClock()
const FILES = Object.values(CONTROLLER_PKI_FILES)
let counter = 0
const freshDir = (): string => join(base, `case-${++counter}`, 'pki')
const opts = { hostname: 'ctrl.test', extraSans: ['edge.example.com', '10.1.2.3', '[fd00::1]', ' ', 'LOCALHOST'], clock }

/** Content, mode, inode and mtime of every PKI file, to prove a second start touched nothing. */
function snapshot(dir: string): Record<string, { content: string; mode: number; ino: number; mtimeMs: number }> {
  return Object.fromEntries(
    FILES.map((name) => {
      const path = join(dir, name)
      const s = statSync(path)
      return [name, { content: readFileSync(path, 'utf8'), mode: s.mode & 0o777, ino: s.ino, mtimeMs: s.mtimeMs }]
    }),
  )
}

async function errorOf(dir: string): Promise<Error> {
  const err = await ensureControllerPki(dir, opts).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(Error)
  return err as Error
}

const dir = freshDir()
const pki: ControllerPki = await ensureControllerPki(dir, opts)

describe('ensureControllerPki on a new directory', () => {
  it('creates the directory with mode 0700 and all six files', () => {
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    for (const name of FILES) expect(existsSync(join(dir, name))).toBe(true)
    expect([...pki.created].sort()).toEqual([...FILES].sort())
  })

  it('writes keys and certificates with mode 0600 (the data directory is private)', () => {
    const modes = snapshot(dir)
    for (const name of [CONTROLLER_PKI_FILES.rootKey, CONTROLLER_PKI_FILES.intermediateKey, CONTROLLER_PKI_FILES.serverKey]) {
      expect(modes[name].mode).toBe(0o600)
    }
    for (const name of [CONTROLLER_PKI_FILES.rootCert, CONTROLLER_PKI_FILES.intermediateCert, CONTROLLER_PKI_FILES.serverCert]) {
      expect(modes[name].mode).toBe(0o600)
    }
  })

  it('leaves no temporary files behind', () => {
    const names = new Bun.Glob('*').scanSync({ cwd: dir, dot: true })
    expect([...names].sort()).toEqual([...FILES].sort())
  })

  it('builds root → intermediate (pathLen 0) → server, with the server file holding leaf then intermediate', () => {
    expect(pki.root.view).toMatchObject({ isCa: true, subjectCn: 'edgeplane root CA (ctrl.test)' })
    expect(pki.intermediate.view).toMatchObject({ isCa: true, issuerCn: pki.root.view.subjectCn })
    const onDisk = parseCertificatesPem(readFileSync(join(dir, CONTROLLER_PKI_FILES.serverCert), 'utf8'))
    expect(onDisk.map((v) => v.subjectCn)).toEqual(['ctrl.test', pki.intermediate.view.subjectCn])
    expect(pki.server.view).toMatchObject({ subjectCn: 'ctrl.test', isCa: false, extKeyUsages: ['serverAuth'] })
  })

  it('gives the server certificate localhost, 127.0.0.1, ::1, the host name and the classified extra SANs', () => {
    expect(pki.server.view.dnsNames).toEqual(['localhost', 'ctrl.test', 'edge.example.com'])
    expect(pki.server.view.ipAddresses).toEqual(['127.0.0.1', '::1', '10.1.2.3', 'fd00::1'])
    expect(pki.sansMissing).toEqual([])
  })

  it('sets validity from the clock', () => {
    const now = clock.now()
    expect(pki.server.view.notBefore).toBeLessThanOrEqual(now)
    expect(pki.server.view.notBefore).toBeGreaterThan(now - 10 * 60_000)
    expect(pki.server.view.notAfter).toBeGreaterThan(now + 300 * 86_400_000)
    expect(pki.root.view.notAfter).toBeGreaterThan(pki.intermediate.view.notAfter)
  })

  it('returns the bundle, the TLS pair and a signer that issues verifiable client certificates', async () => {
    expect(pki.caBundlePem).toBe(pki.intermediate.certPem + pki.root.certPem)
    expect(pki.tls.cert).toBe(pki.server.certPem + pki.intermediate.certPem)
    expect(pki.tls.key).toBe(readFileSync(join(dir, CONTROLLER_PKI_FILES.serverKey), 'utf8'))
    expect(decodePem(pki.tls.key)[0].type).toBe('PRIVATE KEY')
    const client = await makeClientCert({ issuer: pki.signer, commonName: 'identity-1', clock })
    const result = await verifyCertificateChain({ leaf: client.certPem, intermediates: [pki.intermediate.certPem], trusted: [pki.root.certPem], at: clock.now() })
    expect(result.ok).toBe(true)
    expect(pki.intermediate.privateKey).toBe(pki.signer.privateKey)
  })

  it.skipIf(!hasOpenssl)('is accepted by openssl x509 -text and openssl verify -CAfile root -untrusted intermediate', async () => {
    for (const name of [CONTROLLER_PKI_FILES.rootCert, CONTROLLER_PKI_FILES.intermediateCert, CONTROLLER_PKI_FILES.serverCert]) {
      expect((await runOpenssl(['x509', '-noout', '-text', '-in', join(dir, name)])).code).toBe(0)
    }
    const out = await runOpenssl([
      'verify', '-purpose', 'sslserver',
      '-CAfile', join(dir, CONTROLLER_PKI_FILES.rootCert),
      '-untrusted', join(dir, CONTROLLER_PKI_FILES.intermediateCert),
      join(dir, CONTROLLER_PKI_FILES.serverCert),
    ])
    expect(out.stdout).toContain(': OK')
    expect((await runOpenssl(['pkey', '-noout', '-in', join(dir, CONTROLLER_PKI_FILES.serverKey)])).code).toBe(0)
  })
})

describe('ensureControllerPki on an existing directory', () => {
  it('reuses everything: nothing created, files byte-identical with the same inode, mtime and 0600 modes', async () => {
    const before = snapshot(dir)
    clock.advance(86_400_000)
    const again = await ensureControllerPki(dir, opts)
    expect(again.created).toEqual([])
    expect(snapshot(dir)).toEqual(before)
    expect(again.server.view).toEqual(pki.server.view)
    expect(again.root.certPem).toBe(pki.root.certPem)
    expect(again.tls).toEqual(pki.tls)
    expect(again.sansMissing).toEqual([])
  })

  it('reports SANs the existing certificate lacks instead of reissuing it', async () => {
    const before = snapshot(dir)
    const changed = await ensureControllerPki(dir, { ...opts, hostname: 'renamed.test', extraSans: ['10.1.2.3', '192.0.2.9', 'new.example.com'] })
    expect(changed.sansMissing).toEqual(['renamed.test', 'new.example.com', '192.0.2.9'])
    expect(changed.server.view).toEqual(pki.server.view)
    expect(snapshot(dir)).toEqual(before)
  })

  it('starts without the root key once the intermediate exists (root kept offline)', async () => {
    const d = freshDir()
    const first = await ensureControllerPki(d, opts)
    unlinkSync(join(d, CONTROLLER_PKI_FILES.rootKey))
    const again = await ensureControllerPki(d, opts)
    expect(again.created).toEqual([])
    expect(again.intermediate.certPem).toBe(first.intermediate.certPem)
  })
})

describe('ensureControllerPki on a half-written directory', () => {
  it('completes a directory that has only the root, keeping the root', async () => {
    const d = freshDir()
    const first = await ensureControllerPki(d, opts)
    for (const name of [CONTROLLER_PKI_FILES.intermediateCert, CONTROLLER_PKI_FILES.intermediateKey, CONTROLLER_PKI_FILES.serverCert, CONTROLLER_PKI_FILES.serverKey]) {
      unlinkSync(join(d, name))
    }
    const rootBefore = readFileSync(join(d, CONTROLLER_PKI_FILES.rootCert), 'utf8')
    const again = await ensureControllerPki(d, opts)
    expect([...again.created].sort()).toEqual(
      [CONTROLLER_PKI_FILES.intermediateCert, CONTROLLER_PKI_FILES.intermediateKey, CONTROLLER_PKI_FILES.serverCert, CONTROLLER_PKI_FILES.serverKey].sort(),
    )
    expect(readFileSync(join(d, CONTROLLER_PKI_FILES.rootCert), 'utf8')).toBe(rootBefore)
    expect(again.root.certPem).toBe(first.root.certPem)
    expect(again.intermediate.view.issuerCn).toBe(first.root.view.subjectCn)
    expect(again.intermediate.certPem).not.toBe(first.intermediate.certPem)
  })

  it('issues a missing certificate for a key that is already there, without replacing the key', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    unlinkSync(join(d, CONTROLLER_PKI_FILES.serverCert))
    const keyBefore = readFileSync(join(d, CONTROLLER_PKI_FILES.serverKey), 'utf8')
    const again = await ensureControllerPki(d, opts)
    expect(again.created).toEqual([CONTROLLER_PKI_FILES.serverCert])
    expect(readFileSync(join(d, CONTROLLER_PKI_FILES.serverKey), 'utf8')).toBe(keyBefore)
    expect(again.tls.key).toBe(keyBefore)
  })

  it('removes temporary files left by an interrupted write', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    writeFileSync(join(d, `${CONTROLLER_PKI_FILES.serverKey}.0a1b2c3d4e5f.tmp`), 'partial')
    await ensureControllerPki(d, opts)
    expect([...new Bun.Glob('*.tmp').scanSync({ cwd: d })]).toEqual([])
  })

  it('fails naming root-ca.key.pem when the intermediate must be issued but the root key is gone', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    unlinkSync(join(d, CONTROLLER_PKI_FILES.rootKey))
    unlinkSync(join(d, CONTROLLER_PKI_FILES.intermediateCert))
    unlinkSync(join(d, CONTROLLER_PKI_FILES.intermediateKey))
    expect((await errorOf(d)).message).toContain(CONTROLLER_PKI_FILES.rootKey)
    expect(existsSync(join(d, CONTROLLER_PKI_FILES.intermediateKey))).toBe(false)
  })

  it('fails naming the key when a certificate exists without its key', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    unlinkSync(join(d, CONTROLLER_PKI_FILES.intermediateKey))
    expect((await errorOf(d)).message).toContain(CONTROLLER_PKI_FILES.intermediateKey)
    expect(existsSync(join(d, CONTROLLER_PKI_FILES.intermediateKey))).toBe(false)
  })

  it('fails naming the root certificate when it is gone but the intermediate remains', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    unlinkSync(join(d, CONTROLLER_PKI_FILES.rootCert))
    unlinkSync(join(d, CONTROLLER_PKI_FILES.rootKey))
    expect((await errorOf(d)).message).toContain(CONTROLLER_PKI_FILES.rootCert)
  })
})

describe('ensureControllerPki with corrupt files', () => {
  for (const name of FILES) {
    it(`fails with an Error naming ${name} when it is garbage, and leaves it as it was`, async () => {
      const d = freshDir()
      await ensureControllerPki(d, opts)
      writeFileSync(join(d, name), '-----BEGIN JUNK-----\nnot base64 at all!\n-----END JUNK-----\n')
      const err = await errorOf(d)
      expect(err.message).toContain(join(d, name))
      expect(readFileSync(join(d, name), 'utf8')).toContain('JUNK')
    })
  }

  it('fails naming the key file when a key does not match its certificate', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    writeFileSync(join(d, CONTROLLER_PKI_FILES.serverKey), await exportPrivateKeyPem((await generateKeyPair()).privateKey))
    expect((await errorOf(d)).message).toContain(CONTROLLER_PKI_FILES.serverKey)
  })

  /** An armoured block whose DER is not what its label says. */
  const junkBlock = (label: string) => `-----BEGIN ${label}-----\n${Buffer.from('nothing in here').toString('base64')}\n-----END ${label}-----\n`
  const cases = [
    {
      what: 'the server certificate file when a block after the leaf is not a certificate',
      name: CONTROLLER_PKI_FILES.serverCert,
      content: (old: string) => `${old.split('-----END CERTIFICATE-----')[0]}-----END CERTIFICATE-----\n${junkBlock('CERTIFICATE')}`,
      reason: 'is not a valid certificate',
    },
    { what: 'the key file when OpenSSL cannot read the key (its armour is fine)', name: CONTROLLER_PKI_FILES.rootKey, content: () => junkBlock('PRIVATE KEY'), reason: 'is not a usable private key' },
  ]
  for (const c of cases) {
    it(`fails naming ${c.what}`, async () => {
      const d = freshDir()
      await ensureControllerPki(d, opts)
      const path = join(d, c.name)
      writeFileSync(path, c.content(readFileSync(path, 'utf8')))
      const err = await errorOf(d)
      expect(err.message).toContain(path)
      expect(err.message).toContain(c.reason)
    })
  }

  it('fails naming the intermediate when it was issued by another root', async () => {
    const d = freshDir()
    await ensureControllerPki(d, opts)
    const other = await ensureControllerPki(freshDir(), opts)
    const intermediatePath = join(d, CONTROLLER_PKI_FILES.intermediateCert)
    chmodSync(intermediatePath, 0o644)
    writeFileSync(intermediatePath, other.intermediate.certPem)
    writeFileSync(join(d, CONTROLLER_PKI_FILES.intermediateKey), readFileSync(join(other.dir, CONTROLLER_PKI_FILES.intermediateKey)))
    const err = await errorOf(d)
    expect(err.message).toContain(CONTROLLER_PKI_FILES.intermediateCert)
    expect(err.message).toContain('does not chain')
  })

  it('fails when the path exists and is a file', async () => {
    const path = join(base, 'a-file')
    writeFileSync(path, 'x')
    expect((await errorOf(path)).message).toContain('not a directory')
  })
})

describe('the TLS pair with node:tls and fetch', () => {
  const servers: Server[] = []
  afterAll(() => servers.forEach((s) => s.close()))

  /** A node:tls server on 127.0.0.1 answering one plain HTTP response per connection; resolves to its port. */
  async function serve(tls: { key: string; cert: string }): Promise<number> {
    const server = createServer(tls, (socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok'))
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return (server.address() as { port: number }).port
  }

  async function fetchError(url: string, ca: string): Promise<{ code?: string } | null> {
    return fetch(url, { tls: fetchTls(ca) }).then(
      () => null,
      (e: unknown) => e as { code?: string },
    )
  }

  it('serves HTTPS that fetch accepts for localhost and 127.0.0.1, trusting the CA bundle or the root alone', async () => {
    const port = await serve(pki.tls)
    for (const ca of [pki.caBundlePem, pki.root.certPem]) {
      for (const host of ['localhost', '127.0.0.1']) {
        const res = await fetch(`https://${host}:${port}/`, { tls: fetchTls(ca) })
        expect(res.status).toBe(200)
        expect(await res.text()).toBe('ok')
      }
    }
  })

  it('is refused by fetch trusting another CA', async () => {
    const port = await serve(pki.tls)
    const foreign = await makeTestCa({ commonName: 'someone else' })
    expect(await fetchError(`https://127.0.0.1:${port}/`, foreign.certPem)).not.toBeNull()
  })

  it('is checked by name: a certificate from the same CA without these SANs is refused', async () => {
    const keys = await generateKeyPair()
    const other = await issueServerCertificate({
      issuer: pki.signer,
      publicKey: keys.publicKey,
      commonName: 'other.test',
      dnsNames: ['other.test'],
      notBefore: pki.server.view.notBefore,
      notAfter: pki.server.view.notAfter,
    })
    const port = await serve({ key: await exportPrivateKeyPem(keys.privateKey), cert: other + pki.intermediate.certPem })
    for (const host of ['localhost', '127.0.0.1']) {
      const err = await fetchError(`https://${host}:${port}/`, pki.caBundlePem)
      expect(err?.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID')
    }
  })

  it('has a leaf whose parsed view matches the bootstrap view', () => {
    expect(parseCertificatePem(pki.tls.cert)).toEqual(pki.server.view)
  })
})
