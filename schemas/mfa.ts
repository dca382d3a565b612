/**
 * MFA (TOTP) wire shapes of the current identity.
 * @see edge-api client.yml mfaCode, detailMfa, detailMfaRecoveryCodes
 */
import { Type } from '@sinclair/typebox'
import { BaseEntity } from './common.ts'

/** `{code}`: a TOTP or recovery code (the spec's mfaCode; at most 100 characters, far above any code). */
export const MfaCode = Type.Object({ code: Type.String({ maxLength: 100 }) })

/**
 * The same body where the code is optional: DELETE `/current-identity/mfa` (none needed while Started; also taken
 * from the header `mfa-validation-code`) and GET `/current-identity/mfa/recovery-codes` (header or body).
 */
export const OptionalMfaCode = Type.Object({ code: Type.Optional(Type.String({ maxLength: 100 })) })

export const DetailMfa = Type.Object({
  ...BaseEntity,
  isVerified: Type.Boolean(),
  /** Only while the enrollment is Started. */
  provisioningUrl: Type.Optional(Type.String()),
  /** Only while the enrollment is Started. */
  recoveryCodes: Type.Optional(Type.Array(Type.String())),
})

export const DetailMfaRecoveryCodes = Type.Object({
  ...BaseEntity,
  recoveryCodes: Type.Array(Type.String()),
})

/** What regenerating recovery codes answers: the new codes (the seed; the real controller answers an empty object). */
export const NewMfaRecoveryCodes = Type.Object({ recoveryCodes: Type.Array(Type.String()) })

/** @see edge-api client.yml totpToken */
export const TotpTokenDetail = Type.Object({ token: Type.String(), issuedAt: Type.String({ format: 'date-time' }) })
