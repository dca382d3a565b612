/**
 * CA auto-enrollment (`ca`): a client that holds a certificate of a verified third-party CA with
 * `isAutoCaEnrollmentEnabled` enrolls without any prior record (`POST /enroll/ca`, or the generic `?method=ca` whose
 * optional JSON body `name` is the requested name); the controller creates its identity on first contact.
 * - no verified, auth-enabled CA allows auto-enrollment: 400 ENROLLMENT_NO_VALID_CAS (an auth-disabled CA's
 *   certificates could not log in; the real controller does not check that flag here)
 * - the presented certificate (leaf first, intermediates in any order) must chain to one of them (the first in id
 *   order that verifies), be valid now and allow client authentication, else (or when none is presented) 400
 *   CERT_FAILED_VALIDATION
 * - the identity: type Default, not admin, the CA's `identityRoles`, named by the CA's `identityNameFormat`
 *   (ca-claims.ts; `[requestedName]` is the body's `name`, else the new identity's id) plus the real controller's
 *   collision counter, decided in the identity actor's mailbox
 * - a CA with an `externalIdClaim`: the claim must find a value (else 400 MISSING_CERT_CLAIM), the identity gets it as
 *   `externalId` and no authenticator (it logs in by that claim); another identity holding it: 400
 *   COULD_NOT_VALIDATE (field externalId)
 * - otherwise a cert authenticator of the certificate (not issued by the network, with the CA's id); a certificate that
 *   already belongs to an authenticator: 409 CERT_IN_USE with data {fingerprint}
 * - ONE identity-actor message (`identity.enrollByCa`) creates the identity and its authenticator in one transaction
 * - answer `{}` (no controllers, as the real controller)
 * @see controller-behaviour.md §6 "CA auto-enrollment", "identityNameFormat"; controller/model/enrollment_mod_ca.go
 */
import { ApiError } from '../../errors/api-error.ts'
import { newShortId } from '../../lib/ids.ts'
import type { Clock } from '../../lib/clock.ts'
import { externalIdOf, formatIdentityName } from '../../domain/ca/ca-claims.ts'
import type { ThirdPartyCaReads } from '../../domain/ca/ca-reads.ts'
import { isAutoCaEnrollable } from '../../domain/ca/ca-types.ts'
import { decideCertUnused } from '../../domain/identity/identity-decide.ts'
import type { IdentityActor } from '../../actors/identity/identity-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import type { AuthPeer } from '../authenticate/auth-method.ts'
import { caCertificateOf } from './enroll-ca-cert.ts'
import type { EnrollInput, EnrollmentMethod, EnrollResult } from './enroll-method.ts'

export interface CaAutoEnrollDeps {
  identities: IdentityActor
  cas: () => Pick<ThirdPartyCaReads, 'verifiedCas'>
  clock: Clock
  log: (line: string) => void
}

/** The requested name of a generic JSON body (`name`), if it is a non-empty string. */
function requestedNameOf(body: unknown): string | undefined {
  const name = body !== null && typeof body === 'object' ? (body as { name?: unknown }).name : undefined
  return typeof name === 'string' && name !== '' ? name : undefined
}

export function createCaAutoEnrollMethod(deps: CaAutoEnrollDeps) {
  return {
    method: 'ca',
    async redeem(input: EnrollInput, peer: AuthPeer, change: ChangeContext): Promise<EnrollResult> {
      const candidates = deps.cas().verifiedCas().filter(isAutoCaEnrollable)
      if (candidates.length === 0) throw new ApiError('ENROLLMENT_NO_VALID_CAS')
      const presented = await caCertificateOf(peer, candidates, deps.clock.now())
      if (!presented.ok) {
        deps.log(`CA auto-enrollment from ${peer.remoteAddress || 'unknown'} refused: ${presented.reason}`)
        throw new ApiError('CERT_FAILED_VALIDATION')
      }
      const { ca, certPem, view } = presented.cert
      let externalId: string | null = null
      if (ca.externalIdClaim) {
        externalId = externalIdOf(ca.externalIdClaim, view)
        if (externalId === null) throw new ApiError('MISSING_CERT_CLAIM')
      } else {
        decideCertUnused(deps.identities.snapshot(), view.fingerprintSha1)
      }
      const id = newShortId()
      const name = formatIdentityName(ca.identityNameFormat, {
        ca,
        commonName: view.subjectCn,
        requestedName: requestedNameOf(input.body) ?? id,
        identityId: id,
      })
      await deps.identities.ask({
        type: 'identity.enrollByCa',
        id,
        name,
        roleAttributes: ca.identityRoles,
        externalId,
        cert: externalId === null ? { certPem, fingerprint: view.fingerprintSha1, caId: ca.id } : null,
        change,
      })
      return {}
    },
  } as const satisfies EnrollmentMethod
}
