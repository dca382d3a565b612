/** src/lib/pem.ts: PEM armour, bundles and 64-character base64 lines (RFC 7468). */
import { describe, expect, it } from 'bun:test'
import { decodePem, encodePem, fromBase64, PemFormatError, splitPemBundle, toBase64Lines } from '../../../src/lib/pem.ts'

const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7) & 0xff)

describe('toBase64Lines', () => {
  it('breaks base64 into 64-character lines joined by \\n with no trailing newline', () => {
    const text = toBase64Lines(bytes(200))
    const lines = text.split('\n')
    expect(lines.slice(0, -1).every((l) => l.length === 64)).toBe(true)
    expect(lines.at(-1)!.length).toBeLessThanOrEqual(64)
    expect(text.endsWith('\n')).toBe(false)
    expect(Buffer.from(lines.join(''), 'base64')).toEqual(Buffer.from(bytes(200)))
  })

  it('gives a single line for short input and an empty string for no input', () => {
    expect(toBase64Lines(new Uint8Array([1, 2, 3]))).toBe('AQID')
    expect(toBase64Lines(new Uint8Array())).toBe('')
  })
})

describe('fromBase64', () => {
  it('decodes across line breaks and surrounding whitespace', () => {
    expect(fromBase64(' AQ\r\nID \n')).toEqual(new Uint8Array([1, 2, 3]))
  })

  it('rejects characters outside the alphabet and truncated input', () => {
    expect(() => fromBase64('AQ!D')).toThrow(PemFormatError)
    expect(() => fromBase64('AQI')).toThrow(PemFormatError)
  })
})

describe('encodePem and decodePem', () => {
  it('round-trips a block with its type and bytes', () => {
    const pem = encodePem('CERTIFICATE', bytes(100))
    expect(pem.startsWith('-----BEGIN CERTIFICATE-----\n')).toBe(true)
    expect(pem.endsWith('\n-----END CERTIFICATE-----\n')).toBe(true)
    const [block] = decodePem(pem)
    expect(block.type).toBe('CERTIFICATE')
    expect(block.der).toEqual(bytes(100))
  })

  it('reads every block of a bundle in order, ignoring text between blocks and CRLF line ends', () => {
    const text = `subject=CN = a\r\n${encodePem('CERTIFICATE', bytes(10)).replace(/\n/g, '\r\n')}junk\n${encodePem('PRIVATE KEY', bytes(20))}`
    const blocks = decodePem(text)
    expect(blocks.map((b) => b.type)).toEqual(['CERTIFICATE', 'PRIVATE KEY'])
    expect(blocks[1].der).toEqual(bytes(20))
  })

  it('returns no blocks for text without armour', () => {
    expect(decodePem('hello')).toEqual([])
    expect(decodePem('')).toEqual([])
  })

  it('keeps RFC 1421 headers apart from the body', () => {
    const text = `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAQID\n-----END RSA PRIVATE KEY-----\n`
    const [block] = decodePem(text)
    expect(block.headers['Proc-Type']).toBe('4,ENCRYPTED')
    expect(block.der).toEqual(new Uint8Array([1, 2, 3]))
  })

  it('rejects a block without an END line', () => {
    expect(() => decodePem('-----BEGIN CERTIFICATE-----\nAQID\n')).toThrow(PemFormatError)
  })

  it('rejects an END label that differs from the BEGIN label', () => {
    expect(() => decodePem('-----BEGIN CERTIFICATE-----\nAQID\n-----END PRIVATE KEY-----\n')).toThrow(PemFormatError)
  })

  it('rejects a body that is not base64', () => {
    expect(() => decodePem('-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n')).toThrow(PemFormatError)
  })
})

describe('splitPemBundle', () => {
  it('splits a concatenation back into its blocks', () => {
    const a = encodePem('CERTIFICATE', bytes(70))
    const b = encodePem('CERTIFICATE', bytes(30))
    expect(splitPemBundle(a + b)).toEqual([a, b])
  })

  it('re-armours blocks whose lines were not 64 characters long', () => {
    const b64 = Buffer.from(bytes(90)).toString('base64')
    const odd = `-----BEGIN CERTIFICATE-----\n${b64.slice(0, 10)}\n${b64.slice(10)}\n-----END CERTIFICATE-----`
    expect(splitPemBundle(odd)).toEqual([encodePem('CERTIFICATE', bytes(90))])
  })
})
