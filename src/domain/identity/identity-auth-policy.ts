/**
 * Authentication policies: which primary methods an identity may use, the password rules and lockout of its updb
 * authenticator, and which second factors it owes. Pure records and checks; the identity actor stores them.
 * - every identity names one policy by `authPolicyId`; the built-in `default` policy (the real controller's values)
 *   always exists and can never be deleted (the real controller lets it go once no identity names it)
 * - a policy an identity names can not be deleted: 409 CAN_NOT_DELETE_REFERENCED_ENTITY
 * - names are required and unique
 * - on persist, a negative `maxAttempts` or `lockoutDurationMinutes` becomes 0 and a `minPasswordLength` below 5
 *   becomes 5 (as the real controller); a `minPasswordLength` above 100, the longest password the API accepts, is
 *   400 COULD_NOT_VALIDATE (stricter: such a policy could never be satisfied)
 * - `allowedSigners` and `requireExtJwtSigner` must name existing external JWT signers: 400 COULD_NOT_VALIDATE naming
 *   the field
 * - password rules are enforced on every password set (the real controller stores but ignores them): each refusal is
 *   400 COULD_NOT_VALIDATE on field `password` naming the rule
 * - lockout: with `maxAttempts` > 0, the failure that reaches it disables the identity from now for
 *   `lockoutDurationMinutes` (indefinitely for 0) and starts the count again
 * @see edge-api management.yml authPolicyDetail; controller-behaviour.md §4 "Authentication policies"
 */
import { ApiError } from '../../errors/api-error.ts'
import { referencedEntity } from '../policy/graph-decide.ts'
import { DEFAULT_AUTH_POLICY, type Identity, type Tags } from './identity-types.ts'

/** The password rules and lockout of updb authentication. */
export interface UpdbRules {
  readonly allowed: boolean
  readonly maxAttempts: number
  readonly lockoutDurationMinutes: number
  readonly minPasswordLength: number
  readonly requireMixedCase: boolean
  readonly requireNumberChar: boolean
  readonly requireSpecialChar: boolean
}

/** The rules of one authentication policy, as the real controller stores them. */
export interface AuthPolicyRules {
  readonly id: string
  readonly primary: {
    readonly cert: { readonly allowed: boolean; readonly allowExpiredCerts: boolean }
    readonly updb: UpdbRules
    /** `allowedSigners` null or empty: every signer is allowed. */
    readonly extJwt: { readonly allowed: boolean; readonly allowedSigners: readonly string[] | null }
  }
  readonly secondary: { readonly requireTotp: boolean; readonly requireExtJwtSigner: string | null }
}

/** A stored authentication policy: its rules, name and tags. Replaced on every change, never mutated. */
export interface AuthPolicy extends AuthPolicyRules {
  readonly name: string
  readonly tags: Tags
  readonly createdAt: number
  readonly updatedAt: number
}

/** The real controller's `default` policy: every primary method allowed, no lockout, no second factor required. */
export const DEFAULT_AUTH_POLICY_RULES: AuthPolicyRules = {
  id: DEFAULT_AUTH_POLICY.id,
  primary: {
    cert: { allowed: true, allowExpiredCerts: true },
    updb: {
      allowed: true,
      maxAttempts: 0,
      lockoutDurationMinutes: 0,
      minPasswordLength: 5,
      requireMixedCase: false,
      requireNumberChar: false,
      requireSpecialChar: false,
    },
    extJwt: { allowed: true, allowedSigners: null },
  },
  secondary: { requireTotp: false, requireExtJwtSigner: null },
}

/** The stored `default` policy as the first start (or the migration of an older store) writes it. */
export function defaultAuthPolicy(now: number): AuthPolicy {
  return { ...DEFAULT_AUTH_POLICY_RULES, name: DEFAULT_AUTH_POLICY.name, tags: {}, createdAt: now, updatedAt: now }
}

/** The longest password the API accepts (edge-api `password`: 5 to 100 characters). */
export const MAX_PASSWORD_LENGTH = 100
const MIN_PASSWORD_LENGTH = 5

/** What a create, put or patch gives; absent members keep the base's value (the policy's own on patch). */
export interface AuthPolicyInput {
  name?: string
  primary?: {
    cert?: Partial<AuthPolicyRules['primary']['cert']>
    updb?: Partial<UpdbRules>
    extJwt?: { allowed?: boolean; allowedSigners?: readonly string[] | null }
  }
  secondary?: { requireTotp?: boolean; requireExtJwtSigner?: string | null }
  tags?: Tags
}

/** What the policy checks need to know about existing state. */
export interface AuthPolicyLookup {
  authPolicy(id: string): AuthPolicy | undefined
  /** Id of the policy holding a name. */
  authPolicyIdByName(name: string): string | undefined
  /** Whether an external JWT signer with this id exists. */
  knownSigner(id: string): boolean
}

/**
 * The policy a create (`prev` undefined), put (`replace`) or patch makes: the input over the base (the default
 * rules for create and put, the policy itself for patch), normalised and checked.
 */
export function decideAuthPolicy(
  lookup: AuthPolicyLookup,
  id: string,
  prev: AuthPolicy | undefined,
  input: AuthPolicyInput,
  replace: boolean,
  now: number,
): AuthPolicy {
  const base: AuthPolicyRules = prev && !replace ? prev : DEFAULT_AUTH_POLICY_RULES
  const name = input.name ?? prev?.name ?? ''
  if (name.trim() === '') throw ApiError.invalidField('name', 'name is required', name)
  const holder = lookup.authPolicyIdByName(name)
  if (holder !== undefined && holder !== id) {
    throw ApiError.invalidField('name', `duplicate value '${name}' in unique index on authPolicies store`, name)
  }
  const updb = { ...base.primary.updb, ...input.primary?.updb }
  if (updb.minPasswordLength > MAX_PASSWORD_LENGTH) {
    throw ApiError.invalidField(
      'primary.updb.minPasswordLength',
      `minPasswordLength may be at most ${MAX_PASSWORD_LENGTH}, the longest password accepted`,
      updb.minPasswordLength,
    )
  }
  const extJwt = { ...base.primary.extJwt, ...input.primary?.extJwt }
  const secondary = { ...base.secondary, ...input.secondary }
  const unknown = (extJwt.allowedSigners ?? []).filter((s) => !lookup.knownSigner(s))
  if (unknown.length > 0) {
    throw ApiError.invalidField('primary.extJwt.allowedSigners', 'no external JWT signer found with the given ids', unknown)
  }
  if (secondary.requireExtJwtSigner !== null && !lookup.knownSigner(secondary.requireExtJwtSigner)) {
    throw ApiError.invalidField(
      'secondary.requireExtJwtSigner',
      `no external JWT signer found with id '${secondary.requireExtJwtSigner}'`,
      secondary.requireExtJwtSigner,
    )
  }
  return {
    id,
    name,
    primary: {
      cert: { ...base.primary.cert, ...input.primary?.cert },
      updb: {
        ...updb,
        maxAttempts: Math.max(0, updb.maxAttempts),
        lockoutDurationMinutes: Math.max(0, updb.lockoutDurationMinutes),
        minPasswordLength: Math.max(MIN_PASSWORD_LENGTH, updb.minPasswordLength),
      },
      extJwt: { allowed: extJwt.allowed, allowedSigners: extJwt.allowedSigners === null ? null : [...extJwt.allowedSigners] },
    },
    secondary,
    tags: input.tags !== undefined ? input.tags : replace || !prev ? {} : prev.tags,
    createdAt: prev?.createdAt ?? now,
    updatedAt: now,
  }
}

/**
 * A policy that may be deleted: it exists, it is not the `default` one, and no identity names it and no external JWT
 * signer enrolls identities into it (`enrollAuthPolicyId`, the real controller's foreign key): 409
 * CAN_NOT_DELETE_REFERENCED_ENTITY listing them.
 */
export function decideDeleteAuthPolicy(policy: AuthPolicy | undefined, referencedBy: readonly string[], enrollingSigners: readonly string[] = []): AuthPolicy {
  if (!policy) throw ApiError.notFound()
  if (referencedBy.length > 0) throw referencedEntity('authPolicies', 'identities', 'id', referencedBy)
  if (enrollingSigners.length > 0) throw referencedEntity('authPolicies', 'externalJwtSigners', 'id', enrollingSigners)
  if (policy.id === DEFAULT_AUTH_POLICY.id) {
    throw ApiError.withMessage('ENTITY_CAN_NOT_BE_DELETED', `the default auth policy can not be deleted (id=${policy.id})`)
  }
  return policy
}

/** Rules of a password other than its length bounds: the test and how a refusal names it. */
const PASSWORD_RULES = [
  { flag: 'requireMixedCase', test: (p: string) => /\p{Ll}/u.test(p) && /\p{Lu}/u.test(p), reason: 'an upper case and a lower case letter' },
  { flag: 'requireNumberChar', test: (p: string) => /\p{Nd}/u.test(p), reason: 'a digit' },
  { flag: 'requireSpecialChar', test: (p: string) => /[^\p{L}\p{Nd}]/u.test(p), reason: 'a character that is neither a letter nor a digit' },
] as const

/** A password the policy's updb rules accept; else 400 COULD_NOT_VALIDATE on `password` naming the broken rule. */
export function decidePassword(rules: UpdbRules, password: string): string {
  const length = [...password].length
  if (length < rules.minPasswordLength) {
    throw ApiError.invalidField('password', `password must be at least ${rules.minPasswordLength} characters (auth policy minPasswordLength)`)
  }
  for (const rule of PASSWORD_RULES) {
    if (rules[rule.flag] && !rule.test(password)) {
      throw ApiError.invalidField('password', `password must contain ${rule.reason} (auth policy ${rule.flag})`)
    }
  }
  return password
}

/** What a failed authentication attempt does: the new count, and the disabled window when it reaches the limit. */
export interface FailedAttemptOutcome {
  readonly failures: number
  readonly disable: { readonly disabledAt: number; readonly disabledUntil: number | null } | null
}

/** Counts one more failure of an identity that had `failures`, under `rules` (no counting with maxAttempts 0). */
export function decideFailedAttempt(rules: UpdbRules, failures: number, now: number): FailedAttemptOutcome {
  if (rules.maxAttempts <= 0) return { failures: 0, disable: null }
  const count = failures + 1
  if (count < rules.maxAttempts) return { failures: count, disable: null }
  const until = rules.lockoutDurationMinutes > 0 ? now + rules.lockoutDurationMinutes * 60_000 : null
  return { failures: 0, disable: { disabledAt: now, disabledUntil: until } }
}

/** The identity disabled from `now` for `durationMinutes` (indefinitely for 0). */
export function disabledFor(identity: Identity, durationMinutes: number, now: number): Identity {
  return { ...identity, disabledAt: now, disabledUntil: durationMinutes > 0 ? now + durationMinutes * 60_000 : null, updatedAt: now }
}

/**
 * The ids of the policies that name external JWT signer `signerId` (in `allowedSigners` or as the required second
 * factor), in id order: what keeps a signer from being deleted.
 */
export function policiesNamingSigner(policies: Iterable<AuthPolicyRules>, signerId: string): string[] {
  const naming: string[] = []
  for (const p of policies) {
    if (p.primary.extJwt.allowedSigners?.includes(signerId) || p.secondary.requireExtJwtSigner === signerId) naming.push(p.id)
  }
  return naming.sort()
}

/** Whether a policy's primary ext-jwt rule lets signer `signerId` log in (null or empty `allowedSigners`: any signer). */
export function allowsSigner(extJwt: AuthPolicyRules['primary']['extJwt'], signerId: string): boolean {
  return extJwt.allowed && (extJwt.allowedSigners === null || extJwt.allowedSigners.length === 0 || extJwt.allowedSigners.includes(signerId))
}
