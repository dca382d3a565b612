/**
 * X.509 v3 extensions we write and read: basicConstraints, keyUsage, extendedKeyUsage and the key identifiers.
 * Builders return pkijs Extensions ready to attach; readers take a parsed certificate. No signing, no I/O.
 * (subjectAltName lives with the other names in pki-names.ts.)
 * @see RFC 5280 §4.2.1.1–§4.2.1.3, §4.2.1.9, §4.2.1.12
 */
import * as asn1js from 'asn1js'
import { createHash } from 'node:crypto'
import { AuthorityKeyIdentifier, BasicConstraints, type Certificate, ExtKeyUsage, Extension, type PublicKeyInfo } from 'pkijs'

const OID_BASIC_CONSTRAINTS = '2.5.29.19'
const OID_KEY_USAGE = '2.5.29.15'
const OID_EXT_KEY_USAGE = '2.5.29.37'
const OID_SUBJECT_KEY_ID = '2.5.29.14'
const OID_AUTHORITY_KEY_ID = '2.5.29.35'

/** extendedKeyUsage purposes by name. */
export const EKU = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' } as const
const EKU_NAMES: Record<string, string> = Object.fromEntries(Object.entries(EKU).map(([name, oid]) => [oid, name]))

/** keyUsage bit numbers, as RFC 5280 §4.2.1.3 numbers them. */
export const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const

/** Critical basicConstraints: a CA (with pathLenConstraint when `pathLen` is given), or `null` for an end entity. */
export function toBasicConstraintsExtension(ca: { pathLen?: number } | null): Extension {
  const value = ca
    ? new BasicConstraints({ cA: true, ...(ca.pathLen === undefined ? {} : { pathLenConstraint: ca.pathLen }) })
    : new BasicConstraints({ cA: false })
  return new Extension({ extnID: OID_BASIC_CONSTRAINTS, critical: true, extnValue: value.toSchema().toBER(false), parsedValue: value })
}

/** Critical keyUsage with the given bits, as a DER-minimal BIT STRING (trailing zero bits dropped). */
export function toKeyUsageExtension(bits: number[]): Extension {
  const octets = new Uint8Array(2)
  for (const bit of bits) octets[bit >> 3] |= 0x80 >> (bit & 7)
  const length = octets[1] ? 2 : 1
  const last = octets[length - 1]
  let unusedBits = 0
  while (unusedBits < 7 && (last & (1 << unusedBits)) === 0) unusedBits++
  const value = new asn1js.BitString({ valueHex: octets.slice(0, length), unusedBits })
  return new Extension({ extnID: OID_KEY_USAGE, critical: true, extnValue: value.toBER(false), parsedValue: value })
}

/** Non-critical extendedKeyUsage with the given purpose OIDs (see {@link EKU}). */
export function toExtKeyUsageExtension(purposes: string[]): Extension {
  const value = new ExtKeyUsage({ keyPurposes: purposes })
  return new Extension({ extnID: OID_EXT_KEY_USAGE, critical: false, extnValue: value.toSchema().toBER(false), parsedValue: value })
}

/** Non-critical subjectKeyIdentifier. */
export function toSubjectKeyIdExtension(keyId: Uint8Array): Extension {
  const value = new asn1js.OctetString({ valueHex: keyId })
  return new Extension({ extnID: OID_SUBJECT_KEY_ID, critical: false, extnValue: value.toBER(false), parsedValue: value })
}

/** Non-critical authorityKeyIdentifier with the keyIdentifier form only. */
export function toAuthorityKeyIdExtension(keyId: Uint8Array): Extension {
  const value = new AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: keyId }) })
  return new Extension({ extnID: OID_AUTHORITY_KEY_ID, critical: false, extnValue: value.toSchema().toBER(false), parsedValue: value })
}

/** The key identifier of a public key: SHA-1 of the subjectPublicKey bits (RFC 5280 §4.2.1.2, method 1). */
export function keyIdOf(spki: PublicKeyInfo): Uint8Array {
  return new Uint8Array(createHash('sha1').update(spki.subjectPublicKey.valueBlock.valueHexView).digest())
}

/** The subjectKeyIdentifier of a certificate, or undefined when it has none. */
export function subjectKeyIdOf(cert: Certificate): Uint8Array | undefined {
  const parsed = findExtension(cert, OID_SUBJECT_KEY_ID)?.parsedValue
  return parsed instanceof asn1js.OctetString ? parsed.valueBlock.valueHexView : undefined
}

/** The keyIdentifier of a certificate's authorityKeyIdentifier, or undefined when absent. */
export function authorityKeyIdOf(cert: Certificate): Uint8Array | undefined {
  const parsed = findExtension(cert, OID_AUTHORITY_KEY_ID)?.parsedValue
  return parsed instanceof AuthorityKeyIdentifier ? parsed.keyIdentifier?.valueBlock.valueHexView : undefined
}

/** What carries extensions: a certificate, or a CSR's extension request. */
type WithExtensions = Pick<Certificate, 'extensions'>

/** Whether a certificate has basicConstraints cA true. */
export function isCaCertificate(cert: WithExtensions): boolean {
  const parsed = findExtension(cert, OID_BASIC_CONSTRAINTS)?.parsedValue
  return parsed instanceof BasicConstraints && parsed.cA === true
}

/** The basicConstraints pathLenConstraint, or undefined when unlimited or absent. */
export function pathLenOf(cert: Certificate): number | undefined {
  const parsed = findExtension(cert, OID_BASIC_CONSTRAINTS)?.parsedValue
  if (!(parsed instanceof BasicConstraints) || parsed.pathLenConstraint === undefined) return undefined
  const pathLen = parsed.pathLenConstraint
  return typeof pathLen === 'number' ? pathLen : pathLen.valueBlock.valueDec
}

/** Whether keyUsage, when present, allows signing certificates (keyCertSign); no keyUsage means no restriction. */
export function canSignCertificates(cert: WithExtensions): boolean {
  const ext = findExtension(cert, OID_KEY_USAGE)
  if (!ext) return true
  const bits = ext.parsedValue instanceof asn1js.BitString ? ext.parsedValue.valueBlock.valueHexView : new Uint8Array()
  return bits.length > 0 && (bits[0] & (0x80 >> KEY_USAGE.keyCertSign)) !== 0
}

/** Whether extensions ask for CA rights: basicConstraints cA, or a keyUsage that includes keyCertSign. */
export function asksForCaRights(holder: WithExtensions): boolean {
  return isCaCertificate(holder) || (findExtension(holder, OID_KEY_USAGE) !== undefined && canSignCertificates(holder))
}

/** extendedKeyUsage purposes by name (`serverAuth`, `clientAuth`) or OID for others; empty when absent. */
export function extKeyUsagesOf(cert: Certificate): string[] {
  const parsed = findExtension(cert, OID_EXT_KEY_USAGE)?.parsedValue
  return parsed instanceof ExtKeyUsage ? toExtKeyUsageNames(parsed.keyPurposes) : []
}

/** Purpose OIDs by their names in {@link EKU} (unknown ones stay OIDs). */
export function toExtKeyUsageNames(oids: readonly string[]): string[] {
  return oids.map((oid) => EKU_NAMES[oid] ?? oid)
}

function findExtension(cert: WithExtensions, oid: string): Extension | undefined {
  return cert.extensions?.find((e) => e.extnID === oid)
}
