/**
 * The network JWT (`GET /network-jwts`): a JWT a client can be handed to trust this network before it holds an
 * identity, as the real controller makes it (controller/internal/routes/network-jwt_router.go):
 * - claims `em: "network"`, `aud: ["openziti-enroller"]`, `iss` = `sub` = `"https://<address>/"` (with the trailing
 *   slash, as the CA enrollment JWT), `jti` a UUID; no `exp` and no `iat`
 * - signed by the CA actor with the TLS server certificate's key (header `kid` = its SHA-1), as enrollment JWTs are
 * - made once and served the same while the node runs (the real controller keeps the first one it signs); a signing
 *   that fails is not kept, so the next request tries again
 */
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import { newUuid } from '../../lib/ids.ts'

/** The name the one network JWT is listed under. */
export const NETWORK_JWT_NAME = 'default'

/** `issuerBase`: `https://host:port` of the controller, without a trailing slash. */
export function createNetworkJwt(ca: CaActor, issuerBase: () => string): () => Promise<string> {
  let signed: Promise<string> | undefined
  return () => {
    if (!signed) {
      const iss = `${issuerBase()}/`
      const claims = { em: 'network', aud: ['openziti-enroller'], iss, sub: iss, jti: newUuid() }
      const pending = ca.ask({ type: 'ca.signJwt', key: 'server', claims })
      signed = pending
      pending.catch(() => {
        if (signed === pending) signed = undefined
      })
    }
    return signed
  }
}
