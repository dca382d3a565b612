// The pure parts of the OIDC token half: settings with the real controller's minimums, the issuer check of the Host
// header, and a PEM carried by a form whose encoder left `+` unescaped.
import { describe, expect, it } from 'bun:test'
import { oidcSettingsOf, OIDC_DEFAULTS } from '../../../src/flows/oidc/oidc-types.ts'
import { issuerHostCheck } from '../../../src/http/oidc/oidc-app.ts'
import { pemFromForm } from '../../../src/flows/oidc/oidc-grants.ts'

describe('oidcSettingsOf', () => {
  it('keeps the defaults: 30 m access and ID tokens, 24 h refresh', () => {
    expect(oidcSettingsOf()).toEqual(OIDC_DEFAULTS)
    expect(OIDC_DEFAULTS.accessTokenMs).toBe(30 * 60_000)
    expect(OIDC_DEFAULTS.refreshTokenMs).toBe(24 * 3_600_000)
  })
  it('raises access and ID tokens to 1 m and a refresh token to the access lifetime + 1 m', () => {
    const s = oidcSettingsOf({ accessTokenMs: 1_000, idTokenMs: 2_000, refreshTokenMs: 60_000 })
    expect(s.accessTokenMs).toBe(60_000)
    expect(s.idTokenMs).toBe(60_000)
    expect(s.refreshTokenMs).toBe(120_000)
    expect(oidcSettingsOf({ accessTokenMs: 3_600_000, refreshTokenMs: 60_000 }).refreshTokenMs).toBe(3_660_000)
  })
})

describe('issuerHostCheck', () => {
  const check = issuerHostCheck(() => ['localhost', '127.0.0.1', '::1', 'Ctrl.Example.com'], () => [1280, 443])
  it('accepts a certificate name on a listener port, a bare name on 443, IPv6 in brackets, any case', () => {
    for (const host of ['localhost:1280', '127.0.0.1:1280', '[::1]:1280', 'ctrl.example.com', 'ctrl.example.com:443', 'CTRL.EXAMPLE.COM:1280']) expect(check(host.toLowerCase())).toBe(true)
  })
  it('refuses other names, other ports and malformed hosts', () => {
    for (const host of ['evil.example:1280', 'localhost:1281', 'localhost:', '::1:1280', '', 'localhost:1280:1', '[::2]:1280']) expect(check(host)).toBe(false)
  })
})

describe('pemFromForm', () => {
  it('turns spaces back into + inside a PEM body only', () => {
    const form = 'x y -----BEGIN CERTIFICATE REQUEST-----\nMIIB a/b c==\n-----END CERTIFICATE REQUEST-----'
    expect(pemFromForm(form)).toBe('x y -----BEGIN CERTIFICATE REQUEST-----\nMIIB+a/b+c==\n-----END CERTIFICATE REQUEST-----')
    expect(pemFromForm('no pem here')).toBe('no pem here')
  })
})
