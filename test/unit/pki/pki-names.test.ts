/** src/pki/pki-names.ts: IP address octets, subjectAltName encoding, distinguished names. */
import * as asn1js from 'asn1js'
import { describe, expect, it } from 'bun:test'
import {
  altNamesOf,
  canonicalIp,
  commonNameOf,
  ipFromOctets,
  ipToOctets,
  isIpAddress,
  toAltNameExtension,
  toDistinguishedName,
} from '../../../src/pki/pki-names.ts'

describe('ipToOctets and ipFromOctets', () => {
  it('parses IPv4 dotted quads into 4 octets', () => {
    expect(ipToOctets('127.0.0.1')).toEqual(new Uint8Array([127, 0, 0, 1]))
    expect(ipFromOctets(new Uint8Array([10, 1, 2, 255]))).toBe('10.1.2.255')
  })

  it('parses IPv6 with ::, brackets and an embedded IPv4 tail into 16 octets', () => {
    expect(ipToOctets('::1')).toEqual(new Uint8Array([...new Array(15).fill(0), 1]))
    expect(ipToOctets('[::1]')).toEqual(ipToOctets('::1'))
    expect(ipToOctets('::ffff:192.0.2.1')!.slice(10)).toEqual(new Uint8Array([0xff, 0xff, 192, 0, 2, 1]))
    expect(ipToOctets('2001:db8:0:0:0:0:0:1')).toEqual(ipToOctets('2001:db8::1'))
  })

  it('renders IPv6 the RFC 5952 way: lower case, longest zero run as ::', () => {
    expect(canonicalIp('2001:0DB8:0000:0000:0001:0000:0000:0001')).toBe('2001:db8::1:0:0:1')
    expect(canonicalIp('0:0:0:0:0:0:0:0')).toBe('::')
    expect(canonicalIp('1:0:2:3:4:5:6:7')).toBe('1:0:2:3:4:5:6:7')
  })

  it('rejects what is not an IP address', () => {
    for (const bad of ['localhost', '256.0.0.1', '1.2.3', '01.2.3.4', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::1', '']) {
      expect(ipToOctets(bad)).toBeNull()
      expect(isIpAddress(bad)).toBe(false)
    }
    expect(ipFromOctets(new Uint8Array(5))).toBeNull()
  })
})

describe('toAltNameExtension and altNamesOf', () => {
  it('round-trips DNS names, IPv4 and IPv6 addresses, URIs and e-mail addresses', () => {
    const ext = toAltNameExtension({ dnsNames: ['a.example'], ipAddresses: ['127.0.0.1', '0::1'], uris: ['spiffe://t/x'], emails: ['a@b.example'] })
    expect(ext!.critical).toBe(false)
    expect(altNamesOf([ext!])).toEqual({ dnsNames: ['a.example'], ipAddresses: ['127.0.0.1', '::1'], uris: ['spiffe://t/x'], emails: ['a@b.example'] })
  })

  it('makes no extension when there are no names', () => {
    expect(toAltNameExtension({})).toBeUndefined()
    expect(altNamesOf(undefined)).toEqual({ dnsNames: [], ipAddresses: [], uris: [], emails: [] })
  })

  it('throws a TypeError for a bad IP address', () => {
    expect(() => toAltNameExtension({ ipAddresses: ['not-an-ip'] })).toThrow(TypeError)
  })
})

describe('toDistinguishedName', () => {
  it('puts O and CN in separate RDNs and reads the CN back', () => {
    const name = toDistinguishedName({ commonName: 'ctrl', organization: 'edgeplane' })
    expect(commonNameOf(name)).toBe('ctrl')
    const rdns = (asn1js.fromBER(name.toSchema().toBER(false)).result as asn1js.Sequence).valueBlock.value
    expect(rdns).toHaveLength(2)
    for (const rdn of rdns) expect((rdn as asn1js.Set).valueBlock.value).toHaveLength(1)
  })
})
