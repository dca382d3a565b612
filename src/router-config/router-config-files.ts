/**
 * `--check-files`: what the router would die on at start that lives outside the configuration file
 * (../shared/reference/router-config-behaviour.md §2.1, §2.3, §2.4, §2.11). Reads the certificates,
 * keys and CA bundle an identity names (after environment substitution, relative paths against the
 * router's working directory) and reports, at the field that names them: unreadable files, PEM that
 * does not parse, keys that cannot be read or do not match their certificate, certificates that do
 * not verify against `ca`, validity windows, extended key usages, advertise hosts the server
 * certificates' SANs do not cover, and csr SANs that differ from the server certificate's.
 * Never throws on any file content.
 */
import { open } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { isApiError } from '../errors/api-error.ts'
import { decodePem } from '../lib/pem.ts'
import {
  certificateDersOf,
  readCertificateDer,
  readCertificateSpki,
  readCertificateView,
  type CertificateView,
  type ParsedCertificate,
} from '../pki/pki-certs.ts'
import { isIssuedByTrustAnchor, verifyCertificateChain } from '../pki/pki-chain.ts'
import { publicKeySpkiOfPrivateKeyPem } from '../pki/pki-keys.ts'
import { canonicalIp } from '../pki/pki-names.ts'
import { splitHostPort } from './router-config-address.ts'
import type { FindingList } from './router-config-findings.ts'
import { asMap, childOf, itemsOf, stringOf, stringsOf } from './router-config-tree.ts'
import type { ConfigNode, MapNode } from './router-config-yaml.ts'

/** Where and when the files are checked. */
export interface FileCheckOptions {
  /** The router's working directory: relative paths are resolved against it. */
  base: string
  /** The time of the check, epoch ms. */
  now: number
}

/** Certificates expiring sooner than this get a warning. */
export const EXPIRY_WARNING_MS = 30 * 24 * 3_600_000
/** A certificate or key file larger than this is refused without being read whole. */
export const MAX_PKI_FILE_BYTES = 1024 * 1024

interface Source {
  path: string
  node: ConfigNode
  text: string
  /** How to name it in messages: the resolved file path, or "inline PEM". */
  shown: string
}

/**
 * A certificate file as OpenSSL (node:crypto) read it. asn1js (pkijs), about 5 ms a certificate on Bun, reads only
 * the certificates a chain check needs as issuers, and the rest only when a chain fails and the reason is wanted.
 */
interface CertFile extends Source {
  /** Every certificate of the file, in order; the first is the leaf. */
  ders: Uint8Array[]
  leaf: CertificateView
  /** The leaf's SubjectPublicKeyInfo DER. */
  leafSpki: Uint8Array
}

/** pkijs's reading of a certificate, at most once per check of an identity (its files share certificates). */
type ParseOnce = (der: Uint8Array) => ParsedCertificate

interface LoadedIdentity {
  path: string
  cert?: CertFile
  /** The default server certificate and the alternates, in that order. */
  serverCerts: CertFile[]
  ca?: CertFile
}

function messageOf(e: unknown): string {
  if (isApiError(e) && e.apiCause?.kind === 'api') return e.apiCause.message
  return e instanceof Error ? e.message : String(e)
}

/** Why a file could not be read, in a few words. */
export function describeReadError(e: unknown): string {
  const code = (e as { code?: string }).code
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EISDIR') return 'it is a directory'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  return messageOf(e)
}

/** Reads a regular file of bounded size as text; a string result is the reason it could not be read. */
async function readBounded(file: string): Promise<{ text: string } | string> {
  let handle
  try {
    handle = await open(file, 'r')
  } catch (e) {
    return describeReadError(e)
  }
  try {
    const stat = await handle.stat()
    if (stat.isDirectory()) return 'it is a directory'
    if (!stat.isFile()) return 'not a regular file'
    if (stat.size > MAX_PKI_FILE_BYTES) return `it is ${stat.size} bytes, too large for a certificate or key file`
    const bytes = new Uint8Array(stat.size)
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0)
    return { text: new TextDecoder('utf-8').decode(bytes.subarray(0, bytesRead)) }
  } catch (e) {
    return describeReadError(e)
  } finally {
    await handle.close()
  }
}

/**
 * Loads what an identity field names, as the router's identity loader does: `pem:` inline PEM,
 * `file:` or a bare path a file, `engine:` a hardware key (not checked). Reports a read failure.
 */
async function loadSource(path: string, node: ConfigNode | undefined, options: FileCheckOptions, findings: FindingList): Promise<Source | undefined> {
  const value = stringOf(node)
  if (node === undefined || value === undefined || value === '') return undefined
  if (value.startsWith('pem:')) return { path, node, text: value.slice('pem:'.length), shown: 'inline PEM' }
  if (value.startsWith('engine:')) return undefined
  const name = value.startsWith('file:') ? value.slice('file:'.length) : value
  const file = isAbsolute(name) ? name : resolve(options.base, name)
  const read = await readBounded(file)
  if (typeof read === 'string') {
    findings.error(path, node.offset, `cannot read ${file}: ${read}`)
    return undefined
  }
  return { path, node, text: read.text, shown: file }
}

function describeCert(view: CertificateView): string {
  return `'${view.subjectCn}' (serial ${view.serialHex})`
}

/** Parses a certificate file (a chain is allowed) and reports the validity window of each certificate. */
function parseCertFile(source: Source, options: FileCheckOptions, findings: FindingList): CertFile | undefined {
  let ders: Uint8Array[]
  let views: CertificateView[]
  let leafSpki: Uint8Array
  try {
    ders = certificateDersOf(source.text)
    views = ders.map((der, i) => readCertificateView(der, i))
    leafSpki = readCertificateSpki(ders[0])
  } catch (e) {
    findings.error(source.path, source.node.offset, `${source.shown} is not a PEM certificate file: ${messageOf(e)}`)
    return undefined
  }
  for (const view of views) {
    const name = describeCert(view)
    if (options.now < view.notBefore) {
      findings.error(source.path, source.node.offset, `certificate ${name} in ${source.shown} is not valid before ${new Date(view.notBefore).toISOString()}`)
    } else if (options.now > view.notAfter) {
      findings.error(source.path, source.node.offset, `certificate ${name} in ${source.shown} expired at ${new Date(view.notAfter).toISOString()}`)
    } else if (view.notAfter - options.now < EXPIRY_WARNING_MS) {
      const days = Math.floor((view.notAfter - options.now) / (24 * 3_600_000))
      findings.warning(source.path, source.node.offset, `certificate ${name} in ${source.shown} expires in ${days} day${days === 1 ? '' : 's'} (${new Date(view.notAfter).toISOString()})`)
    }
  }
  return { ...source, ders, leaf: views[0], leafSpki }
}

/** Whether any PEM block of the text is an encrypted private key (PKCS#8 or the legacy Proc-Type header). */
function isEncryptedKey(text: string): boolean {
  try {
    return decodePem(text).some((b) => b.type === 'ENCRYPTED PRIVATE KEY' || (b.type.endsWith('PRIVATE KEY') && b.headers['Proc-Type']?.includes('ENCRYPTED') === true))
  } catch {
    return false
  }
}

/** Reads the key and reports whether it matches the leaf of each certificate file that uses it. */
function checkKey(key: Source, certs: CertFile[], findings: FindingList): void {
  if (isEncryptedKey(key.text)) {
    findings.error(key.path, key.node.offset, `the key in ${key.shown} is encrypted; the router's identity has no passphrase setting, so it cannot load it (not checked further)`)
    return
  }
  let spki: Uint8Array
  try {
    spki = publicKeySpkiOfPrivateKeyPem(key.text)
  } catch (e) {
    const reason = messageOf(e)
    if (reason.startsWith('unsupported')) findings.warning(key.path, key.node.offset, `the key in ${key.shown} cannot be checked: ${reason}`)
    else findings.error(key.path, key.node.offset, `${key.shown} is not a readable private key (RSA, EC or Ed25519; PKCS#1, PKCS#8 or SEC1 PEM): ${reason}`)
    return
  }
  for (const cert of certs) {
    if (!Buffer.from(spki).equals(cert.leafSpki)) {
      findings.error(key.path, key.node.offset, `the key in ${key.shown} does not match the certificate ${describeCert(cert.leaf)} of ${cert.path} (${cert.shown})`)
    }
  }
}

/** Verifies the leaf of `file` (with the intermediates in the file and in `ca`) against the CA bundle. */
async function checkChain(file: CertFile, ca: CertFile, options: FileCheckOptions, findings: FindingList, parse: ParseOnce): Promise<void> {
  if (options.now < file.leaf.notBefore || options.now > file.leaf.notAfter) return // reported with the file
  // As Go's x509 with the bundle as its root pool: every certificate of `ca` is a trust anchor.
  let result
  try {
    const chain = { intermediates: file.ders.slice(1).map(parse), trusted: ca.ders.map(parse), at: options.now }
    if (isIssuedByTrustAnchor({ leaf: file.ders[0], ...chain })) return
    result = await verifyCertificateChain({ leaf: parse(file.ders[0]), ...chain })
  } catch (e) {
    // pkijs may refuse what OpenSSL read, and reads some extensions (basicConstraints, keyUsage) only here; a
    // malformed one must not end the check
    result = { ok: false as const, message: `a certificate or one of its extensions cannot be read (${messageOf(e)})` }
  }
  if (!result.ok) {
    findings.error(file.path, file.node.offset, `certificate ${describeCert(file.leaf)} does not verify against the CA bundle ${ca.path} (${ca.shown}): ${result.message}`)
  }
}

/** An extendedKeyUsage extension, when present, must allow `purpose`. */
function checkUsage(file: CertFile, purpose: 'clientAuth' | 'serverAuth', role: string, findings: FindingList): void {
  const usages = file.leaf.extKeyUsages
  if (usages.length === 0 || usages.includes(purpose)) return
  findings.error(file.path, file.node.offset, `certificate ${describeCert(file.leaf)} is used as ${role} but its extended key usage (${usages.join(', ')}) lacks ${purpose}`)
}

/** Loads and checks one identity map (`identity`, or a web server's `identity`). */
async function checkIdentity(path: string, identity: MapNode, options: FileCheckOptions, findings: FindingList): Promise<LoadedIdentity> {
  const load = (key: string, node = identity): Promise<Source | undefined> => loadSource(`${path}.${key}`, childOf(node, key), options, findings)
  // the files of one identity share certificates (the intermediate of cert and server_cert, the CA bundle's)
  const seen = new Map<string, ParsedCertificate>()
  const parseOnce: ParseOnce = (der) => {
    const key = Buffer.from(der).toString('base64')
    let parsed = seen.get(key)
    if (!parsed) seen.set(key, (parsed = readCertificateDer(der)))
    return parsed
  }
  const parse = (s: Source | undefined): CertFile | undefined => (s ? parseCertFile(s, options, findings) : undefined)
  const cert = parse(await load('cert'))
  const serverCert = parse(await load('server_cert'))
  const key = await load('key')
  const serverKey = await load('server_key')
  const ca = parse(await load('ca'))

  const alternates: { cert?: CertFile; key?: Source }[] = []
  for (const [i, item] of itemsOf(childOf(identity, 'alt_server_certs')).entries()) {
    const alt = asMap(item)
    if (!alt) continue
    const at = (key: string): Promise<Source | undefined> => loadSource(`${path}.alt_server_certs[${i}].${key}`, childOf(alt, key), options, findings)
    alternates.push({ cert: parse(await at('server_cert')), key: await at('server_key') })
  }

  // The router signs with `key` for cert, and with server_key (or else key) for server_cert.
  if (key) checkKey(key, [cert, serverKey ? undefined : serverCert].filter((c): c is CertFile => c !== undefined), findings)
  if (serverKey) checkKey(serverKey, serverCert ? [serverCert] : [], findings)
  for (const alt of alternates) if (alt.key) checkKey(alt.key, alt.cert ? [alt.cert] : [], findings)

  // Without a server_cert field the router serves with cert; a server_cert that failed to load was reported.
  const defaultServer = childOf(identity, 'server_cert') === undefined ? cert : serverCert
  const serverCerts = [defaultServer, ...alternates.map((a) => a.cert)].filter((c): c is CertFile => c !== undefined)
  if (ca) {
    for (const file of new Set([cert, ...serverCerts])) if (file) await checkChain(file, ca, options, findings, parseOnce)
  }
  if (cert) checkUsage(cert, 'clientAuth', 'the client certificate', findings)
  for (const file of serverCerts) checkUsage(file, 'serverAuth', 'a server certificate', findings)
  return { path, cert, serverCerts, ca }
}

/** Whether `host` is covered by a SAN of `view`, as Go's x509 VerifyHostname decides (IPs only by IP SANs). */
export function hostCoveredBy(host: string, view: Pick<CertificateView, 'dnsNames' | 'ipAddresses'>): boolean {
  const ip = canonicalIp(host)
  if (ip !== null) return view.ipAddresses.includes(ip)
  const name = host.toLowerCase().replace(/\.$/, '')
  return view.dnsNames.some((san) => {
    const pattern = san.toLowerCase().replace(/\.$/, '')
    if (!pattern.startsWith('*.')) return pattern === name
    const dot = name.indexOf('.')
    return dot > 0 && name.slice(dot) === pattern.slice(1)
  })
}

function describeSans(certs: CertFile[]): string {
  const dns = [...new Set(certs.flatMap((c) => c.leaf.dnsNames))]
  const ips = [...new Set(certs.flatMap((c) => c.leaf.ipAddresses))]
  if (dns.length === 0 && ips.length === 0) return 'the server certificate has no DNS or IP SANs'
  return `SANs present: ${[dns.length ? `DNS ${dns.join(', ')}` : '', ips.length ? `IP ${ips.join(', ')}` : ''].filter(Boolean).join('; ')}`
}

interface Advertised {
  path: string
  node: ConfigNode
  host: string
  /** Web bind points only warn: the router lets a health-check binding run with a mismatch. */
  severity: 'error' | 'warning'
}

/** The host part of `host:port` (`[ipv6]:port` unbracketed), or undefined when it does not split. */
function hostOf(hostPort: string): string | undefined {
  const split = splitHostPort(hostPort)
  return 'error' in split || split.host === '' ? undefined : split.host
}

/** Advertise hosts the router checks against the router identity's server certificates. */
function routerAdvertised(root: MapNode): Advertised[] {
  const out: Advertised[] = []
  for (const [i, item] of itemsOf(childOf(root, 'listeners')).entries()) {
    const node = childOf(childOf(item, 'options'), 'advertise')
    const text = stringOf(node)
    const host = text === undefined ? undefined : hostOf(text.replace(/^tls:/, ''))
    if (node && host) out.push({ path: `listeners[${i}].options.advertise`, node, host, severity: 'error' })
  }
  for (const [i, item] of itemsOf(childOf(childOf(root, 'link'), 'listeners')).entries()) {
    const node = childOf(item, 'advertise')
    const m = /^d?tls:(.*)$/.exec(stringOf(node) ?? '')
    const host = m ? hostOf(m[1]) : undefined
    if (node && host) out.push({ path: `link.listeners[${i}].advertise`, node, host, severity: 'error' })
  }
  return out
}

/** The bind point addresses of one web server. */
function webAdvertised(server: ConfigNode, i: number): Advertised[] {
  const out: Advertised[] = []
  for (const [j, point] of itemsOf(childOf(server, 'bindPoints')).entries()) {
    const node = childOf(point, 'address')
    const text = stringOf(node)
    const host = text === undefined ? undefined : hostOf(text)
    if (node && host) out.push({ path: `web[${i}].bindPoints[${j}].address`, node, host, severity: 'warning' })
  }
  return out
}

function checkAdvertised(addresses: Advertised[], identity: LoadedIdentity, findings: FindingList): void {
  if (identity.serverCerts.length === 0) return
  for (const a of addresses) {
    if (identity.serverCerts.some((c) => hostCoveredBy(a.host, c.leaf))) continue
    const consequence = a.severity === 'error' ? 'the router refuses to start' : 'the router starts but TLS clients will reject this bind point'
    findings.add(a.severity, a.path, a.node.offset, `${a.host} is not covered by the server certificate of ${identity.path}; ${describeSans(identity.serverCerts)} (${consequence})`)
  }
}

/** Compares csr.sans (dns and ip) with the SANs of the default server certificate. */
function checkCsrSans(root: MapNode, identity: LoadedIdentity, findings: FindingList): void {
  const server = identity.serverCerts[0]
  const rootCsr = childOf(root, 'csr')
  const [csrPath, csr] = rootCsr ? ['csr', rootCsr] : ['edge.csr', childOf(childOf(root, 'edge'), 'csr')]
  const sans = asMap(childOf(csr, 'sans'))
  if (!server || !sans) return
  const wanted = [
    ...stringsOf(childOf(sans, 'dns')).map((d) => `DNS ${d.toLowerCase()}`),
    ...stringsOf(childOf(sans, 'ip')).map((ip) => `IP ${canonicalIp(ip) ?? ip}`),
  ]
  const present = [...server.leaf.dnsNames.map((d) => `DNS ${d.toLowerCase()}`), ...server.leaf.ipAddresses.map((ip) => `IP ${ip}`)]
  const onlyCsr = [...new Set(wanted.filter((s) => !present.includes(s)))]
  const onlyCert = [...new Set(present.filter((s) => !wanted.includes(s)))]
  if (onlyCsr.length === 0 && onlyCert.length === 0) return
  const parts = [onlyCsr.length ? `only in csr: ${onlyCsr.join(', ')}` : '', onlyCert.length ? `only in the certificate: ${onlyCert.join(', ')}` : '']
  findings.warning(`${csrPath}.sans`, sans.offset, `differs from the SANs of the server certificate (${server.shown}), so the next enrollment would change them; ${parts.filter(Boolean).join('; ')}`)
}

/** Runs every file check of a configuration tree (after environment substitution). */
export async function checkRouterConfigFiles(root: MapNode, options: FileCheckOptions, findings: FindingList): Promise<void> {
  const identityNode = asMap(childOf(root, 'identity'))
  const identity = identityNode ? await checkIdentity('identity', identityNode, options, findings) : undefined
  if (identity) {
    checkAdvertised(routerAdvertised(root), identity, findings)
    checkCsrSans(root, identity, findings)
  }
  for (const [i, server] of itemsOf(childOf(root, 'web')).entries()) {
    const own = asMap(childOf(server, 'identity'))
    const serverIdentity = own ? await checkIdentity(`web[${i}].identity`, own, options, findings) : identity
    if (serverIdentity) checkAdvertised(webAdvertised(server, i), serverIdentity, findings)
  }
}
