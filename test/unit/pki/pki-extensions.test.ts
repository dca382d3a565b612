/** src/pki/pki-extensions.ts: the v3 extensions we write, encoded as DER, and read back (RFC 5280 §4.2.1). */
import * as asn1js from 'asn1js'
import { describe, expect, it } from 'bun:test'
import { Certificate } from 'pkijs'
import { decodePem } from '../../../src/lib/pem.ts'
import {
  authorityKeyIdOf,
  canSignCertificates,
  EKU,
  extKeyUsagesOf,
  isCaCertificate,
  KEY_USAGE,
  pathLenOf,
  subjectKeyIdOf,
  toBasicConstraintsExtension,
  toExtKeyUsageExtension,
  toKeyUsageExtension,
} from '../../../src/pki/pki-extensions.ts'
import { makeClientCert, makeTestCa } from '../../support/pki.ts'

const hex = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString('hex')
const certOf = (pem: string) => Certificate.fromBER(decodePem(pem)[0].der)

describe('toKeyUsageExtension', () => {
  it('encodes a DER-minimal BIT STRING: trailing zero bits are counted as unused', () => {
    expect(hex(toKeyUsageExtension([KEY_USAGE.digitalSignature]).extnValue.valueBlock.valueHexView)).toBe('03020780')
    expect(hex(toKeyUsageExtension([KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]).extnValue.valueBlock.valueHexView)).toBe('03020106')
    expect(hex(toKeyUsageExtension([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment]).extnValue.valueBlock.valueHexView)).toBe('030205a0')
  })

  it('is critical', () => {
    expect(toKeyUsageExtension([0]).critical).toBe(true)
  })
})

describe('toBasicConstraintsExtension', () => {
  it('encodes cA with pathLen 0, cA without a limit, and an end entity as an empty SEQUENCE', () => {
    expect(hex(toBasicConstraintsExtension({ pathLen: 0 }).extnValue.valueBlock.valueHexView)).toBe('30060101ff020100')
    expect(hex(toBasicConstraintsExtension({}).extnValue.valueBlock.valueHexView)).toBe('30030101ff')
    expect(hex(toBasicConstraintsExtension(null).extnValue.valueBlock.valueHexView)).toBe('3000')
    expect(toBasicConstraintsExtension(null).critical).toBe(true)
  })
})

describe('toExtKeyUsageExtension', () => {
  it('lists the purposes and is not critical', () => {
    const ext = toExtKeyUsageExtension([EKU.clientAuth])
    expect(ext.critical).toBe(false)
    const seq = asn1js.fromBER(ext.extnValue.valueBlock.valueHexView).result as asn1js.Sequence
    expect((seq.valueBlock.value[0] as asn1js.ObjectIdentifier).valueBlock.toString()).toBe(EKU.clientAuth)
  })
})

const ca = await makeTestCa()
const leaf = await makeClientCert({ issuer: ca.signer })
const self = await makeClientCert({ issuer: 'self' })

describe('readers', () => {
  it('tell a CA from a leaf and read pathLen and keyCertSign', () => {
    expect(isCaCertificate(certOf(ca.certPem))).toBe(true)
    expect(isCaCertificate(certOf(leaf.certPem))).toBe(false)
    expect(pathLenOf(certOf(ca.certPem))).toBeUndefined()
    expect(canSignCertificates(certOf(ca.certPem))).toBe(true)
    expect(canSignCertificates(certOf(leaf.certPem))).toBe(false)
    expect(canSignCertificates(certOf(self.certPem))).toBe(true) // no keyUsage: unrestricted
  })

  it('link the leaf authority key id to the CA subject key id', () => {
    expect(hex(authorityKeyIdOf(certOf(leaf.certPem))!)).toBe(hex(subjectKeyIdOf(certOf(ca.certPem))!))
    expect(subjectKeyIdOf(certOf(self.certPem))).toBeUndefined()
  })

  it('name the extended key usages', () => {
    expect(extKeyUsagesOf(certOf(leaf.certPem))).toEqual(['clientAuth'])
    expect(extKeyUsagesOf(certOf(ca.certPem))).toEqual([])
  })
})
