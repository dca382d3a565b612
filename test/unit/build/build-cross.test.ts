/**
 * The cross build of scripts/build.ts: the other architecture's addons are installed at the versions the libraries
 * pin and resolve to ELF files of that architecture, and the output check tells the architectures apart.
 * (The compiled linux-arm64 binary itself cannot run here; `bun run build` checks its ELF header.)
 */
import { describe, expect, it } from 'bun:test'
import { argon2AddonPath, assertElfFor, installCrossAddons, lmdbAddonPath, msgpackrExtractAddonPath, NativeAddonError } from '../../../scripts/build.ts'

const other = process.arch === 'arm64' ? 'x64' : 'arm64'
const platform = { platform: 'linux', arch: other }

describe('cross build addons', () => {
  it(`installs the linux-${other} addons and each is an ELF file for ${other}`, () => {
    const dir = installCrossAddons(other)
    for (const addon of [lmdbAddonPath(dir, platform), msgpackrExtractAddonPath(dir, platform), argon2AddonPath(dir, platform)]) {
      expect(addon).toContain(`linux-${other}`)
      expect(() => assertElfFor(addon, other)).not.toThrow()
      expect(() => assertElfFor(addon, process.arch as 'x64' | 'arm64')).toThrow(NativeAddonError)
    }
    // a second call finds them installed
    expect(installCrossAddons(other)).toBe(dir)
  }, 60_000)

  it('refuses a file that is no executable of the architecture', () => {
    expect(() => assertElfFor(process.execPath, process.arch as 'x64' | 'arm64')).not.toThrow()
    expect(() => assertElfFor(process.execPath, other)).toThrow(NativeAddonError)
    expect(() => assertElfFor(import.meta.path, other)).toThrow('ELF machine none')
  })
})
