// The bearer check when a cluster node is removed (flows/oidc/oidc-bearer.ts `forgetVerified`): a token of that node,
// verified and cached while the node was a member, is checked against the keys again and refused once its key is gone.
import { describe, expect, it } from 'bun:test'
import { decodeProtectedHeader, SignJWT } from 'jose'
import { createBearerCheck } from '../../../src/flows/oidc/oidc-bearer.ts'
import type { OidcTokens, TokenClaims } from '../../../src/flows/oidc/oidc-tokens.ts'
import type { JwtVerifier } from '../../../src/actors/ca/ca-state.ts'

const NOW = Date.parse('2026-01-01T00:00:00Z')

async function accessToken(kid: string): Promise<string> {
  const { privateKey } = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])
  const iat = Math.floor(NOW / 1000)
  return new SignJWT({ z_t: 'a', z_asid: 'as-1', sub: 'id-1', jti: 'j-1', iat, exp: iat + 1800 }).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey)
}

const claims = (): TokenClaims => ({
  type: 'a', jti: 'j-1', iat: Math.floor(NOW / 1000), exp: Math.floor(NOW / 1000) + 1800, isAdmin: false,
  identityId: 'id-1', apiSessionId: 'as-1', authenticatorId: 'au-1', clientId: 'openziti', amr: ['pwd'], authTime: 0, scopes: [],
  configTypeIds: [], certFingerprints: null, authCertFingerprint: '', sdkInfo: null, envInfo: null, remoteAddress: '', isCertExtendable: false,
})

describe('the bearer check and a removed node', () => {
  it('refuses a cached token of a node once the node is removed and the verified tokens are forgotten', async () => {
    const keys = new Map<string, JwtVerifier>([['node-b', {} as JwtVerifier]])
    // the signature check stands in for jose's: valid while the token's kid names a key
    const tokens = {
      kidOf: (t: string) => decodeProtectedHeader(t).kid,
      verify: async (t: string) => (keys.has(decodeProtectedHeader(t).kid ?? '') ? claims() : 'invalid'),
    } as unknown as OidcTokens
    const check = createBearerCheck({ tokens, keys: () => keys, now: () => NOW, isRevoked: () => false })
    const token = await accessToken('node-b')
    const first = await check.check(`Bearer ${token}`, undefined)
    expect('claims' in first).toBe(true)
    keys.delete('node-b')
    // cached: still admitted until the check forgets (the server does on controller.removed)
    expect('claims' in (await check.check(`Bearer ${token}`, undefined))).toBe(true)
    check.forgetVerified()
    expect(await check.check(`Bearer ${token}`, undefined)).toEqual({ failure: 'missing' })
  })
})
