/** Authentication policy records → wire details and filter rows. The only place that renames auth policy fields. */
import type { AuthPolicy } from '../../domain/identity/identity-auth-policy.ts'
import { DEFAULT_AUTH_POLICY } from '../../domain/identity/identity-types.ts'
import { BASE_SYMBOLS, toBaseEntity } from './common-mapper.ts'

/** The fields the filter language knows on auth policies (the real controller's store declares only its name). */
export const AUTH_POLICY_SYMBOLS = { ...BASE_SYMBOLS, name: 'string' } as const

/** The detail view; a policy that allows every signer (null) shows an empty `allowedSigners`, as the spec requires an array. */
export function toAuthPolicyDetail(p: AuthPolicy) {
  return {
    ...toBaseEntity('auth-policies', p),
    name: p.name,
    primary: {
      cert: { allowed: p.primary.cert.allowed, allowExpiredCerts: p.primary.cert.allowExpiredCerts },
      extJwt: { allowed: p.primary.extJwt.allowed, allowedSigners: [...(p.primary.extJwt.allowedSigners ?? [])] },
      updb: { ...p.primary.updb },
    },
    secondary: { requireTotp: p.secondary.requireTotp, requireExtJwtSigner: p.secondary.requireExtJwtSigner },
  }
}

/** The row the filter language sees for an auth policy (see AUTH_POLICY_SYMBOLS). */
export function toAuthPolicyRow(p: AuthPolicy): Record<string, unknown> {
  return { id: p.id, createdAt: p.createdAt, updatedAt: p.updatedAt, tags: p.tags ?? {}, isSystem: p.id === DEFAULT_AUTH_POLICY.id, name: p.name }
}
