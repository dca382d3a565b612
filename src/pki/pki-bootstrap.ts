/**
 * The controller's own PKI on disk: root CA → intermediate CA → TLS server certificate, created on first start and
 * loaded, never overwritten, afterwards. A half-written directory is completed; a corrupt file stops start-up with an
 * Error naming it. This is the only pki module that touches the filesystem.
 */
import { X509Certificate } from 'node:crypto'
import { chmod, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiError } from '../errors/api-error.ts'
import type { Clock } from '../lib/clock.ts'
import { verifyCertificateChain } from './pki-chain.ts'
import {
  certificateDersOf,
  createIntermediateCa,
  createRootCa,
  issueServerCertificate,
  readCertificateDer,
  toCertificatePem,
  toCertificateView,
  type CaSigner,
  type CertificateView,
  type ParsedCertificate,
} from './pki-certs.ts'
import { exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem, publicKeyFromPrivateKey, publicKeySpkiOfPrivateKeyPem } from './pki-keys.ts'
import { canonicalIp } from './pki-names.ts'

/** The file names inside the PKI directory. */
export const CONTROLLER_PKI_FILES = {
  rootCert: 'root-ca.cert.pem',
  rootKey: 'root-ca.key.pem',
  intermediateCert: 'intermediate-ca.cert.pem',
  intermediateKey: 'intermediate-ca.key.pem',
  /** The server leaf followed by the intermediate. */
  serverCert: 'server.cert.pem',
  serverKey: 'server.key.pem',
} as const

const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS
/** notBefore is set this far before the clock so peers with a slightly slow clock accept new certificates. */
export const BACKDATE_MS = 5 * MINUTE_MS
const ROOT_TTL_MS = 3650 * DAY_MS
const INTERMEDIATE_TTL_MS = 1825 * DAY_MS
const SERVER_TTL_MS = 365 * DAY_MS
const KEY_MODE = 0o600
/** Certificates are public, but the data directory is private to the owner, all of it. */
const CERT_MODE = 0o600
const DIR_MODE = 0o700
const STALE_TEMP = /^(root-ca|intermediate-ca|server)\.(cert|key)\.pem\.[0-9a-f]+\.tmp$/

/** What the controller needs from its PKI at run time. */
export interface ControllerPki {
  dir: string
  root: { certPem: string; view: CertificateView }
  intermediate: { certPem: string; view: CertificateView; privateKey: CryptoKey }
  /** The intermediate as a signer: what issues client and router certificates from now on. */
  signer: CaSigner
  /** `certPem` is the leaf only; the file on disk also holds the intermediate. */
  server: { certPem: string; keyPem: string; view: CertificateView }
  /** Intermediate then root: what clients should trust (and what EST cacerts serves). */
  caBundlePem: string
  /** Ready for `node:tls` `createServer(tls)`: the key and the chain leaf + intermediate. */
  tls: { key: string; cert: string }
  /** Files this call wrote (names from {@link CONTROLLER_PKI_FILES}); empty when everything was reused. */
  created: string[]
  /**
   * SANs asked for (localhost, 127.0.0.1, ::1, the host name, the extra SANs) that the existing server certificate
   * lacks. The certificate is not reissued; an operator decides.
   */
  sansMissing: string[]
}

/** Options of {@link ensureControllerPki}. */
export interface ControllerPkiOptions {
  /** The controller's host name: the server certificate's CN and a SAN. */
  hostname: string
  /** More SANs for the server certificate; each is an IP address (v4/v6) or else a DNS name. */
  extraSans: string[]
  clock: Clock
  /**
   * Issue a new server certificate even though one exists (`run --renew-server-cert`): same key, same intermediate,
   * a new validity from now and the SANs asked for now. The old file is replaced atomically.
   */
  renewServerCert?: boolean
  /**
   * A cluster node's name. The server key and certificate are this node's own: when the directory holds another
   * node's (restored from a member's backup) or none recorded, a new key and certificate are issued from the shared
   * intermediate, and the name is written to `node-name` last (a crash in between issues them again at the next start).
   */
  nodeName?: string
}

/** The file naming the cluster node whose server key and certificate the directory holds. */
export const NODE_NAME_FILE = 'node-name'

/**
 * Loads the controller PKI from `dir`, creating whatever is missing (the directory itself with mode 0700).
 * Keys and certificates are written with mode 0600, each through a temporary file renamed into place, and an
 * existing file is never replaced. Missing pieces are completed from what exists: a key without its certificate
 * gets one; a certificate without its key is an error, except the root key, which may be kept offline once the
 * intermediate exists.
 * @throws Error naming the file when one is unreadable, corrupt, or does not match its key or issuer.
 */
export async function ensureControllerPki(dir: string, opts: ControllerPkiOptions): Promise<ControllerPki> {
  await ensureDirectory(dir)
  await removeStaleTemps(dir)
  const files = new PkiFiles(dir)
  const now = opts.clock.now()
  const validity = (ttlMs: number) => ({ notBefore: now - BACKDATE_MS, notAfter: now + ttlMs })
  const F = CONTROLLER_PKI_FILES

  // Root CA. Its key is needed only to issue the intermediate.
  let rootCertPem = await files.read(F.rootCert)
  let rootKey = await files.readKey(F.rootKey)
  const intermediateCertOnDisk = await files.read(F.intermediateCert)
  if (!rootCertPem) {
    if (!rootKey && intermediateCertOnDisk) throw new Error(`${files.path(F.rootCert)} is missing but ${F.intermediateCert} exists`)
    rootKey ??= await files.createKey(F.rootKey)
    const privateKey = await files.cryptoKey(F.rootKey, rootKey)
    rootCertPem = await createRootCa({
      subject: { commonName: `edgeplane root CA (${opts.hostname})`, organization: 'edgeplane' },
      keyPair: { privateKey, publicKey: await publicKeyFromPrivateKey(privateKey) },
      ...validity(ROOT_TTL_MS),
    })
    await files.write(F.rootCert, rootCertPem, CERT_MODE)
  }
  const root = files.parseCert(F.rootCert, rootCertPem)
  if (rootKey) files.assertKeyMatches(F.rootKey, rootKey, F.rootCert, root)
  await files.assertChain(F.rootCert, root, [], root, now)

  // Intermediate CA.
  let intermediateCertPem = intermediateCertOnDisk
  let intermediateKey = await files.readKey(F.intermediateKey)
  if (!intermediateCertPem) {
    if (!rootKey) throw new Error(`${files.path(F.rootKey)} is missing; it is needed to issue ${F.intermediateCert}`)
    intermediateKey ??= await files.createKey(F.intermediateKey)
    intermediateCertPem = await createIntermediateCa({
      issuer: { certPem: rootCertPem, privateKey: await files.cryptoKey(F.rootKey, rootKey) },
      subject: { commonName: `edgeplane intermediate CA (${opts.hostname})`, organization: 'edgeplane' },
      publicKey: await publicKeyFromPrivateKey(await files.cryptoKey(F.intermediateKey, intermediateKey)),
      ...validity(INTERMEDIATE_TTL_MS),
    })
    await files.write(F.intermediateCert, intermediateCertPem, CERT_MODE)
  } else if (!intermediateKey) {
    throw new Error(`${files.path(F.intermediateKey)} is missing but ${F.intermediateCert} exists`)
  }
  const intermediate = files.parseCert(F.intermediateCert, intermediateCertPem)
  files.assertKeyMatches(F.intermediateKey, intermediateKey, F.intermediateCert, intermediate)
  await files.assertChain(F.intermediateCert, intermediate, [], root, now)
  const intermediatePrivateKey = await files.cryptoKey(F.intermediateKey, intermediateKey)
  const signer: CaSigner = { certPem: intermediateCertPem, privateKey: intermediatePrivateKey }

  // Server certificate: the leaf followed by the intermediate.
  const wantedSans = toSans([opts.hostname, ...opts.extraSans])
  let serverCertPem = await files.read(F.serverCert)
  let serverKey = await files.readKey(F.serverKey)
  if (serverCertPem && !serverKey) throw new Error(`${files.path(F.serverKey)} is missing but ${F.serverCert} exists`)
  const nodeOnDisk = opts.nodeName === undefined ? null : (await files.read(NODE_NAME_FILE))?.trim() ?? null
  const foreign = opts.nodeName !== undefined && nodeOnDisk !== opts.nodeName
  const renewing = serverCertPem !== null && (opts.renewServerCert === true || foreign)
  if (!serverCertPem || renewing) {
    // a renewal keeps the key (JWTs the server key signed stay verifiable) and the CA; new validity and SANs; a node
    // that holds another node's key gets its own
    if (foreign && serverKey) serverKey = await files.createKey(F.serverKey, true)
    serverKey ??= await files.createKey(F.serverKey)
    const leafPem = await issueServerCertificate({
      issuer: signer,
      publicKey: await publicKeyFromPrivateKey(await files.cryptoKey(F.serverKey, serverKey)),
      commonName: opts.hostname,
      dnsNames: wantedSans.dnsNames,
      ipAddresses: wantedSans.ipAddresses,
      ...validity(SERVER_TTL_MS),
    })
    serverCertPem = leafPem + intermediateCertPem
    await files.write(F.serverCert, serverCertPem, CERT_MODE, renewing)
    if (opts.nodeName !== undefined) await files.write(NODE_NAME_FILE, `${opts.nodeName}\n`, CERT_MODE, nodeOnDisk !== null)
  }
  const server = files.parseCert(F.serverCert, serverCertPem)
  const serverLeafPem = toCertificatePem(server)
  if (!serverKey) throw new Error(`${files.path(F.serverKey)} is missing but ${F.serverCert} exists`)
  files.assertKeyMatches(F.serverKey, serverKey, F.serverCert, server)
  await files.assertChain(F.serverCert, server, [intermediate], root, now)

  const has = new Set([...server.view.dnsNames.map((d) => d.toLowerCase()), ...server.view.ipAddresses])
  return {
    dir,
    root: { certPem: rootCertPem, view: root.view },
    intermediate: { certPem: intermediateCertPem, view: intermediate.view, privateKey: intermediatePrivateKey },
    signer,
    server: { certPem: serverLeafPem, keyPem: serverKey.pem, view: server.view },
    caBundlePem: intermediateCertPem + rootCertPem,
    tls: { key: serverKey.pem, cert: serverLeafPem + intermediateCertPem },
    created: files.created,
    sansMissing: [...wantedSans.dnsNames, ...wantedSans.ipAddresses].filter((san) => !has.has(san)),
  }
}

/**
 * The server SANs: localhost, 127.0.0.1 and ::1 first, then `names` classified as IP (canonical form) or DNS
 * (lower case); blanks dropped, duplicates removed.
 */
function toSans(names: string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames = new Set<string>(['localhost'])
  const ipAddresses = new Set<string>(['127.0.0.1', '::1'])
  for (const raw of names) {
    const name = raw.trim()
    if (!name) continue
    const ip = canonicalIp(name)
    if (ip) ipAddresses.add(ip)
    else dnsNames.add(name.toLowerCase())
  }
  return { dnsNames: [...dnsNames], ipAddresses: [...ipAddresses] }
}

async function ensureDirectory(dir: string): Promise<void> {
  const existed = await stat(dir).then(
    (s) => {
      if (!s.isDirectory()) throw new Error(`${dir} exists and is not a directory`)
      return true
    },
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false
      throw e
    },
  )
  if (existed) return
  await mkdir(dir, { recursive: true, mode: DIR_MODE })
  await chmod(dir, DIR_MODE)
}

/** Temp files left by a crash between write and rename; they never hold anything that was in use. */
async function removeStaleTemps(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (STALE_TEMP.test(name)) await unlink(join(dir, name)).catch(() => {})
  }
}

/**
 * A private key: the PEM text it has on disk and its public key (DER SubjectPublicKeyInfo, derived by OpenSSL when the
 * file is read: that reading is the check that the file holds a usable key). The WebCrypto key is imported only where
 * it signs (the intermediate always; the root and server keys only to issue a certificate).
 */
interface LoadedKey {
  pem: string
  spki: Uint8Array
  key?: CryptoKey
}

/**
 * A certificate file's first certificate: parsed once (pkijs, for its view and the chain check), its view, and
 * OpenSSL's reading of it (the key check).
 */
interface LoadedCertificate extends ParsedCertificate {
  view: CertificateView
  openssl: X509Certificate
}

/** File access for one PKI directory: reads that name the file in every error, and no-overwrite atomic writes. */
class PkiFiles {
  readonly created: string[] = []
  constructor(private readonly dir: string) {}

  path(name: string): string {
    return join(this.dir, name)
  }

  /** The file's text, or null when it does not exist. */
  async read(name: string): Promise<string | null> {
    try {
      return await readFile(this.path(name), 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw new Error(`${this.path(name)} could not be read: ${(e as Error).message}`, { cause: e })
    }
  }

  async readKey(name: string): Promise<LoadedKey | null> {
    const pem = await this.read(name)
    if (pem === null) return null
    try {
      return { pem, spki: publicKeySpkiOfPrivateKeyPem(pem) }
    } catch (e) {
      throw new Error(`${this.path(name)} is not a usable private key: ${(e as Error).message}`, { cause: e })
    }
  }

  /** The key as a WebCrypto signing key, imported on the first call. */
  async cryptoKey(name: string, key: LoadedKey): Promise<CryptoKey> {
    try {
      return (key.key ??= await importPrivateKeyPem(key.pem))
    } catch (e) {
      throw new Error(`${this.path(name)} is not a usable private key: ${(e as Error).message}`, { cause: e })
    }
  }

  /** A new P-256 key written to `name` with mode 0600. */
  async createKey(name: string, replace = false): Promise<LoadedKey> {
    const pair = await generateKeyPair()
    const pem = await exportPrivateKeyPem(pair.privateKey)
    await this.write(name, pem, KEY_MODE, replace)
    return { pem, spki: publicKeySpkiOfPrivateKeyPem(pem), key: pair.privateKey }
  }

  /**
   * The first certificate of a certificate file (a chain file holds more: each is checked to be a certificate too,
   * by OpenSSL).
   */
  parseCert(name: string, pem: string): LoadedCertificate {
    try {
      const [first, ...rest] = certificateDersOf(pem)
      for (const der of rest) new X509Certificate(der)
      const parsed = readCertificateDer(first!)
      return { ...parsed, view: toCertificateView(parsed), openssl: new X509Certificate(parsed.der) }
    } catch (e) {
      throw new Error(`${this.path(name)} is not a valid certificate: ${reasonOf(e)}`, { cause: e })
    }
  }

  /** The key's public key (OpenSSL's SubjectPublicKeyInfo of each) is the certificate's. */
  assertKeyMatches(keyName: string, key: LoadedKey, certName: string, cert: LoadedCertificate): void {
    const certSpki = cert.openssl.publicKey.export({ type: 'spki', format: 'der' })
    if (!certSpki.equals(key.spki)) {
      throw new Error(`${this.path(keyName)} does not match the public key of ${certName}`)
    }
  }

  /** Expiry is not corruption: an expired certificate still loads, and the caller sees its notAfter in the view. */
  async assertChain(name: string, leaf: ParsedCertificate, intermediates: ParsedCertificate[], root: ParsedCertificate, at: number): Promise<void> {
    const result = await verifyCertificateChain({ leaf, intermediates, trusted: [root], at, allowExpired: true })
    if (!result.ok && result.reason !== 'NOT_YET_VALID') {
      throw new Error(`${this.path(name)} does not chain to ${CONTROLLER_PKI_FILES.rootCert}: ${result.message}`)
    }
  }

  /** Writes a new file atomically (temp file, fsync, rename) with `mode`; refuses to replace an existing file. */
  /** Writes `name` through a temporary file renamed into place; an existing file is an error unless `replace`. */
  async write(name: string, content: string, mode: number, replace = false): Promise<void> {
    const target = this.path(name)
    if (!replace && (await this.read(name)) !== null) throw new Error(`${target} appeared while the PKI was being created`)
    const temp = `${target}.${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex')}.tmp`
    const handle = await open(temp, 'wx', mode)
    try {
      await handle.writeFile(content, 'utf8')
      await handle.sync()
    } catch (e) {
      await handle.close()
      await unlink(temp).catch(() => {})
      throw e
    }
    await handle.close()
    await chmod(temp, mode)
    await rename(temp, target)
    this.created.push(name)
  }
}

function reasonOf(e: unknown): string {
  if (e instanceof ApiError && e.apiCause?.kind === 'api') return e.apiCause.message
  return (e as Error).message
}
