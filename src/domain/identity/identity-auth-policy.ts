/**
 * Authentication policies: which primary methods an identity may use and which second factors it owes. Only the
 * built-in `default` policy exists until the auth-policy resource lands; identities name it by `authPolicyId`.
 * @see edge-api management.yml authPolicyDetail; controller-behaviour.md §4 "Authentication policies"
 */
import { DEFAULT_AUTH_POLICY } from './identity-types.ts'

/** The rules of one authentication policy, as the real controller stores them. */
export interface AuthPolicyRules {
  readonly id: string
  readonly primary: {
    readonly cert: { readonly allowed: boolean; readonly allowExpiredCerts: boolean }
    readonly updb: { readonly allowed: boolean; readonly maxAttempts: number; readonly lockoutDurationMinutes: number }
    readonly extJwt: { readonly allowed: boolean; readonly allowedSigners: readonly string[] | null }
  }
  readonly secondary: { readonly requireTotp: boolean; readonly requireExtJwtSigner: string | null }
}

/** The real controller's `default` policy: every primary method allowed, no second factor required. */
export const DEFAULT_AUTH_POLICY_RULES: AuthPolicyRules = {
  id: DEFAULT_AUTH_POLICY.id,
  primary: {
    cert: { allowed: true, allowExpiredCerts: true },
    updb: { allowed: true, maxAttempts: 0, lockoutDurationMinutes: 0 },
    extJwt: { allowed: true, allowedSigners: null },
  },
  secondary: { requireTotp: false, requireExtJwtSigner: null },
}
