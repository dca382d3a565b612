/**
 * X.509 names shared by certificates and CSRs: distinguished names (CN), subjectAltName entries and IP address
 * text ↔ octets. Pure functions over pkijs objects; no signing, no I/O.
 */
import * as asn1js from 'asn1js'
import { AltName, Extension, GeneralName, RelativeDistinguishedNames } from 'pkijs'

const OID_COMMON_NAME = '2.5.4.3'
const OID_ORGANIZATION = '2.5.4.10'
/** subjectAltName. @see RFC 5280 §4.2.1.6 */
export const OID_SUBJECT_ALT_NAME = '2.5.29.17'

const GN_EMAIL = 1
const GN_DNS = 2
const GN_URI = 6
const GN_IP = 7

/** The subject of a certificate we issue: a common name and, optionally, an organisation. */
export interface SubjectName {
  commonName: string
  organization?: string
}

/** subjectAltName entries, split by kind. IPs are in canonical text form (IPv6 compressed, RFC 5952). */
export interface SubjectAltNames {
  dnsNames: string[]
  ipAddresses: string[]
  uris: string[]
  /** rfc822Name entries (e-mail addresses). */
  emails: string[]
}

/**
 * A Name of O (when given) then CN, each in its own RDN, as UTF8String values.
 * Built as DER and re-read so pkijs keeps these exact bytes: its own encoder would put every attribute into one
 * multi-valued RDN (`O = x + CN = y`).
 */
export function toDistinguishedName(subject: SubjectName): RelativeDistinguishedNames {
  const attributes: [string, string][] = []
  if (subject.organization) attributes.push([OID_ORGANIZATION, subject.organization])
  attributes.push([OID_COMMON_NAME, subject.commonName])
  const name = new asn1js.Sequence({
    value: attributes.map(
      ([type, value]) =>
        new asn1js.Set({
          value: [new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: type }), new asn1js.Utf8String({ value })] })],
        }),
    ),
  })
  return RelativeDistinguishedNames.fromBER(name.toBER(false))
}

/** The first common name in a Name, or '' when it has none. */
export function commonNameOf(name: RelativeDistinguishedNames): string {
  const cn = name.typesAndValues.find((tv) => tv.type === OID_COMMON_NAME)
  if (!cn) return ''
  const value = cn.value as { valueBlock?: { value?: unknown } }
  return typeof value.valueBlock?.value === 'string' ? value.valueBlock.value : ''
}

/** The subjectAltName entries of an extension list; empty lists when the extension is absent. */
export function altNamesOf(extensions: Extension[] | undefined): SubjectAltNames {
  const out: SubjectAltNames = { dnsNames: [], ipAddresses: [], uris: [], emails: [] }
  const ext = extensions?.find((e) => e.extnID === OID_SUBJECT_ALT_NAME)
  if (!ext) return out
  const altName = ext.parsedValue instanceof AltName ? ext.parsedValue : AltName.fromBER(ext.extnValue.valueBlock.valueHexView)
  for (const gn of altName.altNames) {
    if (gn.type === GN_DNS) out.dnsNames.push(String(gn.value))
    else if (gn.type === GN_URI) out.uris.push(String(gn.value))
    else if (gn.type === GN_EMAIL) out.emails.push(String(gn.value))
    else if (gn.type === GN_IP) {
      const ip = ipFromOctets((gn.value as asn1js.OctetString).valueBlock.valueHexView)
      if (ip) out.ipAddresses.push(ip)
    }
  }
  return out
}

/**
 * A non-critical subjectAltName extension, or undefined when there is nothing to put in it.
 * @throws TypeError on an IP address that does not parse.
 */
export function toAltNameExtension(sans: Partial<SubjectAltNames>): Extension | undefined {
  const names: GeneralName[] = []
  for (const dns of sans.dnsNames ?? []) names.push(new GeneralName({ type: GN_DNS, value: dns }))
  for (const ip of sans.ipAddresses ?? []) {
    const octets = ipToOctets(ip)
    if (!octets) throw new TypeError(`not an IP address: ${ip}`)
    names.push(new GeneralName({ type: GN_IP, value: new asn1js.OctetString({ valueHex: octets }) }))
  }
  for (const uri of sans.uris ?? []) names.push(new GeneralName({ type: GN_URI, value: uri }))
  for (const email of sans.emails ?? []) names.push(new GeneralName({ type: GN_EMAIL, value: email }))
  if (names.length === 0) return undefined
  const altName = new AltName({ altNames: names })
  return new Extension({ extnID: OID_SUBJECT_ALT_NAME, critical: false, extnValue: altName.toSchema().toBER(false), parsedValue: altName })
}

/**
 * The 4 or 16 octets of an IPv4 dotted quad or an IPv6 address (with `::`, an embedded IPv4 tail, or `[brackets]`).
 * @returns null when `text` is neither.
 */
export function ipToOctets(text: string): Uint8Array | null {
  const ip = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text
  const v4 = parseIpv4(ip)
  if (v4) return v4
  if (!ip.includes(':')) return null
  return parseIpv6(ip)
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  const out = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(parts[i])) return null
    const n = Number(parts[i])
    if (n > 255) return null
    out[i] = n
  }
  return out
}

function parseIpv6(text: string): Uint8Array | null {
  const halves = text.split('::')
  if (halves.length > 2) return null
  const groupsOf = (part: string): number[] | null => {
    if (part === '') return []
    const words: number[] = []
    const pieces = part.split(':')
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIpv4(piece)
        if (!v4) return null
        words.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3])
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null
        words.push(parseInt(piece, 16))
      }
    }
    return words
  }
  const head = groupsOf(halves[0])
  const tail = halves.length === 2 ? groupsOf(halves[1]) : []
  if (!head || !tail) return null
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail]
  const out = new Uint8Array(16)
  words.forEach((w, i) => {
    out[2 * i] = w >> 8
    out[2 * i + 1] = w & 0xff
  })
  return out
}

/** Canonical text of 4 or 16 IP octets (IPv6 as RFC 5952: lowercase, longest zero run as `::`); null otherwise. */
export function ipFromOctets(octets: Uint8Array): string | null {
  if (octets.length === 4) return Array.from(octets).join('.')
  if (octets.length !== 16) return null
  const words: number[] = []
  for (let i = 0; i < 16; i += 2) words.push((octets[i] << 8) | octets[i + 1])
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

/** Whether `text` is an IP address (v4 or v6, brackets allowed) rather than a DNS name. */
export function isIpAddress(text: string): boolean {
  return ipToOctets(text) !== null
}

/** The canonical form of an IP address text (see {@link ipFromOctets}), or null when it is not one. */
export function canonicalIp(text: string): string | null {
  const octets = ipToOctets(text)
  return octets ? ipFromOctets(octets) : null
}
