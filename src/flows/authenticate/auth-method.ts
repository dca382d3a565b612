/**
 * Primary authentication methods as modules: the `AuthMethod` interface every method implements (updb, cert and
 * ext-jwt) and the registry the authenticate route dispatches through.
 * - a method proves who the caller is and answers the identity and the authenticator it used, or throws a coded
 *   ApiError (INVALID_AUTH for every credential failure, COULD_NOT_VALIDATE for a malformed request)
 * - a method opens no session: `auth-api-session.ts` does that, the same way after every method
 * - a method name the registry does not know is 400 INVALID_AUTH_METHOD, whether the wire knows it or not
 */
import { modulesByMethod, moduleOrRefuse } from '../flow-modules.ts'
import type { Authenticator, EnvInfo, Identity, SdkInfo } from '../../domain/identity/identity-types.ts'

/** What the TLS layer knows about the caller (the listener's peer info satisfies it). */
export interface AuthPeer {
  /** DER of the certificates the client presented, leaf first; empty when none. */
  readonly certChainDer: readonly Uint8Array[]
  readonly remoteAddress: string
}

/** The authenticate request as the route parsed it. @see edge-api client.yml POST /authenticate (authenticate) */
export interface AuthInput {
  readonly username?: string
  readonly password?: string
  readonly configTypes?: readonly string[]
  readonly envInfo?: EnvInfo
  readonly sdkInfo?: SdkInfo
  /** A request header by name (ext-jwt reads `Authorization`); null when absent. */
  header(name: string): string | null
}

/** Which part of an authentication policy governs a method (`primary.updb`, `primary.cert`, `primary.extJwt`). */
export type PrimaryMethodKind = 'updb' | 'cert' | 'extJwt'

/** The outcome of a successful primary authentication. */
export interface PrimaryAuth {
  readonly identity: Identity
  /** The stored authenticator; for ext-jwt, which has none, the signer's id with method `ext-jwt`. */
  readonly authenticator: Pick<Authenticator, 'id' | 'identityId'> & { readonly method: Authenticator['method'] | 'ext-jwt' }
  /** The method may extend the session's client certificate (cert authentication with extension requested). */
  readonly isCertExtendable?: boolean
}

/** One primary authentication method. Implementations `satisfies AuthMethod`. */
export interface AuthMethod {
  /** The wire's `method` query value: `password`, `cert`, `ext-jwt`. */
  readonly method: string
  readonly kind: PrimaryMethodKind
  /** Proves the caller's identity or throws a coded ApiError. Must not write a session. */
  authenticate(input: AuthInput, peer: AuthPeer): Promise<PrimaryAuth>
}

/** The enabled primary methods by wire name. */
export interface AuthMethodRegistry {
  /** The method registered under `method`; 400 INVALID_AUTH_METHOD when none is. */
  resolve(method: string): AuthMethod
  /** The wire names of the registered methods, in registration order. */
  names(): string[]
}

/** A registry of `methods`. @throws TypeError when two modules claim the same wire name (a wiring bug). */
export function createAuthMethodRegistry(methods: readonly AuthMethod[]): AuthMethodRegistry {
  const byName = modulesByMethod('authentication', methods)
  return {
    resolve: (method) => moduleOrRefuse(byName, 'authentication', method, 'INVALID_AUTH_METHOD'),
    names: () => [...byName.keys()],
  }
}
