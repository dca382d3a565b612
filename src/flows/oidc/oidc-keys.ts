/**
 * The signing certificates OIDC tokens may name by `kid` (oidc-tokens.ts `TokenKeys`): this node's server key, and in
 * a cluster every member's, so a token minted on one node is accepted on all of them (an SDK that fails over keeps
 * its access and refresh tokens; oidc-and-ha.md §5 and §7.8). The JWKS (`/oidc/keys`) lists the same keys.
 * - members' keys come from the controllers aggregate (replicated), each certificate checked once
 *   (actors/ca/ca-node-keys.ts) and kept until the aggregate changes (`invalidate`, on its events) or this node's own
 *   key does; a certificate refused is logged once, with why
 * - the map is rebuilt on the first read after a change: reads are synchronous and cost a map lookup
 */
import { nodeJwtVerifier, type NodeCertificate } from '../../actors/ca/ca-node-keys.ts'
import type { JwtVerifier } from '../../actors/ca/ca-state.ts'
import type { TokenKeys } from './oidc-tokens.ts'

export interface TokenKeyDeps {
  /** This node's own verifier (the CA actor's `jwtVerifiers.server`). */
  own(): JwtVerifier
  /** The cluster's nodes (absent on a single node). */
  nodes?(): Iterable<NodeCertificate & { name: string }>
  /** The PEM of the CA a member's server certificate must be issued by (the shared intermediate). */
  issuers(): readonly string[]
  now(): number
  log(line: string): void
}

export interface ClusterTokenKeys {
  keys: TokenKeys
  /** The nodes changed: the next read rebuilds the map. */
  invalidate(): void
}

export function createTokenKeys(deps: TokenKeyDeps): ClusterTokenKeys {
  let cached: { own: JwtVerifier; map: ReadonlyMap<string, JwtVerifier> } | undefined
  /** Node certificates already checked (by fingerprint and PEM): their verdict, so a change re-checks only new ones. */
  const checked = new Map<string, JwtVerifier | string>()
  const build = (own: JwtVerifier): ReadonlyMap<string, JwtVerifier> => {
    const map = new Map<string, JwtVerifier>([[own.kid ?? '', own]])
    if (!deps.nodes) return map
    const seen = new Set<string>()
    for (const node of deps.nodes()) {
      const kid = node.fingerprint.toLowerCase()
      if (kid === own.kid) continue
      const key = `${kid}\n${node.certPem}`
      seen.add(key)
      let verdict = checked.get(key)
      if (verdict === undefined) {
        verdict = nodeJwtVerifier(node, deps.issuers(), deps.now())
        checked.set(key, verdict)
        if (typeof verdict === 'string') deps.log(`cluster: the certificate of node ${node.name} (${kid}) is not a signing key of this cluster: ${verdict}`)
      }
      if (typeof verdict !== 'string') map.set(kid, verdict)
    }
    for (const key of checked.keys()) if (!seen.has(key)) checked.delete(key)
    return map
  }
  return {
    keys: () => {
      const own = deps.own()
      if (cached?.own !== own) cached = { own, map: build(own) }
      return cached.map
    },
    invalidate() {
      cached = undefined
    },
  }
}
