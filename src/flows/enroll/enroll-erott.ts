/**
 * Router enrollment (`erott`, edge and fabric routers alike): every new router gets a one-time token and its JWT
 * (em = "erott", sub = router id; enroll-jwt.ts). The router redeems it once with two CSRs and receives a client
 * certificate (for the control channel) and a server certificate (for its listeners); later it extends them with its
 * current client certificate; an admin can send it back to enrollment (re-enroll).
 * - redeem: `POST /enroll/erott {token, clientCsr, serverCsr}` or `POST /enroll?method=erott&token=` with
 *   `{certCsr, serverCertCsr}`; a missing, unknown or used token: 400 INVALID_ENROLLMENT_TOKEN; an expired one: 400
 *   ENROLLMENT_EXPIRED; both checked before the CSRs are read, and again in the policy-graph actor
 * - the CSRs: missing, garbage, of an unsupported key type, with a bad signature or asking for CA rights: 400
 *   COULD_NOT_PROCESS_CSR whose cause says which CSR and why; a server CSR naming no DNS name or IP address: the same;
 *   a client CSR whose CN is not the router id: 400 EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID
 * - the certificates, both from the CA actor and signed by the controller's intermediate: client CN = router id, EKU
 *   clientAuth, no SANs (the client CSR's names are not copied); server CN = router id, EKU serverAuth, the DNS names
 *   and IP addresses the server CSR asks for (a router names its own listeners)
 * - answer `{ca: <the controller's CA bundle>, cert: <client chain>, serverCert: <server chain>}`
 * - extend (`POST /enroll/extend/router {certCsr, serverCertCsr}`): the TLS client certificate must be the router's
 *   current one (its stored fingerprint) and chain to the controller's CAs with clientAuth, else 401 UNAUTHORIZED
 *   (the reason in the log); answer `{cert, serverCert}`; the stored fingerprint moves to the new client certificate
 *   at once, so the previous one no longer extends (nor will it open a control channel)
 * - re-enroll: the fingerprint removed, not verified, a new enrollment replacing any outstanding one
 *
 * Failure story (CA, then the policy graph): the certificates are issued first, then ONE policy-graph message
 * (`router.enroll`, `router.extend`) re-checks the token or the current fingerprint and writes the router record in
 * one durable transaction. Two racing redeems (or extends) may both get certificates issued; the graph's mailbox lets
 * exactly one write, and the other is refused (INVALID_ENROLLMENT_TOKEN, UNAUTHORIZED). Certificates issued for a
 * request that then fails belong to no router: their fingerprint is stored nowhere, so they enroll and extend nothing.
 * @see controller-behaviour.md §6 "Router enrollment"; controller/model/enrollment_mod_erott.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideRouterRedeemable } from '../../domain/enrollment/enrollment-decide.ts'
import { decideSubject } from '../../domain/ca/ca-decide.ts'
import { parseCsrPem, type ParsedCsr } from '../../pki/pki-csr.ts'
import { readCertificateDer, toCertificateView, type CertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'
import type { NewRouterEnrollment } from '../../actors/policy-graph/policy-graph-messages.ts'
import type { PolicyGraphActor } from '../../actors/policy-graph/policy-graph-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { issueEnrollmentJwt, tokenOf, type EnrollmentJwtDeps } from './enroll-jwt.ts'
import { IDENTITY_CERT_TTL_MS } from './enroll-ott.ts'
import type { EnrollInput, EnrollmentMethod, EnrollResult } from './enroll-method.ts'

/** How long a router's certificates are valid: as long as an identity's. */
export const ROUTER_CERT_TTL_MS = IDENTITY_CERT_TTL_MS

export interface ErottEnrollDeps extends EnrollmentJwtDeps {
  graph: PolicyGraphActor
  /** Where the reason of a refused extension goes (never to the client). */
  log: (line: string) => void
}

/** The two CSRs of a router request, by the first member name given (erott form, then the generic/extend form). */
interface RouterCsrs {
  client: string
  server: string
}

function csrText(body: unknown, names: readonly string[]): string {
  if (body === null || typeof body !== 'object') {
    throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', `router enrollment takes a JSON body with ${names.join(' or ')}`)
  }
  for (const n of names) {
    const v = (body as Record<string, unknown>)[n]
    if (typeof v === 'string') return v
  }
  throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', `no ${names.join(' or ')} given`)
}

function routerCsrsOf(body: unknown): RouterCsrs {
  return { client: csrText(body, ['clientCsr', 'certCsr']), server: csrText(body, ['serverCsr', 'serverCertCsr']) }
}

/** Parses a CSR, naming which of the two failed in the cause. */
async function parseNamed(pem: string, which: 'client' | 'server'): Promise<ParsedCsr> {
  try {
    const csr = await parseCsrPem(pem)
    if (csr.requestsCa) throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'it asks for CA rights (basicConstraints cA or keyCertSign); a router certificate is never a CA')
    return csr
  } catch (e) {
    if (e instanceof ApiError && e.code === 'COULD_NOT_PROCESS_CSR' && e.apiCause?.kind === 'api') {
      throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', `${which} CSR: ${e.apiCause.message}`)
    }
    throw e
  }
}

export function createErottEnrollMethod(deps: ErottEnrollDeps) {
  /** Checks both CSRs, then has the CA issue the router's client and server certificates. */
  async function issueRouterCertificates(routerId: string, csrs: RouterCsrs) {
    const client = await parseNamed(csrs.client, 'client')
    const server = await parseNamed(csrs.server, 'server')
    if (client.subjectCn !== routerId) {
      throw ApiError.withMessage('EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID', `the client CSR's common name is '${client.subjectCn}', expected the router id '${routerId}'`)
    }
    const sans = { dnsNames: server.dnsNames, ipAddresses: server.ipAddresses }
    try {
      decideSubject('server', routerId, sans)
    } catch (e) {
      if (e instanceof ApiError && e.apiCause?.kind === 'api') throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', `server CSR: ${e.apiCause.message}`)
      throw e
    }
    const clientCert = await deps.ca.ask({
      type: 'ca.issueCertificate',
      request: { purpose: 'client', csr: client, commonName: routerId, ttlMs: ROUTER_CERT_TTL_MS },
    })
    const serverCert = await deps.ca.ask({
      type: 'ca.issueCertificate',
      request: { purpose: 'server', csr: server, commonName: routerId, ...sans, ttlMs: ROUTER_CERT_TTL_MS },
    })
    return { clientCert, serverCert }
  }

  const refuseExtension = (peer: AuthPeer, reason: string): never => {
    deps.log(`router certificate extension from ${peer.remoteAddress || 'unknown'} refused: ${reason}`)
    throw ApiError.unauthorized()
  }

  /** The router whose current client certificate the peer presented, with that certificate's fingerprint. */
  async function presentingRouter(peer: AuthPeer): Promise<{ routerId: string; fingerprint: string }> {
    const [leafDer, ...intermediates] = peer.certChainDer
    if (!leafDer) return refuseExtension(peer, 'no client certificate was presented')
    let leaf: CertificateView
    try {
      leaf = toCertificateView(readCertificateDer(leafDer))
    } catch {
      return refuseExtension(peer, 'the client certificate could not be read')
    }
    const router = deps.graph.snapshot().routerOfFingerprint(leaf.fingerprintSha1)
    if (!router) return refuseExtension(peer, `no router has the client certificate ${leaf.fingerprintSha1}`)
    const pki = deps.ca.snapshot().pki
    const chain = await verifyCertificateChain({
      leaf: leafDer,
      intermediates,
      trusted: [pki.intermediate.certPem, pki.root.certPem],
      at: deps.clock.now(),
    })
    if (!chain.ok) return refuseExtension(peer, `certificate ${leaf.fingerprintSha1}: ${chain.reason}: ${chain.message}`)
    if (leaf.extKeyUsages.length > 0 && !leaf.extKeyUsages.includes('clientAuth')) {
      return refuseExtension(peer, `certificate ${leaf.fingerprintSha1} is not for client authentication`)
    }
    return { routerId: router.id, fingerprint: leaf.fingerprintSha1 }
  }

  /** A new enrollment for the router `target` (its id chosen by the caller, so the JWT can name it). */
  const newEnrollment = (target: { id: string; name: string }): Promise<NewRouterEnrollment> =>
    issueEnrollmentJwt(deps, { method: 'erott' }, { kind: 'router', ...target })

  const redeemer = {
    method: 'erott',
    async redeem(input: EnrollInput, _peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const token = tokenOf(input)
      const router = decideRouterRedeemable(deps.graph.snapshot().routerOfEnrollmentToken(token), token, deps.clock.now())
      const { clientCert, serverCert } = await issueRouterCertificates(router.id, routerCsrsOf(input.body))
      await deps.graph.ask({ type: 'router.enroll', token, fingerprint: clientCert.fingerprint, change })
      return { ca: deps.ca.snapshot().pki.caBundlePem, cert: clientCert.chainPem, serverCert: serverCert.chainPem }
    },
  } as const satisfies EnrollmentMethod

  return {
    ...redeemer,
    newEnrollment,

    /** `POST /enroll/extend/router`: new certificates for the router presenting its current client certificate. */
    async extend(body: unknown, peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const { routerId, fingerprint } = await presentingRouter(peer)
      const csrs = { client: csrText(body, ['certCsr']), server: csrText(body, ['serverCertCsr']) }
      const { clientCert, serverCert } = await issueRouterCertificates(routerId, csrs)
      await deps.graph.ask({ type: 'router.extend', id: routerId, previous: fingerprint, fingerprint: clientCert.fingerprint, change })
      return { cert: clientCert.chainPem, serverCert: serverCert.chainPem }
    },

    /** Sends router `id` back to enrollment (404 when there is none). */
    async reEnroll(id: string, change: ChangeContext): Promise<void> {
      const router = deps.graph.snapshot().routers.get(id)
      if (!router) throw ApiError.notFound()
      const enrollment = await newEnrollment({ id: router.id, name: router.name })
      await deps.graph.ask({ type: 'router.reEnroll', id: router.id, enrollment, change })
    },
  }
}

export type ErottEnrollMethod = ReturnType<typeof createErottEnrollMethod>
