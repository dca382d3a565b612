/**
 * Whether a router's hello opens a control channel, decided before anything is answered (a refusal is a closed
 * connection without a word, as the real listener does). Rules, in the real controller's order
 * (controller/handler_ctrl/connect.go, accept.go):
 * - the router id is the hello's body (UTF-8), not the certificate's name;
 * - a client certificate must have been presented, and its leaf (the first one, whose key the handshake proved) must
 *   chain to the controller's CAs (root and intermediate) at the node's time; later certificates are only candidate
 *   intermediates; no extended key usage is required;
 * - the fingerprint is the lowercase hex SHA-1 of the leaf's DER;
 * - a second underlay of a grouped channel (IsGrouped without IsFirstGroupConnection) is refused: edgeplane leaves
 *   grouping off, so none is expected;
 * - churn guard: a router still connected here since less than `churnLimitMs` is refused; an older connection will
 *   be displaced;
 * - the router must exist, have a fingerprint (enrollment complete), that fingerprint must be the leaf's, and it
 *   must not be disabled;
 * - the hello must carry a version header of five `|`-separated fields.
 */
import type { Router } from '../domain/policy/policy-types.ts'
import { parseVersionInfo, type RouterVersionInfo } from '../domain/router/router-presence.ts'
import { isIssuedByTrustAnchor, verifyCertificateChain } from '../pki/pki-chain.ts'
import { readLeafFacts } from '../pki/pki-certs.ts'
import { ChannelHeader, type Frame } from './wire/control-frame.ts'
import { decodeString, readBool } from './wire/control-headers.ts'

/** The real controller's RouterConnectChurnLimit. */
export const CHURN_LIMIT_MS = 60_000

export interface AdmissionDeps {
  /** The router record of an id (edge and fabric routers alike). */
  router(id: string): Router | undefined
  /** When router `id`'s current connection here was admitted, if it has one. */
  connectedSince(id: string): number | undefined
  /** The controller's CA certificates (PEM): intermediate and root. */
  trustAnchors(): string[]
  now(): number
  churnLimitMs?: number
}

export type Admission =
  | { ok: true; router: Router; fingerprint: string; versionInfo: RouterVersionInfo }
  | { ok: false; routerId: string; reason: string }

export async function admitRouter(hello: Frame, certChainDer: readonly Uint8Array[], deps: AdmissionDeps): Promise<Admission> {
  const routerId = decodeString(hello.body)
  const refuse = (reason: string): Admission => ({ ok: false, routerId, reason })
  const [leaf, ...intermediates] = certChainDer
  if (!leaf) return refuse('no client certificate was presented')
  const trusted = deps.trustAnchors()
  const at = deps.now()
  if (!isIssuedByTrustAnchor({ leaf, intermediates, trusted, at })) {
    const chain = await verifyCertificateChain({ leaf, intermediates, trusted, at })
    if (!chain.ok) return refuse(`the client certificate is not trusted: ${chain.reason}: ${chain.message}`)
  }
  let fingerprint: string
  try {
    fingerprint = readLeafFacts(leaf).fingerprintSha1
  } catch {
    return refuse('the client certificate cannot be read')
  }
  const grouped = readBool(hello.headers, ChannelHeader.IsGrouped) === true
  if (grouped && readBool(hello.headers, ChannelHeader.IsFirstGroupConnection) !== true) {
    return refuse('an additional underlay of a grouped channel (grouping is not offered)')
  }
  const since = deps.connectedSince(routerId)
  if (since !== undefined && at - since < (deps.churnLimitMs ?? CHURN_LIMIT_MS)) {
    return refuse('the router is already connected and its connection is younger than the churn limit')
  }
  const router = deps.router(routerId)
  if (!router) return refuse('unknown or unenrolled router')
  if (router.fingerprint === null) return refuse('router enrollment incomplete')
  if (router.fingerprint !== fingerprint) return refuse(`incorrect fingerprint (presented ${fingerprint})`)
  if (router.disabled) return refuse('router disabled')
  const version = hello.headers.get(ChannelHeader.HelloVersion)
  if (version === undefined) return refuse('no version header in the hello')
  const versionInfo = parseVersionInfo(decodeString(version))
  if (!versionInfo) return refuse('the version header is not five |-separated fields')
  return { ok: true, router, fingerprint, versionInfo }
}
