/**
 * Certificate path validation: from a leaf, through untrusted intermediates given in any order, up to one of a set
 * of trusted certificates (roots or intermediates) at a given time. EC and RSA signers alike.
 * Checks signatures, validity windows, that every issuer is a CA allowed to sign certificates, and pathLen.
 * Does not check revocation, name constraints, policies or extended key usage.
 * @see RFC 5280 §6.1 (the subset above)
 */
import { ApiError } from '../errors/api-error.ts'
import {
  readCertificateDer,
  readCertificates,
  toCertificatePem,
  toCertificateView,
  type CertificateView,
  type ParsedCertificate,
} from './pki-certs.ts'
import { X509Certificate } from 'node:crypto'
import { BoundedMap } from '../lib/bounded-map.ts'
import { authorityKeyIdOf, canSignCertificates, isCaCertificate, pathLenOf, subjectKeyIdOf } from './pki-extensions.ts'

/** Why a chain did not verify; the first failure met on the most promising path. */
export type ChainFailureReason =
  | 'MALFORMED'
  | 'UNKNOWN_ISSUER'
  | 'BAD_SIGNATURE'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'ISSUER_NOT_CA'
  | 'PATH_LENGTH_EXCEEDED'

/** The outcome of {@link verifyCertificateChain}: the chain from leaf to trust anchor, or why there is none. */
export type ChainVerification =
  | { ok: true; chain: CertificateView[]; chainPem: string[] }
  | { ok: false; reason: ChainFailureReason; message: string }

/** A certificate as PEM text (a bundle is split into its certificates), DER bytes, or already parsed (not parsed again). */
export type CertificateInput = string | Uint8Array | ParsedCertificate

/** What to verify, against what, and when. */
export interface VerifyChainOptions {
  /** The leaf; when PEM with several certificates, the first is the leaf and the rest are intermediates. */
  leaf: CertificateInput
  /** Untrusted certificates that may complete the path, in any order. */
  intermediates?: CertificateInput[]
  /** Trust anchors: a path ends at the first one that signed the certificate below it. */
  trusted: CertificateInput[]
  /** The time of the check, epoch ms (from the caller's Clock). */
  at: number
  /** Accept certificates past their notAfter (a notBefore in the future still fails). */
  allowExpired?: boolean
}

const MAX_PATH = 8
/** How many parsed anchors (PEM texts) and parsed intermediates (DER) are kept, each. */
const MAX_PARSED_CERTIFICATES = 1_000

/**
 * Builds and verifies a path from `leaf` to a trusted certificate. Tries every candidate issuer (matched by name,
 * and by key identifier when both sides carry one), so renewed or cross-signed CAs with the same name still work.
 * Never throws for bad input: unreadable certificates give reason MALFORMED.
 */
export async function verifyCertificateChain(opts: VerifyChainOptions): Promise<ChainVerification> {
  let leaf: ParsedCertificate
  let intermediates: ParsedCertificate[]
  let trusted: ParsedCertificate[]
  try {
    const [first, ...rest] = toParsed(opts.leaf)
    leaf = first
    intermediates = [...rest, ...(opts.intermediates ?? []).flatMap(toParsed)]
    trusted = opts.trusted.flatMap(toParsedAnchor)
  } catch (e) {
    const message = e instanceof ApiError && e.apiCause?.kind === 'api' ? e.apiCause.message : (e as Error).message
    return { ok: false, reason: 'MALFORMED', message }
  }
  const state: SearchState = { at: opts.at, allowExpired: opts.allowExpired === true, trusted, intermediates, signatures: new Map() }

  const leafTime = checkTime(leaf, state)
  if (leafTime) return leafTime
  const result = await extend([leaf], state)
  if (Array.isArray(result)) {
    return { ok: true, chain: result.map(toCertificateView), chainPem: result.map(toCertificatePem) }
  }
  return result
}

/**
 * The fast path of {@link verifyCertificateChain} for a leaf given as DER: OpenSSL (node:crypto X509Certificate)
 * reads the leaf and checks, at each step up to a trust anchor, that the issuer issued the certificate below it
 * (names and key identifiers) and signed it; every issuer must be a CA allowed to sign, within its pathLen and valid at
 * `at`. Certificate login meets a leaf signed directly by an anchor; a router's files put an intermediate between.
 * True means exactly what an `ok` from verifyCertificateChain means. False decides nothing: run
 * verifyCertificateChain, which also says why. asn1js reads a certificate in about 5 ms on Bun, OpenSSL in 0.03 ms:
 * this is what keeps a login cheap, and leaves only the issuers (CAs, usually parsed once and kept) to asn1js.
 */
export function isIssuedByTrustAnchor(opts: Pick<VerifyChainOptions, 'leaf' | 'intermediates' | 'trusted' | 'at' | 'allowExpired'>): boolean {
  if (!(opts.leaf instanceof Uint8Array)) return false
  let leaf: X509Certificate
  let trusted: ParsedCertificate[]
  try {
    leaf = new X509Certificate(opts.leaf)
    trusted = opts.trusted.flatMap(toParsedAnchor)
  } catch {
    return false
  }
  if (opts.at < leaf.validFromDate.getTime()) return false
  if (opts.at > leaf.validToDate.getTime() && opts.allowExpired !== true) return false
  const state = { at: opts.at, allowExpired: opts.allowExpired === true, trusted }
  // an anchor that signed the leaf itself needs no intermediate read (a client often sends its issuer along)
  if (reachesAnchor(leaf, [], { ...state, intermediates: [] })) return true
  if (!opts.intermediates?.length) return false
  let intermediates: ParsedCertificate[]
  try {
    intermediates = opts.intermediates.flatMap(toParsedIntermediate)
  } catch {
    return false
  }
  return reachesAnchor(leaf, [], { ...state, intermediates })
}

/**
 * Intermediates given as DER, parsed once per DER: the same few CA certificates come with every login of the
 * clients they issued. Bounded like the anchors: ever new certificates push out the oldest.
 */
const parsedIntermediates = new BoundedMap<string, ParsedCertificate>(MAX_PARSED_CERTIFICATES)
function toParsedIntermediate(input: CertificateInput): ParsedCertificate[] {
  if (!(input instanceof Uint8Array)) return toParsed(input)
  const key = Buffer.from(input).toString('base64')
  let parsed = parsedIntermediates.get(key)
  if (!parsed) {
    parsed = readCertificateDer(input)
    parsedIntermediates.set(key, parsed)
  }
  return [parsed]
}

/** Whether an issuer chain from `child` (with the CA certificates `above` already between it and the leaf) ends at an anchor. */
function reachesAnchor(child: X509Certificate, above: ParsedCertificate[], state: Omit<SearchState, 'signatures'>): boolean {
  if (above.length >= MAX_PATH) return false
  const candidates = [...state.trusted.map((cert) => ({ cert, trusted: true })), ...state.intermediates.map((cert) => ({ cert, trusted: false }))]
  return candidates.some(({ cert, trusted }) => {
    if (above.includes(cert)) return false
    const issuer = opensslOf(cert)
    if (!child.checkIssued(issuer) || !mayIssue(cert) || checkTime(cert, state) !== null) return false
    const pathLen = pathLenOf(cert.cert)
    if (pathLen !== undefined && above.length > pathLen) return false
    try {
      if (!child.verify(issuer.publicKey)) return false
    } catch {
      return false
    }
    return trusted || reachesAnchor(issuer, [...above, cert], state)
  })
}

interface SearchState {
  at: number
  allowExpired: boolean
  trusted: ParsedCertificate[]
  intermediates: ParsedCertificate[]
  /** Signature results by child, then issuer, so backtracking never verifies twice. */
  signatures: Map<ParsedCertificate, Map<ParsedCertificate, boolean>>
}

type Failure = Extract<ChainVerification, { ok: false }>

/** Depth-first search upward from the last certificate of `path`; returns the full path or the deepest failure. */
async function extend(path: ParsedCertificate[], state: SearchState): Promise<ParsedCertificate[] | Failure> {
  const child = path[path.length - 1]
  const subject = describe(child)
  if (path.length > MAX_PATH) return fail('PATH_LENGTH_EXCEEDED', `no trusted issuer within ${MAX_PATH} certificates`)
  const candidates = [
    ...state.trusted.map((cert) => ({ cert, trusted: true })),
    ...state.intermediates.filter((c) => !path.includes(c)).map((cert) => ({ cert, trusted: false })),
  ].filter(({ cert }) => mayHaveIssued(cert, child))

  let failure: Failure = fail('UNKNOWN_ISSUER', `no known issuer for ${subject}`)
  let failureRank = 0
  const note = (f: Failure, rank: number): void => {
    if (rank > failureRank) {
      failure = f
      failureRank = rank
    }
  }
  for (const { cert: issuer, trusted } of candidates) {
    if (!signedBy(child, issuer, state)) {
      note(fail('BAD_SIGNATURE', `the signature of ${subject} does not verify with the key of ${describe(issuer)}`), 1)
      continue
    }
    if (!isCaCertificate(issuer.cert) || !canSignCertificates(issuer.cert)) {
      note(fail('ISSUER_NOT_CA', `${describe(issuer)} is not a CA allowed to sign certificates`), 2)
      continue
    }
    const pathLen = pathLenOf(issuer.cert)
    const below = path.length - 1
    if (pathLen !== undefined && below > pathLen) {
      note(fail('PATH_LENGTH_EXCEEDED', `${describe(issuer)} allows ${pathLen} intermediate CA(s) below it, found ${below}`), 2)
      continue
    }
    const timeFailure = checkTime(issuer, state)
    if (timeFailure) {
      note(timeFailure, 2)
      continue
    }
    if (trusted) return [...path, issuer]
    const deeper = await extend([...path, issuer], state)
    if (Array.isArray(deeper)) return deeper
    note(deeper, 3 + path.length)
  }
  return failure
}

/** Name chaining (RFC 5280 §6.1.3 (a)(4)) plus, when both are present, authority/subject key identifier agreement. */
function mayHaveIssued(issuer: ParsedCertificate, child: ParsedCertificate): boolean {
  if (!bytesEqual(nameBytes(issuer.cert.subject), nameBytes(child.cert.issuer))) return false
  const aki = authorityKeyIdOf(child.cert)
  const ski = subjectKeyIdOf(issuer.cert)
  return !aki || !ski || bytesEqual(aki, ski)
}

/**
 * Whether `issuer`'s key signed `child`: checked by OpenSSL (node:crypto X509Certificate, about 0.15 ms for P-256),
 * not by pkijs over WebCrypto, since certificate login runs it on every login.
 */
function signedBy(child: ParsedCertificate, issuer: ParsedCertificate, state: SearchState): boolean {
  let byIssuer = state.signatures.get(child)
  if (!byIssuer) state.signatures.set(child, (byIssuer = new Map()))
  let ok = byIssuer.get(issuer)
  if (ok === undefined) {
    try {
      ok = opensslOf(child).verify(opensslOf(issuer).publicKey)
    } catch {
      ok = false
    }
    byIssuer.set(issuer, ok)
  }
  return ok
}

/** OpenSSL's view of a parsed certificate, made once per certificate object (trust anchors are kept parsed). */
const openssl = new WeakMap<ParsedCertificate, X509Certificate>()
const issuers = new WeakMap<ParsedCertificate, boolean>()
/**
 * Whether a certificate may issue others (basicConstraints cA and, when present, keyUsage keyCertSign), decided once
 * per parsed certificate: pkijs parses an extension's value again on every read, which cost a certificate login more
 * than its signature check.
 */
function mayIssue(parsed: ParsedCertificate): boolean {
  let may = issuers.get(parsed)
  if (may === undefined) issuers.set(parsed, (may = isCaCertificate(parsed.cert) && canSignCertificates(parsed.cert)))
  return may
}

function opensslOf(parsed: ParsedCertificate): X509Certificate {
  let x = openssl.get(parsed)
  if (!x) openssl.set(parsed, (x = new X509Certificate(parsed.der)))
  return x
}

/**
 * Trust anchors parsed once per PEM text: certificate login passes the same few anchors on every login, and parsing
 * them (asn1js) cost more than the whole verification. Bounded: ever new anchors push out the oldest.
 */
const parsedAnchors = new BoundedMap<string, ParsedCertificate[]>(MAX_PARSED_CERTIFICATES)
function toParsedAnchor(input: CertificateInput): ParsedCertificate[] {
  if (typeof input !== 'string') return toParsed(input)
  let parsed = parsedAnchors.get(input)
  if (!parsed) {
    parsed = toParsed(input)
    parsedAnchors.set(input, parsed)
  }
  return parsed
}

function checkTime(parsed: ParsedCertificate, state: Pick<SearchState, 'at' | 'allowExpired'>): Failure | null {
  const notBefore = parsed.cert.notBefore.value.getTime()
  const notAfter = parsed.cert.notAfter.value.getTime()
  if (state.at < notBefore) return fail('NOT_YET_VALID', `${describe(parsed)} is not valid before ${new Date(notBefore).toISOString()}`)
  if (state.at > notAfter && !state.allowExpired) {
    return fail('EXPIRED', `${describe(parsed)} expired at ${new Date(notAfter).toISOString()}`)
  }
  return null
}

function fail(reason: ChainFailureReason, message: string): Failure {
  return { ok: false, reason, message }
}

function toParsed(input: CertificateInput): ParsedCertificate[] {
  if (typeof input === 'string') return readCertificates(input)
  return [input instanceof Uint8Array ? readCertificateDer(input) : input]
}

function describe(parsed: ParsedCertificate): string {
  const view = toCertificateView(parsed)
  return `'${view.subjectCn}' (serial ${view.serialHex})`
}

function nameBytes(name: ParsedCertificate['cert']['subject']): Uint8Array {
  return new Uint8Array(name.toSchema().toBER(false))
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}
