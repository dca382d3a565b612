/**
 * A router PKI for the `--check-files` tests, generated in memory and written to a temporary folder:
 * root CA → intermediate CA → the router's client and server certificates (one EC key, as an enrolled
 * router has), plus helpers to write more files next to them. Not a test file.
 */
import { createPrivateKey } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIntermediateCa, issueClientCertificate, issueServerCertificate, type CaSigner } from '../../../src/pki/pki-certs.ts'
import { exportPrivateKeyPem, generateKeyPair, type KeySpec } from '../../../src/pki/pki-keys.ts'
import { makeTestCa } from '../../support/pki.ts'

const DAY_MS = 24 * 3_600_000

/** DNS and IP SANs of the server certificate: what the edge-router fixture advertises and asks for in csr.sans. */
export const SERVER_SANS = { dnsNames: ['router-east.example.net', 'localhost'], ipAddresses: ['127.0.0.1', '::1'] }

/** The generated files and what is needed to make more. */
export interface RouterPki {
  dir: string
  now: number
  root: CaSigner & { certPem: string }
  intermediate: CaSigner
  keyPair: CryptoKeyPair
  keyPem: string
  /** Writes `text` as `name` in the folder and returns `name`. */
  write: (name: string, text: string) => string
  /** A leaf signed by the intermediate for the router key (or `keyPair`), as PEM with the intermediate after it. */
  leaf: (opts: { kind: 'client' | 'server'; keyPair?: CryptoKeyPair; notBefore?: number; notAfter?: number; dnsNames?: string[]; ipAddresses?: string[] }) => Promise<string>
  /** A key pair and its PKCS#8 PEM. */
  newKey: (spec?: KeySpec) => Promise<{ keyPair: CryptoKeyPair; pem: string }>
  cleanup: () => void
}

/** PKCS#8 PEM re-encoded as SEC1 (EC) or PKCS#1 (RSA), optionally encrypted with the legacy PEM header. */
export function reencodeKey(pkcs8Pem: string, type: 'sec1' | 'pkcs1' | 'pkcs8', passphrase?: string): string {
  const key = createPrivateKey(pkcs8Pem)
  const cipher = passphrase === undefined ? {} : { cipher: 'aes-256-cbc', passphrase }
  return key.export({ type, format: 'pem', ...cipher } as Parameters<typeof key.export>[0]) as string
}

/** Generates the PKI and writes client.cert.pem, server.cert.pem, router.key.pem and ca.cert.pem. */
export async function makeRouterPki(): Promise<RouterPki> {
  const dir = mkdtempSync(join(tmpdir(), 'router-pki-'))
  const now = Date.now()
  const validity = { notBefore: now - 3_600_000, notAfter: now + 365 * DAY_MS }
  const rootCa = await makeTestCa({ commonName: 'router test root', ...validity })
  const interKeys = await generateKeyPair()
  const interPem = await createIntermediateCa({ issuer: rootCa.signer, subject: { commonName: 'router test intermediate' }, publicKey: interKeys.publicKey, ...validity })
  const intermediate = { certPem: interPem, privateKey: interKeys.privateKey }
  const keyPair = await generateKeyPair()
  const keyPem = await exportPrivateKeyPem(keyPair.privateKey)
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text)
    return name
  }
  const leaf: RouterPki['leaf'] = async (opts) => {
    const base = { issuer: intermediate, publicKey: (opts.keyPair ?? keyPair).publicKey, notBefore: opts.notBefore ?? validity.notBefore, notAfter: opts.notAfter ?? validity.notAfter }
    const pem =
      opts.kind === 'client'
        ? await issueClientCertificate({ ...base, commonName: 'router-east' })
        : await issueServerCertificate({ ...base, commonName: 'router-east', dnsNames: opts.dnsNames ?? SERVER_SANS.dnsNames, ipAddresses: opts.ipAddresses ?? SERVER_SANS.ipAddresses })
    return pem + interPem
  }
  write('client.cert.pem', await leaf({ kind: 'client' }))
  write('server.cert.pem', await leaf({ kind: 'server' }))
  write('router.key.pem', keyPem)
  write('ca.cert.pem', rootCa.certPem)
  return {
    dir,
    now,
    root: rootCa.signer,
    intermediate,
    keyPair,
    keyPem,
    write,
    leaf,
    newKey: async (spec) => {
      const pair = await generateKeyPair(spec)
      return { keyPair: pair, pem: await exportPrivateKeyPem(pair.privateKey) }
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** The identity section pointing at the generated files by relative path. */
export const PKI_IDENTITY = { cert: 'client.cert.pem', server_cert: 'server.cert.pem', key: 'router.key.pem', ca: 'ca.cert.pem' }
