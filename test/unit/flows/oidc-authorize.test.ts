// The authorize checks of OIDC sign-in (flows/oidc/oidc-authorize.ts): redirect-URI globs with hostile inputs, config
// types resolved to ids, and what an accepted request holds (the API tests see only the redirects).
import { afterEach, describe, expect, it } from 'bun:test'
import { FakeClock } from '../../../src/lib/clock.ts'
import { authorize, configTypeIdsOf, redirectUriMatches, type ConfigTypeLookup } from '../../../src/flows/oidc/oidc-authorize.ts'
import { createAuthRequestStore, type SweptAuthRequestStore } from '../../../src/flows/oidc/oidc-auth-requests.ts'
import { DEFAULT_REDIRECT_URIS } from '../../../src/flows/oidc/oidc-types.ts'

const TYPES: ConfigTypeLookup = {
  get: (id) => (id === 'ct1' || id === 'ct2' ? { id } : undefined),
  idByName: (name) => ({ 'intercept.v1': 'ct1', 'host.v1': 'ct2' })[name],
}

function reader(q: Record<string, string | string[]>) {
  return {
    get: (n: string) => [q[n] ?? []].flat().find((v) => v !== ''),
    all: (n: string) => [q[n] ?? []].flat(),
  }
}

const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'))
let store: SweptAuthRequestStore
afterEach(() => store?.stop())

describe('redirectUriMatches', () => {
  const matchesAny = (uri: string) => DEFAULT_REDIRECT_URIS.some((p) => redirectUriMatches(p, uri))

  it('accepts the SDK\'s callback and every default pattern\'s shape', () => {
    for (const uri of ['http://localhost:20314/auth/callback', 'https://127.0.0.1:1/auth/callback', 'openziti://auth/callback']) {
      expect(matchesAny(uri)).toBe(true)
    }
  })

  it('refuses hosts smuggled through the port wildcard, other paths, queries, fragments and look-alikes', () => {
    for (const uri of [
      'http://localhost:1@evil.example/auth/callback',
      'http://localhost:1/x/auth/callback',
      'http://localhost:1/auth/callback?x=1',
      'http://localhost:1/auth/callback#x',
      'http://localhost:1\\@evil/auth/callback',
      'http://localhostXevil:1/auth/callback',
      'http://127.0.0.1.evil.example:1/auth/callback',
      'openziti://auth/callbackX',
      'https://evil.example/auth/callback',
    ]) {
      expect(matchesAny(uri)).toBe(false)
    }
  })

  it('treats every other character of a pattern literally', () => {
    expect(redirectUriMatches('https://a.b/c', 'https://aXb/c')).toBe(false)
    expect(redirectUriMatches('https://a.b/(c)+', 'https://a.b/(c)+')).toBe(true)
  })
})

describe('configTypeIdsOf', () => {
  it('resolves names and ids to ids, drops unknown ones and duplicates, keeps all', () => {
    expect(configTypeIdsOf(['intercept.v1', 'ct1', 'nope', 'ct2', 'all'], TYPES)).toEqual(['ct1', 'ct2', 'all'])
  })
})

describe('authorize', () => {
  const deps = () => {
    store = createAuthRequestStore({ clock })
    return { requests: store, redirectUris: () => DEFAULT_REDIRECT_URIS, configTypes: () => TYPES }
  }
  const base = {
    client_id: 'native',
    redirect_uri: 'http://localhost:20314/auth/callback',
    response_type: 'code',
    scope: 'openid offline_access profile openid',
    code_challenge: 'abc',
    code_challenge_method: 'S256',
    state: 's1',
    nonce: 'n1',
    configTypes: ['host.v1', 'unknown'],
  }

  it('starts an auth request holding the checked parameters (known scopes once, config type ids)', () => {
    const d = deps()
    const out = authorize(d, reader(base), false, clock.now())
    if (out.kind !== 'login') throw new Error(`expected a login, got ${JSON.stringify(out)}`)
    expect(out.page).toBe('username')
    expect(d.requests.get(out.request.id, clock.now())).toBe(out.request)
    expect(out.request).toMatchObject({
      clientId: 'native',
      redirectUri: base.redirect_uri,
      scopes: ['openid', 'offline_access'],
      state: 's1',
      nonce: 'n1',
      codeChallenge: 'abc',
      codeChallengeMethod: 'S256',
      configTypeIds: ['ct2'],
      createdAt: clock.now(),
    })
  })

  it('starts nothing when it refuses', () => {
    const d = deps()
    expect(authorize(d, reader({ ...base, code_challenge_method: 'plain' }), false, clock.now()).kind).toBe('redirected')
    expect(authorize(d, reader({ ...base, client_id: 'x' }), false, clock.now()).kind).toBe('refused')
    expect(d.requests.size()).toBe(0)
  })
})
