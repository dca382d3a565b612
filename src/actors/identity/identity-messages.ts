/**
 * Messages of the identity actor: plain, cloneable data. Password hashes are computed in flows/ before asking.
 */
import type { ChangeContext } from '../runtime/actor-runtime.ts'
import type { Authenticator, EnvInfo, Identity, SdkInfo } from '../../domain/identity/identity-types.ts'
import type { Writable } from '../../lib/deep-readonly.ts'

/** Fields an admin may set on an identity (create, put, patch). Absent means "leave as is" on patch. */
export type IdentityFields = Partial<
  Writable<Pick<
    Identity,
    | 'name'
    | 'typeId'
    | 'isAdmin'
    | 'roleAttributes'
    | 'externalId'
    | 'authPolicyId'
    | 'appData'
    | 'tags'
    | 'defaultHostingCost'
    | 'defaultHostingPrecedence'
    | 'serviceHostingCosts'
    | 'serviceHostingPrecedences'
  >>
>

export type IdentityMsg =
  | { type: 'identity.create'; input: IdentityFields & { name: string }; isDefaultAdmin?: boolean; updb?: { username: string; passwordHash: string }; change: ChangeContext }
  | { type: 'identity.update'; id: string; input: IdentityFields; replace: boolean; change: ChangeContext }
  | { type: 'identity.delete'; id: string; change: ChangeContext }
  | { type: 'identity.recordClientInfo'; id: string; envInfo?: EnvInfo; sdkInfo?: SdkInfo; change: ChangeContext }
  /**
   * Makes the identity of a tunneler-enabled edge router match it: `present` ⇒ an identity with id = router id,
   * the router's name, type Router, not admin, marked `isRouterIdentity` (created, renamed or marked); otherwise none
   * (deleted with its authenticators, without the admin delete guard). Sent only by flows/routers/router-identity.ts.
   */
  | { type: 'identity.syncRouterIdentity'; routerId: string; name: string; present: boolean; change: ChangeContext }
  | { type: 'authenticator.createUpdb'; identityId: string; username: string; passwordHash: string; tags: Authenticator['tags']; change: ChangeContext }
  | { type: 'authenticator.update'; id: string; username?: string; passwordHash?: string; tags?: Authenticator['tags']; replaceTags: boolean; change: ChangeContext }
  | { type: 'authenticator.delete'; id: string; change: ChangeContext }

export interface IdentityReplies {
  'identity.create': { id: string }
  'identity.update': void
  'identity.delete': void
  'identity.recordClientInfo': void
  'identity.syncRouterIdentity': void
  'authenticator.createUpdb': { id: string }
  'authenticator.update': void
  'authenticator.delete': void
}

export type IdentityEvent =
  | { type: 'identity.created'; identity: Identity }
  | { type: 'identity.updated'; identity: Identity; previous: Identity }
  | { type: 'identity.deleted'; identity: Identity }
  | { type: 'authenticator.deleted'; authenticator: Authenticator }
