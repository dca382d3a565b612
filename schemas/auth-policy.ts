/**
 * Authentication policy wire shapes: create, update (put), patch and detail; the identity disable body.
 * @see edge-api management.yml definitions authPolicyCreate, authPolicyUpdate, authPolicyPatch, authPolicyDetail,
 *   disableParams
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { BaseEntity, Tags } from './common.ts'

const Name = Type.String({ minLength: 1, maxLength: 255 })
const SignerId = Type.String({ minLength: 1, maxLength: 255 })
const Signers = Type.Array(SignerId, { maxItems: 1000 })
/** The signer a second factor requires: "" is none, as null is (the CLI's `--secondary-req-ext-jwt-signer ""`). */
const RequiredSigner = Type.String({ maxLength: 255 })
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const opt = Type.Optional
/** The real controller's Go int bounds, kept to 32 bits so a lockout window always ends at a representable date. */
const Int32 = () => Type.Integer({ minimum: -2147483648, maximum: 2147483647 })

const Cert = Type.Object({ allowed: Type.Boolean(), allowExpiredCerts: Type.Boolean() })
const ExtJwt = Type.Object({ allowed: Type.Boolean(), allowedSigners: nullable(Signers) })
const Updb = Type.Object({
  allowed: Type.Boolean(),
  minPasswordLength: Int32(),
  requireSpecialChar: Type.Boolean(),
  requireNumberChar: Type.Boolean(),
  requireMixedCase: Type.Boolean(),
  maxAttempts: Int32(),
  lockoutDurationMinutes: Int32(),
})
const Primary = Type.Object({ cert: Cert, extJwt: ExtJwt, updb: Updb })
const Secondary = Type.Object({ requireTotp: Type.Boolean(), requireExtJwtSigner: opt(nullable(RequiredSigner)) })

export const AuthPolicyCreate = Type.Object({ name: Name, primary: Primary, secondary: Secondary, tags: opt(Tags) })

/** PUT: the same members as create. */
export const AuthPolicyUpdate = AuthPolicyCreate

/** PATCH: any subset at every level; a null leaves the member as it is. */
export const AuthPolicyPatch = Type.Object({
  name: opt(nullable(Name)),
  primary: opt(
    Type.Object({
      cert: opt(nullable(Type.Object({ allowed: opt(nullable(Type.Boolean())), allowExpiredCerts: opt(nullable(Type.Boolean())) }))),
      extJwt: opt(nullable(Type.Object({ allowed: opt(nullable(Type.Boolean())), allowedSigners: opt(nullable(Signers)) }))),
      updb: opt(
        nullable(
          Type.Object({
            allowed: opt(nullable(Type.Boolean())),
            minPasswordLength: opt(nullable(Int32())),
            requireSpecialChar: opt(nullable(Type.Boolean())),
            requireNumberChar: opt(nullable(Type.Boolean())),
            requireMixedCase: opt(nullable(Type.Boolean())),
            maxAttempts: opt(nullable(Int32())),
            lockoutDurationMinutes: opt(nullable(Int32())),
          }),
        ),
      ),
    }),
  ),
  secondary: opt(nullable(Type.Object({ requireTotp: opt(nullable(Type.Boolean())), requireExtJwtSigner: opt(nullable(RequiredSigner)) }))),
  tags: opt(Tags),
})

export const AuthPolicyDetail = Type.Object({
  ...BaseEntity,
  name: Type.String(),
  primary: Type.Object({
    cert: Cert,
    extJwt: Type.Object({ allowed: Type.Boolean(), allowedSigners: Type.Array(Type.String()) }),
    updb: Updb,
  }),
  secondary: Type.Object({ requireTotp: Type.Boolean(), requireExtJwtSigner: nullable(Type.String()) }),
})

/** `POST /identities/{id}/disable`: minutes from now, 0 for until enabled. */
export const DisableParams = Type.Object({ durationMinutes: Type.Integer({ minimum: 0, maximum: 2147483647 }) })
