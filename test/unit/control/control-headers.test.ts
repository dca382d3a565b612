// The typed header values of the channel, with vectors written by hand from router-control-plane.md §2.1 and §2.6:
// bool, u16/u32/u64 (little-endian), string slice, u32→bytes map, string→string map (u32 counts and lengths), the
// decoders' limits (128 entries, 8192 bytes an entry), and capability masks (big-endian big integers).
import { describe, expect, it } from 'bun:test'
import {
  decodeCapabilities,
  decodeStringSlice,
  decodeStringToStringMap,
  decodeU32ToBytesMap,
  encodeBool,
  encodeCapabilities,
  encodeI32,
  encodeStringSlice,
  encodeStringToStringMap,
  encodeU16,
  encodeU32,
  encodeU32ToBytesMap,
  encodeU64,
  hasCapability,
  HeaderError,
  readBool,
  readI32,
  readU16,
  readU32,
  readU64,
} from '../../../src/control/wire/control-headers.ts'

const b = (...x: number[]) => Uint8Array.from(x)

describe('scalar headers', () => {
  it('encodes bool, u16, u32, int32 and u64 little-endian', () => {
    expect([...encodeBool(true)]).toEqual([1])
    expect([...encodeBool(false)]).toEqual([0])
    expect([...encodeU16(0x0102)]).toEqual([2, 1])
    expect([...encodeU32(0x01020304)]).toEqual([4, 3, 2, 1])
    expect([...encodeI32(-1)]).toEqual([0xff, 0xff, 0xff, 0xff])
    expect([...encodeU64(0x0102030405060708n)]).toEqual([8, 7, 6, 5, 4, 3, 2, 1])
  })

  it('reads a bool as true only when its first byte is 1, and a number only at its exact length', () => {
    const h = new Map([
      [1, b(1)],
      [2, b(2)],
      [3, b()],
      [4, b(4, 3, 2, 1)],
      [5, b(4, 3, 2)],
      [6, b(8, 7, 6, 5, 4, 3, 2, 1)],
      [7, b(2, 1)],
      [8, b(0xfe, 0xff, 0xff, 0xff)],
    ])
    expect([readBool(h, 1), readBool(h, 2), readBool(h, 3), readBool(h, 99)]).toEqual([true, false, false, undefined])
    expect(readU32(h, 4)).toBe(0x01020304)
    expect(readU32(h, 5)).toBeUndefined()
    expect(readU64(h, 6)).toBe(0x0102030405060708n)
    expect(readU16(h, 7)).toBe(0x0102)
    expect(readI32(h, 8)).toBe(-2)
  })
})

describe('string slice', () => {
  it('is a u32 count then u32 length and bytes per item; empty is an empty value', () => {
    expect([...encodeStringSlice(['ab', 'c'])]).toEqual([2, 0, 0, 0, 2, 0, 0, 0, 0x61, 0x62, 1, 0, 0, 0, 0x63])
    expect(encodeStringSlice([]).length).toBe(0)
    expect(decodeStringSlice(b(2, 0, 0, 0, 2, 0, 0, 0, 0x61, 0x62, 1, 0, 0, 0, 0x63))).toEqual(['ab', 'c'])
    expect(decodeStringSlice(b())).toEqual([])
  })
  it('refuses more than 128 items, an item over 8192 bytes and an item past the value', () => {
    expect(() => decodeStringSlice(b(129, 0, 0, 0))).toThrow(HeaderError)
    expect(() => decodeStringSlice(b(1, 0, 0, 0, 1, 0x20, 0, 0))).toThrow(HeaderError)
    expect(() => decodeStringSlice(b(1, 0, 0, 0, 5, 0, 0, 0, 0x61))).toThrow(HeaderError)
    expect(() => decodeStringSlice(b(1, 0, 0))).toThrow(HeaderError)
  })
})

describe('u32→bytes map', () => {
  it('is a u32 count then key, length and bytes per entry', () => {
    const m = new Map([[1003, b(0xaa, 0xbb)]])
    expect([...encodeU32ToBytesMap(m)]).toEqual([1, 0, 0, 0, 0xeb, 0x03, 0, 0, 2, 0, 0, 0, 0xaa, 0xbb])
    const back = decodeU32ToBytesMap(b(2, 0, 0, 0, 0xeb, 0x03, 0, 0, 2, 0, 0, 0, 0xaa, 0xbb, 8, 0, 0, 0, 0, 0, 0, 0))
    expect([...back.keys()]).toEqual([1003, 8])
    expect([...back.get(1003)!]).toEqual([0xaa, 0xbb])
    expect(back.get(8)!.length).toBe(0)
  })
  it('refuses a truncated entry', () => {
    expect(() => decodeU32ToBytesMap(b(1, 0, 0, 0, 1, 0, 0, 0))).toThrow(HeaderError)
    expect(() => decodeU32ToBytesMap(b(1, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 1))).toThrow(HeaderError)
  })
})

describe('string→string map', () => {
  it('is a u32 count then length-prefixed key and value per entry', () => {
    const m = new Map([['serviceId', 's1']])
    const wire = b(1, 0, 0, 0, 9, 0, 0, 0, ...new TextEncoder().encode('serviceId'), 2, 0, 0, 0, 0x73, 0x31)
    expect([...encodeStringToStringMap(m)]).toEqual([...wire])
    expect(decodeStringToStringMap(wire)).toEqual(m)
    expect(() => decodeStringToStringMap(b(1, 0, 0, 0, 1, 0, 0, 0, 0x61))).toThrow(HeaderError)
  })
})

describe('capability masks', () => {
  it('are big-endian without leading zero bytes: the controller\'s bit 6 is 40, a v2 router\'s mask has bit 62', () => {
    expect([...encodeCapabilities([6])]).toEqual([0x40])
    expect([...encodeCapabilities([1, 2, 3, 4, 5, 6])]).toEqual([0x7e])
    expect(encodeCapabilities([]).length).toBe(0)
    const router = decodeCapabilities(b(0x40, 0, 0, 0, 0, 0, 0, 0x76))
    expect([1, 2, 4, 5, 6, 62].every((bit) => hasCapability(router, bit))).toBe(true)
    expect(hasCapability(router, 3)).toBe(false)
    expect(decodeCapabilities(undefined)).toBe(0n)
  })
})
