/**
 * PEM armour (RFC 7468): encode and decode typed DER blocks, split bundles, and base64 in 64-character lines.
 * Pure text ↔ bytes; knows nothing of what the DER means.
 */

/** One decoded PEM block: its label (`CERTIFICATE`, `PRIVATE KEY`, …) and the DER bytes inside. */
export interface PemBlock {
  type: string
  der: Uint8Array
  /** RFC 1421 headers (`Proc-Type`, `DEK-Info`) when present; an encrypted legacy key has them. */
  headers: Record<string, string>
}

/** Malformed PEM armour: an unterminated block, mismatched labels, or bad base64 inside. */
export class PemFormatError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PemFormatError'
  }
}

const BEGIN = /-----BEGIN ([A-Z0-9 ]+)-----/g
const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Standard base64 of `bytes` broken into lines of `width` characters joined by `\n`, with no trailing newline.
 * @see RFC 7468 §2 (64-character lines)
 */
export function toBase64Lines(bytes: Uint8Array, width = 64): string {
  const b64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  const lines: string[] = []
  for (let i = 0; i < b64.length; i += width) lines.push(b64.slice(i, i + width))
  return lines.join('\n')
}

/**
 * Decodes standard base64, ignoring all whitespace (line breaks included).
 * @throws PemFormatError on characters outside the alphabet or a length that is not a multiple of 4.
 */
export function fromBase64(text: string): Uint8Array {
  const compact = text.replace(/\s+/g, '')
  if (compact.length % 4 !== 0 || !BASE64_BODY.test(compact)) throw new PemFormatError('invalid base64 content')
  return new Uint8Array(Buffer.from(compact, 'base64'))
}

/** One PEM block of `type` around `der`: 64-character base64 lines, ending with a newline. */
export function encodePem(type: string, der: Uint8Array): string {
  return `-----BEGIN ${type}-----\n${toBase64Lines(der)}\n-----END ${type}-----\n`
}

/**
 * Every PEM block in `text`, in order. Text outside blocks (comments, openssl's `subject=` lines) is ignored.
 * CRLF line ends and surrounding whitespace are accepted.
 * @returns an empty array when `text` holds no `-----BEGIN` line at all.
 * @throws PemFormatError on an unterminated block, an END label that differs from its BEGIN, or bad base64.
 */
export function decodePem(text: string): PemBlock[] {
  const blocks: PemBlock[] = []
  BEGIN.lastIndex = 0
  let match: RegExpExecArray | null
  while ((match = BEGIN.exec(text)) !== null) {
    const type = match[1]
    const bodyStart = match.index + match[0].length
    const endMarker = `-----END ${type}-----`
    const end = text.indexOf('-----END ', bodyStart)
    if (end < 0) throw new PemFormatError(`PEM block ${type} has no END line`)
    if (!text.startsWith(endMarker, end)) throw new PemFormatError(`PEM block ${type} ends with a different label`)
    const { headers, body } = splitHeaders(text.slice(bodyStart, end))
    blocks.push({ type, der: fromBase64(body), headers })
    BEGIN.lastIndex = end + endMarker.length
  }
  return blocks
}

/** Separates RFC 1421 `Name: value` header lines (ended by a blank line) from the base64 body. */
function splitHeaders(raw: string): { headers: Record<string, string>; body: string } {
  const lines = raw.replace(/\r\n?/g, '\n').split('\n')
  const headers: Record<string, string> = {}
  let i = 0
  while (i < lines.length && lines[i].trim() === '') i++
  if (i < lines.length && /^[A-Za-z-]+:/.test(lines[i])) {
    while (i < lines.length && lines[i].trim() !== '') {
      const colon = lines[i].indexOf(':')
      headers[lines[i].slice(0, colon).trim()] = lines[i].slice(colon + 1).trim()
      i++
    }
  }
  return { headers, body: lines.slice(i).join('\n') }
}

/**
 * Splits a bundle into one normalised PEM text per block (re-armoured with 64-character lines),
 * so `splitPemBundle(a + b)` gives `[a, b]` for blocks we wrote ourselves. RFC 1421 headers are dropped.
 * @throws PemFormatError as {@link decodePem}.
 */
export function splitPemBundle(text: string): string[] {
  return decodePem(text).map((b) => encodePem(b.type, b.der))
}
