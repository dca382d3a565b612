/**
 * What edge routers are told of an API session (control/sessions/): which sessions they hold, and the certificate
 * fingerprints an SDK of that session may connect with.
 * - a session is told once it is fully authenticated: one that owes its TOTP code is told when it answers it (the
 *   real controller pushes on its FULLY_AUTHENTICATED event, controller/db/api_session_store.go)
 * - `certFingerprints` (SHA-1 hex of a certificate's DER): those of the identity's cert authenticators, then those of
 *   the session's own certificates valid at `now` (controller/model/api_session_manager.go
 *   VisitFingerprintsForApiSession); each once, in that order
 * Only sessions of a zt-session sign-in are stored, hence told; an OIDC sign-in's access token is checked by the
 * router itself.
 */
import type { Authenticator } from '../identity/identity-types.ts'
import type { ApiSession, ApiSessionCertificate } from './session-types.ts'

/** Whether routers are told of the session: fully authenticated (no TOTP code owed). */
export function isRouterVisible(s: Pick<ApiSession, 'isMfaRequired' | 'isMfaComplete'>): boolean {
  return !s.isMfaRequired || s.isMfaComplete
}

/** The fingerprints an SDK of the session may present to a router (see the header). */
export function certFingerprintsOf(
  authenticators: Iterable<Pick<Authenticator, 'method' | 'fingerprint'>>,
  sessionCertificates: Iterable<Pick<ApiSessionCertificate, 'fingerprint' | 'validFrom' | 'validTo'>>,
  now: number,
): string[] {
  const out = new Set<string>()
  for (const a of authenticators) if (a.method === 'cert' && a.fingerprint) out.add(a.fingerprint.toLowerCase())
  for (const c of sessionCertificates) if (c.validFrom <= now && now < c.validTo) out.add(c.fingerprint.toLowerCase())
  return [...out]
}
