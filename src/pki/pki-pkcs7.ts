/**
 * Degenerate PKCS#7 / CMS SignedData ("certs-only"): a bag of certificates with no content and no signers.
 * This is the body of `GET /.well-known/est/cacerts`: base64 DER in 64-character lines joined by `\n`, no trailing
 * newline, no PEM armour.
 * @see RFC 7030 §4.1.3 (EST cacerts), RFC 5652 §5 (SignedData), RFC 8551 §3.2.2 (certs-only)
 */
import * as asn1js from 'asn1js'
import { Certificate, ContentInfo, EncapsulatedContentInfo, SignedData } from 'pkijs'
import { decodePem, fromBase64, toBase64Lines } from '../lib/pem.ts'
import { readCertificateDer, readCertificates, toCertificatePem } from './pki-certs.ts'

const OID_DATA = '1.2.840.113549.1.7.1'
const OID_SIGNED_DATA = '1.2.840.113549.1.7.2'

/**
 * The DER of a certs-only SignedData ContentInfo holding `certificates` in the given order.
 * @param certificates PEM texts (bundles allowed) or DER bytes.
 * @throws ApiError when a certificate does not parse (see `readCertificates`).
 */
export function buildCertsOnlyPkcs7Der(certificates: (string | Uint8Array)[]): Uint8Array {
  const parsed = certificates.flatMap((c) => (typeof c === 'string' ? readCertificates(c) : [readCertificateDer(c)]))
  const signedData = new SignedData({
    version: 1,
    encapContentInfo: new EncapsulatedContentInfo({ eContentType: OID_DATA }),
    certificates: parsed.map((p) => p.cert),
    digestAlgorithms: [],
    signerInfos: [],
  })
  const contentInfo = new ContentInfo({ contentType: OID_SIGNED_DATA, content: signedData.toSchema(true) })
  return new Uint8Array(contentInfo.toSchema().toBER(false))
}

/**
 * The EST `cacerts` body for `certificates`: base64 of {@link buildCertsOnlyPkcs7Der} in 64-character lines joined by
 * `\n`, with no trailing newline.
 */
export function buildCertsOnlyPkcs7(certificates: (string | Uint8Array)[]): string {
  return toBase64Lines(buildCertsOnlyPkcs7Der(certificates))
}

/**
 * The certificates (as PEM, in stored order) of a certs-only PKCS#7: DER bytes, bare base64 (any line breaks), or a
 * `PKCS7` / `CMS` PEM block. Each certificate keeps its exact DER.
 * @throws Error when the input is not a SignedData ContentInfo.
 */
export function parseCertsOnlyPkcs7(input: string | Uint8Array): string[] {
  let der: Uint8Array
  if (typeof input !== 'string') der = input
  else if (input.includes('-----BEGIN')) {
    const block = decodePem(input).find((b) => b.type === 'PKCS7' || b.type === 'CMS')
    if (!block) throw new Error('no PKCS7 PEM block found')
    der = block.der
  } else der = fromBase64(input)

  const asn = asn1js.fromBER(der)
  if (asn.offset === -1) throw new Error('PKCS#7 DER could not be parsed')
  const contentInfo = new ContentInfo({ schema: asn.result })
  if (contentInfo.contentType !== OID_SIGNED_DATA) throw new Error(`PKCS#7 content type is ${contentInfo.contentType}, not signedData`)
  const signedData = new SignedData({ schema: contentInfo.content })
  return (signedData.certificates ?? [])
    .filter((c): c is Certificate => c instanceof Certificate)
    .map((c) => {
      const certDer = new Uint8Array(c.toSchema().toBER(false))
      return toCertificatePem(readCertificateDer(certDer))
    })
}
