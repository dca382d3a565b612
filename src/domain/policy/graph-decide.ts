/**
 * Pure checks shared by every policy-graph command. Each throws ApiError; none mutates.
 * - names are required (not blank) and unique per kind: `duplicate value '<v>' in unique index on <store> store`
 * - role lists: `#attr`, `@id` or `#all` alone (decideRoles); every `@id` must exist in its kind
 * - semantic is AllOf/AnyOf in any case, stored canonical; policy type is Dial/Bind likewise
 * - costs are integers 0..65535; terminator precedence is default, required or failed
 * - system entities (built-in config types, system edge router policies) cannot be changed or deleted
 * - deleting an entity others still point at is 409 CAN_NOT_DELETE_REFERENCED_ENTITY
 * - routers take no configs and no bootstrap control channel listeners yet (both belong to routers connecting, which
 *   edgeplane does not do yet): a non-empty value is refused rather than dropped
 */
import { ApiError } from '../../errors/api-error.ts'
import { decideRoles, splitRoles } from './policy-roles.ts'
import { POLICY_TYPES, SEMANTICS, type PolicyType, type Precedence, type Semantic } from './policy-types.ts'

/** Store names used in unique-index messages, as the real controller names its stores. */
export type StoreName =
  | 'configTypes'
  | 'configs'
  | 'services'
  | 'routers'
  | 'servicePolicies'
  | 'edgeRouterPolicies'
  | 'serviceEdgeRouterPolicies'
  | 'identities'
  | 'cas'
  | 'externalJwtSigners'
  | 'postureChecks'

/** A required, unique name. `idByName` answers the id holding a name; `selfId` is the entity being updated. */
export function decideName(
  store: StoreName,
  name: string | undefined,
  idByName: (name: string) => string | undefined,
  selfId?: string,
): string {
  if (name === undefined || name.trim() === '') throw ApiError.invalidField('name', 'name is required', name ?? '')
  const other = idByName(name)
  if (other !== undefined && other !== selfId) throw duplicateName(store, name)
  return name
}

export function duplicateName(store: StoreName, name: string): ApiError {
  return ApiError.invalidField('name', `duplicate value '${name}' in unique index on ${store} store`, name)
}

/** A required string field (binding, address): present and not blank. */
export function decideRequired(field: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw ApiError.invalidField(field, `${field} is required`, value ?? '')
  return value
}

/** AllOf/AnyOf in any letter case, returned canonical; absent gives `dflt` (a stored policy without one reads AllOf). */
export function decideSemantic(value: string | undefined, dflt: Semantic = 'AllOf'): Semantic {
  if (value === undefined) return dflt
  const hit = SEMANTICS.find((s) => s.toLowerCase() === String(value).toLowerCase())
  if (!hit) throw ApiError.invalidField('semantic', `invalid semantic '${value}': must be AllOf or AnyOf`, value)
  return hit
}

/** Dial/Bind in any letter case, returned canonical. Required. */
export function decidePolicyType(value: string | undefined): PolicyType {
  const hit = value === undefined ? undefined : POLICY_TYPES.find((t) => t.toLowerCase() === String(value).toLowerCase())
  if (!hit) throw ApiError.invalidField('type', `invalid policy type '${value ?? ''}': must be Dial or Bind`, value ?? '')
  return hit
}

/** An integer cost 0..65535. */
export function decideCost(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw ApiError.invalidField(field, `${field} must be an integer between 0 and 65535`, value)
  }
  return value
}

const PRECEDENCES: readonly Precedence[] = ['default', 'required', 'failed']

export function decidePrecedence(value: string): Precedence {
  const hit = PRECEDENCES.find((p) => p === String(value).toLowerCase())
  if (!hit) throw ApiError.invalidField('precedence', `invalid precedence '${value}': must be default, required or failed`, value)
  return hit
}

/** Which entities a role field names, and how the error calls them. */
export interface RoleTarget {
  /** Plural noun of the message: identities, services, edge routers, posture checks. */
  noun: string
  exists: (id: string) => boolean
}

/**
 * A policy role list from a request: syntax via decideRoles, then every `@id` must exist in `target`
 * (`no <noun> found with the given ids`, value: the missing ids). Returns the list to store.
 */
export function decidePolicyRoles(field: string, roles: readonly string[] | null | undefined, target: RoleTarget): string[] {
  const out = decideRoles(field, roles)
  const missing = splitRoles(out).ids.filter((id) => !target.exists(id))
  if (missing.length > 0) throw ApiError.invalidField(field, `no ${target.noun} found with the given ids`, missing)
  return out
}

/** The real controller's FK refusal: `entity type <local> referenced by <remote>: [ids]`. */
export function referencedEntity(localType: string, remoteType: string, field: string, ids: readonly string[]): ApiError {
  return new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
    cause: { kind: 'field', field, reason: `entity type ${localType} referenced by ${remoteType}: [${ids.join(' ')}]`, value: [...ids] },
  })
}

/** System entities are owned by the controller: admins may neither update nor delete them. */
export function decideNotSystem(entity: { id: string; isSystem: boolean }, entityType: string, op: 'update' | 'delete'): void {
  if (!entity.isSystem) return
  throw ApiError.withMessage(
    op === 'update' ? 'ENTITY_CAN_NOT_BE_UPDATED' : 'ENTITY_CAN_NOT_BE_DELETED',
    `cannot ${op} system ${entityType} in a non-system context (id=${entity.id})`,
  )
}

/**
 * A router's `configs` and `ctrlChanListeners` (the CLI's `--config` and `--bootstrap-ctrl-chan-listener`): absent,
 * null or empty only, until routers connect; anything else is 400 COULD_NOT_VALIDATE naming the field.
 */
export function decideNoRouterBootstrap(configs: readonly string[] | null | undefined, ctrlChanListeners: Readonly<Record<string, unknown>> | null | undefined): void {
  if (configs && configs.length > 0) {
    throw ApiError.invalidField('configs', 'router configs are not supported until routers connect to the controller', [...configs])
  }
  if (ctrlChanListeners && Object.keys(ctrlChanListeners).length > 0) {
    throw ApiError.invalidField('ctrlChanListeners', 'control channel listeners are not supported until routers connect to the controller', { ...ctrlChanListeners })
  }
}
