// The listener's reading of the request line and the Host header (RFC 9110 §7.2, RFC 9112 §3.2).
import { describe, expect, it } from 'bun:test'
import { isValidHostHeader, targetPath } from '../../../src/http/http-listener.ts'

describe('isValidHostHeader', () => {
  it('accepts names, IPv4 and bracketed IPv6 addresses, with a port up to 65535', () => {
    for (const host of ['localhost', 'localhost:1280', 'ctrl.example.net:443', '127.0.0.1', '[::1]', '[::1]:1280', 'x:', 'x:65535']) {
      expect({ host, valid: isValidHostHeader(host) }).toEqual({ host, valid: true })
    }
  })

  it('refuses ports out of range, spaces, unbracketed IPv6 and garbage', () => {
    for (const host of ['localhost:99999', 'localhost:65536', 'a b', '::1', 'h:1:2', 'x:-1', 'host/path', '[zz]', 'a@b:1:']) {
      expect({ host, valid: isValidHostHeader(host) }).toEqual({ host, valid: false })
    }
  })
})

describe('targetPath', () => {
  it('keeps an origin-form target and takes path and query of an absolute-form one', () => {
    expect(targetPath('/edge/client/v1/version?x=1')).toBe('/edge/client/v1/version?x=1')
    expect(targetPath('https://elsewhere:9/edge/client/v1/version?x=1')).toBe('/edge/client/v1/version?x=1')
    expect(targetPath('HTTP://h')).toBe('/')
  })

  it('refuses other forms', () => {
    for (const target of ['*', 'host:443', 'ftp://h/p', '', 'https://[bad/p']) expect(targetPath(target)).toBeUndefined()
  })
})
