/**
 * The network enrollment JWT (`GET /network-jwts`, both APIs, no session): a token a new client reads to learn the
 * controller before it holds any credential, as the real controller makes it (routes/network-jwt_router.go):
 * - claims `em: "network"`, `aud: ["openziti-enroller"]`, `iss` = `sub` = `https://<advertised address>/` (with the
 *   trailing slash), `jti` a UUID, `ctrls: null`; no `exp` and no `iat`
 * - signed by the CA actor with the TLS server certificate's key (header `kid` = its SHA-1), as enrollment JWTs are,
 *   so the client can check it against the certificate the controller presents
 * - made once per process and then served as it is (the real controller keeps it for its process's life); a failed
 *   signing is not kept
 * - the list has the one token, named `default`
 */
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import { newUuid } from '../../lib/ids.ts'

/** The name of the one network JWT. */
export const NETWORK_JWT_NAME = 'default'

export interface NetworkJwts {
  /** The network JWTs: `[{name: "default", token}]`. */
  list(): Promise<{ name: string; token: string }[]>
}

export function createNetworkJwts(deps: {
  ca: CaActor
  /** `https://host:port` clients reach the controller at (known once the listener is up). */
  advertisedUrl: () => string
}): NetworkJwts {
  let token: Promise<string> | undefined
  const sign = () => {
    const issuer = `${deps.advertisedUrl()}/`
    const claims = { iss: issuer, sub: issuer, aud: ['openziti-enroller'], jti: newUuid(), em: 'network', ctrls: null }
    return deps.ca.ask({ type: 'ca.signJwt', key: 'server', claims })
  }
  return {
    async list() {
      const pending = (token ??= sign())
      try {
        return [{ name: NETWORK_JWT_NAME, token: await pending }]
      } catch (e) {
        if (token === pending) token = undefined
        throw e
      }
    },
  }
}
