// `--check-files` (issue 13): every finding about the files an identity names, with a PKI generated per run.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Finding } from '../../../src/router-config/router-config-findings.ts'
import { hostCoveredBy } from '../../../src/router-config/router-config-files.ts'
import { validateRouterConfigWithFiles } from '../../../src/router-config/router-config-validate.ts'
import { runValidateRouterConfig } from '../../../src/router-config/router-config-command.ts'
import { patched, show } from './router-config-support.ts'
import { makeRouterPki, PKI_IDENTITY, reencodeKey, type RouterPki } from './router-config-pki.ts'

const DAY_MS = 24 * 3_600_000
let pki: RouterPki

beforeAll(async () => {
  pki = await makeRouterPki()
})
afterAll(() => pki.cleanup())

/** The edge-router fixture pointing at the generated files, with `patch` applied, checked with its files. */
async function check(patch: Record<string, unknown> = {}, env: Record<string, string> = {}, base?: string): Promise<Finding[]> {
  const text = patched({ identity: { ...PKI_IDENTITY }, ...patch })
  return (await validateRouterConfigWithFiles(text, { env, files: { base: base ?? pki.dir, now: pki.now } })).findings
}

function expectOne(findings: Finding[], severity: 'error' | 'warning', path: string, message: RegExp): void {
  const matching = findings.filter((f) => f.severity === severity && f.path === path && message.test(f.message))
  if (matching.length !== 1 || findings.length !== 1) throw new Error(`expected one ${severity} at ${path} matching ${message}, got:\n${show(findings)}`)
  expect(matching).toHaveLength(1)
}

describe('--check-files: reading the files', () => {
  it('finds nothing wrong with a valid PKI (chains through the intermediate in the certificate files)', async () => {
    expect(show(await check())).toBe('')
  })

  it('resolves paths after environment substitution, file: and pem: forms, relative to the base', async () => {
    const inline = `pem:${await Bun.file(join(pki.dir, 'ca.cert.pem')).text()}`
    const findings = await check(
      { 'identity.cert': '${PKI}/client.cert.pem', 'identity.key': `file:${join(pki.dir, 'router.key.pem')}`, 'identity.ca': inline },
      { PKI: pki.dir },
      '/nonexistent-base',
    )
    expect(show(findings.filter((f) => f.path === 'identity.cert' || f.path === 'identity.key' || f.path === 'identity.ca'))).toBe('')
    // server_cert stays relative: resolved against the (wrong) base it is missing
    expectOne(findings, 'error', 'identity.server_cert', /cannot read \/nonexistent-base\/server\.cert\.pem: no such file/)
  })

  it('reports a missing file, a directory and a file too large at the field that names them', async () => {
    mkdirSync(join(pki.dir, 'a-dir'), { recursive: true })
    expectOne(await check({ 'identity.ca': 'missing.pem' }), 'error', 'identity.ca', new RegExp(`cannot read ${pki.dir}/missing\\.pem: no such file`))
    expectOne(await check({ 'identity.ca': 'a-dir' }), 'error', 'identity.ca', /it is a directory/)
    pki.write('huge.pem', 'x'.repeat(1024 * 1024 + 1))
    expectOne(await check({ 'identity.ca': 'huge.pem' }), 'error', 'identity.ca', /too large for a certificate or key file/)
  })

  it('reports garbage, truncated PEM and wrong PEM types as certificate files', async () => {
    const cert = await Bun.file(join(pki.dir, 'client.cert.pem')).text()
    const cases: [string, RegExp][] = [
      ['garbage', /is not a PEM certificate file: no PEM block found/],
      [cert.slice(0, 200), /is not a PEM certificate file/],
      [pki.keyPem, /is not a PEM certificate file: PEM block 0 is PRIVATE KEY, expected CERTIFICATE/],
      [cert.replace(/^(-----BEGIN CERTIFICATE-----\n)(.{10})/, '$1AAAAAAAAAA'), /is not a PEM certificate file/],
    ]
    for (const [i, [text, message]] of cases.entries()) {
      const name = pki.write(`bad-cert-${i}.pem`, text)
      expectOne(await check({ 'identity.ca': name }), 'error', 'identity.ca', message)
    }
  })
})

describe('--check-files: keys', () => {
  it('accepts SEC1 EC keys and PKCS#1 RSA keys that match their certificates', async () => {
    pki.write('router.sec1.pem', reencodeKey(pki.keyPem, 'sec1'))
    expect(show(await check({ 'identity.key': 'router.sec1.pem' }))).toBe('')
    const rsa = await pki.newKey('rsa-2048')
    pki.write('rsa.client.pem', await pki.leaf({ kind: 'client', keyPair: rsa.keyPair }))
    pki.write('rsa.key.pem', reencodeKey(rsa.pem, 'pkcs1'))
    expect(show(await check({ 'identity.cert': 'rsa.client.pem', 'identity.key': 'rsa.key.pem', 'identity.server_key': 'router.key.pem' }))).toBe('')
  })

  it('reports a key that does not match its certificate', async () => {
    pki.write('other.key.pem', (await pki.newKey()).pem)
    const findings = await check({ 'identity.key': 'other.key.pem' })
    expect(findings.map((f) => `${f.severity} ${f.path}`)).toEqual(['error identity.key', 'error identity.key'])
    expect(findings[0].message).toMatch(/does not match the certificate 'router-east' \(serial [0-9a-f]+\) of identity\.cert/)
    expect(findings[1].message).toMatch(/of identity\.server_cert/)
  })

  it('checks server_cert against server_key when given', async () => {
    pki.write('other2.key.pem', (await pki.newKey()).pem)
    expectOne(await check({ 'identity.server_key': 'other2.key.pem' }), 'error', 'identity.server_key', /does not match the certificate .* of identity\.server_cert/)
  })

  it('reports an encrypted key (PKCS#8 and legacy PEM) without guessing at it', async () => {
    pki.write('enc8.pem', reencodeKey(pki.keyPem, 'pkcs8', 'secret'))
    pki.write('enc-sec1.pem', reencodeKey(pki.keyPem, 'sec1', 'secret'))
    for (const name of ['enc8.pem', 'enc-sec1.pem']) {
      expectOne(await check({ 'identity.key': name }), 'error', 'identity.key', /is encrypted; the router's identity has no passphrase setting/)
    }
  })

  it('reports garbage, truncated and wrong-type key files', async () => {
    const cases: [string, RegExp][] = [
      ['\u0000\u00ff garbage', /is not a readable private key .*no PRIVATE KEY PEM block found/],
      [pki.keyPem.slice(0, 60), /is not a readable private key/],
      [await Bun.file(join(pki.dir, 'ca.cert.pem')).text(), /is not a readable private key .*no PRIVATE KEY PEM block found/],
      ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', /is not a readable private key/],
    ]
    for (const [i, [text, message]] of cases.entries()) {
      const name = pki.write(`bad-key-${i}.pem`, text)
      expectOne(await check({ 'identity.key': name }), 'error', 'identity.key', message)
    }
  })
})

describe('--check-files: chains, validity and usages', () => {
  it('reports certificates that do not verify against a foreign CA bundle', async () => {
    const foreign = await makeRouterPki()
    try {
      pki.write('foreign-ca.pem', await Bun.file(join(foreign.dir, 'ca.cert.pem')).text())
      const findings = await check({ 'identity.ca': 'foreign-ca.pem' })
      expect(findings.map((f) => `${f.severity} ${f.path}`)).toEqual(['error identity.cert', 'error identity.server_cert'])
      expect(findings[0].message).toMatch(/certificate 'router-east' .* does not verify against the CA bundle identity\.ca .*: no known issuer for 'router test intermediate'/)
    } finally {
      foreign.cleanup()
    }
  })

  it('reports a certificate without its intermediate when ca holds only the root', async () => {
    const leafOnly = (await Bun.file(join(pki.dir, 'client.cert.pem')).text()).split(/(?<=-----END CERTIFICATE-----\n)/)[0]
    pki.write('leaf-only.pem', leafOnly)
    expectOne(await check({ 'identity.cert': 'leaf-only.pem' }), 'error', 'identity.cert', /does not verify .*no known issuer for 'router-east'/)
  })

  it('reports expired and not-yet-valid certificates as errors, and warns 30 days ahead', async () => {
    pki.write('expired.pem', await pki.leaf({ kind: 'client', notBefore: pki.now - 40 * DAY_MS, notAfter: pki.now - DAY_MS }))
    pki.write('future.pem', await pki.leaf({ kind: 'client', notBefore: pki.now + DAY_MS, notAfter: pki.now + 40 * DAY_MS }))
    pki.write('soon.pem', await pki.leaf({ kind: 'client', notAfter: pki.now + 10 * DAY_MS + 3_600_000 }))
    expectOne(await check({ 'identity.cert': 'expired.pem' }), 'error', 'identity.cert', /certificate 'router-east' .* expired at \d{4}-/)
    expectOne(await check({ 'identity.cert': 'future.pem' }), 'error', 'identity.cert', /is not valid before \d{4}-/)
    expectOne(await check({ 'identity.cert': 'soon.pem' }), 'warning', 'identity.cert', /expires in 10 days/)
  })

  it('wants clientAuth on cert and serverAuth on server_cert', async () => {
    expectOne(await check({ 'identity.cert': 'server.cert.pem' }), 'error', 'identity.cert', /used as the client certificate but its extended key usage \(serverAuth\) lacks clientAuth/)
    const findings = await check({ 'identity.server_cert': 'client.cert.pem' })
    expect(findings.some((f) => f.path === 'identity.server_cert' && /lacks serverAuth/.test(f.message))).toBe(true)
  })
})

describe('--check-files: advertise addresses against the server certificate SANs', () => {
  // The plain rules already warn about an advertised host missing from csr.sans; these tests look at the certificate.
  const sanFindings = async (patch: Record<string, unknown>): Promise<Finding[]> =>
    (await check(patch)).filter((f) => !/is not among the csr SANs/.test(f.message))

  it('reports each advertise host that no SAN covers, naming the SANs present', async () => {
    const findings = await sanFindings({
      'listeners[0].options.advertise': 'edge.other.org:3022',
      'link.listeners[0].advertise': 'tls:10.1.2.3:4022',
      'web[0].bindPoints[0].address': 'health.other.org:8081',
    })
    expect(findings.map((f) => `${f.severity} ${f.path}`)).toEqual([
      'error link.listeners[0].advertise',
      'error listeners[0].options.advertise',
      'warning web[0].bindPoints[0].address',
    ])
    expect(findings[0].message).toBe(
      '10.1.2.3 is not covered by the server certificate of identity; SANs present: DNS router-east.example.net, localhost; IP 127.0.0.1, ::1 (the router refuses to start)',
    )
    expect(findings[1].message).toMatch(/^edge\.other\.org is not covered/)
  })

  it('accepts IP advertise addresses covered by IP SANs and ignores non-TLS link listeners', async () => {
    expect(show(await sanFindings({ 'listeners[0].options.advertise': '127.0.0.1:3022', 'link.listeners[0].advertise': 'tcp:10.1.2.3:4022' }))).toBe('')
  })

  it('matches wildcard SANs on exactly one label, and alternate server certificates count', async () => {
    pki.write('wild.pem', await pki.leaf({ kind: 'server', dnsNames: ['*.example.net'], ipAddresses: [] }))
    const wild = { 'identity.server_cert': 'wild.pem', 'csr.sans': { dns: ['*.example.net'] } }
    expect(show(await check(wild))).toBe('')
    expectOne(await sanFindings({ ...wild, 'listeners[0].options.advertise': 'a.b.example.net:3022' }), 'error', 'listeners[0].options.advertise', /a\.b\.example\.net is not covered .*SANs present: DNS \*\.example\.net/)
    pki.write('alt.pem', await pki.leaf({ kind: 'server', dnsNames: ['a.b.example.net'], ipAddresses: [] }))
    const withAlt = { ...wild, 'listeners[0].options.advertise': 'a.b.example.net:3022', 'identity.alt_server_certs': [{ server_cert: 'alt.pem', server_key: 'router.key.pem' }] }
    expect(show(await sanFindings(withAlt))).toBe('')
  })

  it('follows Go: case-insensitive names, IPs only by IP SANs', () => {
    const view = { dnsNames: ['*.Example.net', 'host.local'], ipAddresses: ['10.0.0.1', '2001:db8::1'] }
    expect(hostCoveredBy('A.example.NET', view)).toBe(true)
    expect(hostCoveredBy('example.net', view)).toBe(false)
    expect(hostCoveredBy('host.local.', view)).toBe(true)
    expect(hostCoveredBy('2001:DB8:0::1', view)).toBe(true)
    expect(hostCoveredBy('10.0.0.2', view)).toBe(false)
  })
})

describe('--check-files: other identities and keys', () => {
  it("checks a web server's own identity, and its bind points against that identity's server certificate", async () => {
    pki.write('web.pem', await pki.leaf({ kind: 'server', dnsNames: ['health.example.net'], ipAddresses: [] }))
    const findings = await check({ 'web[0].identity': { ...PKI_IDENTITY, server_cert: 'web.pem', ca: 'gone.pem' } })
    // sorted by position: the identity key is added after bindPoints
    expect(findings.map((f) => `${f.severity} ${f.path}`)).toEqual(['warning web[0].bindPoints[0].address', 'error web[0].identity.ca'])
    expect(findings[0].message).toMatch(/^router-east\.example\.net is not covered by the server certificate of web\[0\]\.identity; SANs present: DNS health\.example\.net \(the router starts but TLS clients will reject this bind point\)$/)
  })

  it('checks alternate server certificates against their own keys', async () => {
    pki.write('alt-key.pem', (await pki.newKey()).pem)
    expectOne(
      await check({ 'identity.alt_server_certs': [{ server_cert: 'server.cert.pem', server_key: 'alt-key.pem' }] }),
      'error',
      'identity.alt_server_certs[0].server_key',
      /does not match the certificate .* of identity\.alt_server_certs\[0\]\.server_cert/,
    )
  })

  it('checks keys of any algorithm OpenSSL reads: an Ed25519 key does not match the EC certificates', async () => {
    pki.write('ed25519.pem', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
    const findings = await check({ 'identity.key': 'ed25519.pem' })
    expect(findings.map((f) => `${f.severity} ${f.path}`)).toEqual(['error identity.key', 'error identity.key'])
    expect(findings.map((f) => f.message).join('\n')).toMatch(/does not match the certificate .* of identity\.cert .*\n.*does not match the certificate .* of identity\.server_cert/)
  })

  it('warns about a key block of a kind it cannot read, and leaves engine: keys alone', async () => {
    pki.write('dsa.pem', `-----BEGIN DSA PRIVATE KEY-----\n${Buffer.from('not checked').toString('base64')}\n-----END DSA PRIVATE KEY-----\n`)
    expectOne(await check({ 'identity.key': 'dsa.pem' }), 'warning', 'identity.key', /cannot be checked: unsupported private key block type DSA PRIVATE KEY/)
    expect(show(await check({ 'identity.key': 'engine:pkcs11?slot=0' }))).toBe('')
  })
})

describe('--check-files: csr sans', () => {
  it('warns when csr.sans differs from the server certificate SANs', async () => {
    expectOne(
      await check({ 'csr.sans': { dns: ['router-east.example.net', 'new.example.net'], ip: ['127.0.0.1', '::1'] } }),
      'warning',
      'csr.sans',
      /next enrollment would change them; only in csr: DNS new\.example\.net; only in the certificate: DNS localhost$/,
    )
  })
})

describe('--check-files: the command', () => {
  async function run(argv: string[], text: string): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = ''
    let stderr = ''
    const code = await runValidateRouterConfig(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: async () => text, env: {}, now: () => pki.now })
    return { code, stdout, stderr }
  }

  it('is off by default, and sorts file findings with the others in text and JSON', async () => {
    const text = patched({ identity: { ...PKI_IDENTITY, key: 'nope.pem' }, 'listeners[0].options.advertise': 'other.org:3022', 'link.listeners[0].groups': 7 })
    const plain = await run(['-'], text)
    expect(plain.code).toBe(1) // groups: 7 is a schema error on its own
    expect(plain.stdout).not.toContain('nope.pem')
    const checked = await run(['--check-files', '--base', pki.dir, '-'], text)
    expect(checked.code).toBe(1)
    const lines = checked.stdout.trim().split('\n')
    const at = (needle: string) => lines.findIndex((l) => l.includes(needle))
    expect(lines[at('identity.key')]).toMatch(new RegExp(`^<stdin>:\\d+:\\d+: error: identity\\.key: cannot read ${pki.dir}/nope\\.pem: no such file$`))
    expect(at('identity.key')).toBeLessThan(at('link.listeners[0].groups'))
    expect(at('link.listeners[0].groups')).toBeLessThan(at('listeners[0].options.advertise'))
    const json = JSON.parse((await run(['--check-files', `--base=${pki.dir}`, '--format', 'json', '-'], text)).stdout)
    const paths = json.files[0].findings.map((f: Finding) => f.path)
    expect(paths).toContain('identity.key')
    expect(paths).toContain('listeners[0].options.advertise')
  })

  it('refuses --base without --check-files or without a directory, and documents both', async () => {
    expect((await run(['--base', '/tmp', '-'], '')).stderr).toContain('--base is used only with --check-files')
    expect((await run(['--check-files', '-', '--base'], '')).code).toBe(2)
    const help = (await run(['--help'], '')).stdout
    expect(help).toContain('--check-files')
    expect(help).toContain('--base DIR')
  })
})
