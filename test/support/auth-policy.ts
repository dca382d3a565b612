// Auth policies and password users for API tests: a full policy body built from the default rules, an identity with
// a updb authenticator under a chosen policy, and its password login.
import type { ApiResponse, TestServer } from './harness.ts'

/** `POST /authenticate?method=password` on the Client API, without a session. */
export function passwordLogin(srv: TestServer, username: string, password: string): Promise<ApiResponse> {
  return srv.raw.post('/edge/client/v1/authenticate?method=password', { username, password })
}

/** The real controller's default policy values as the wire shows them (migration_v25.go). */
export const DEFAULT_POLICY_WIRE = {
  primary: {
    cert: { allowed: true, allowExpiredCerts: true },
    extJwt: { allowed: true, allowedSigners: [] as string[] },
    updb: {
      allowed: true,
      minPasswordLength: 5,
      requireSpecialChar: false,
      requireNumberChar: false,
      requireMixedCase: false,
      maxAttempts: 0,
      lockoutDurationMinutes: 0,
    },
  },
  secondary: { requireTotp: false, requireExtJwtSigner: null as string | null },
}

/** A full create/put body: the default rules with `updb` changes and any other top-level members replaced. */
export function authPolicyBody(name: string, updb: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) {
  return {
    name,
    primary: { ...DEFAULT_POLICY_WIRE.primary, updb: { ...DEFAULT_POLICY_WIRE.primary.updb, ...updb } },
    secondary: { requireTotp: false },
    ...rest,
  }
}

/** An identity named `name` (also its username) with a updb authenticator, under `authPolicyId` when given. */
export async function createPasswordUser(srv: TestServer, name: string, password: string, authPolicyId?: string): Promise<{ id: string; authenticatorId: string }> {
  const id = await srv.create('/identities', { name, type: 'User', isAdmin: false, ...(authPolicyId ? { authPolicyId } : {}) })
  const authenticatorId = await srv.create('/authenticators', { identityId: id, method: 'updb', username: name, password })
  return { id, authenticatorId }
}
