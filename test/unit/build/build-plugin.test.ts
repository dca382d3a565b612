/**
 * The native-addon rewrites of scripts/build.ts, run on the real loader sources in node_modules: each must
 * become a static require of the installed addon, and a loader that no longer matches must fail the build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  NativeAddonError,
  nativeAddonPlugin,
  resolveLoaders,
  rewriteArgon2Loader,
  rewriteLmdbLoader,
  rewriteMsgpackrExtractLoader,
  type RewriteLog,
} from '../../../scripts/build.ts'

const loaders = resolveLoaders()
const source = (path: string): string => readFileSync(path, 'utf8')
const staticRequire = (addon: string): string => `require(${JSON.stringify(addon)})`

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'edgeplane-build-test-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

describe('resolveLoaders', () => {
  it('finds each loader and a .node addon for this platform in node_modules', () => {
    for (const { loaders: files, addon } of Object.values(loaders)) {
      for (const file of files) expect(source(file).length).toBeGreaterThan(0)
      expect(addon).toEndWith('.node')
      expect(readFileSync(addon).subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46])) // ELF
    }
    expect(loaders.lmdb.addon).toEndWith('node.napi.glibc.node')
    expect(loaders['msgpackr-extract'].addon).toEndWith('node.napi.glibc.node')
  })
})

describe('rewriteLmdbLoader', () => {
  const [nativeJs, indexCjs] = loaders.lmdb.loaders
  const addon = loaders.lmdb.addon

  it('case=native.js: replaces loadNAPI(dirName) with a static require of the addon', () => {
    const out = rewriteLmdbLoader(source(nativeJs), addon)
    expect(out).toContain(`export let nativeAddon = ${staticRequire(addon)};`)
    expect(out).not.toContain('loadNAPI(dirName)')
  })

  it('case=dist/index.cjs: replaces the interop form loadNAPI__default["default"](dirName)', () => {
    const out = rewriteLmdbLoader(source(indexCjs), addon)
    expect(out).toContain(`let nativeAddon = ${staticRequire(addon)};`)
    expect(out).not.toMatch(/loadNAPI\w*(\[["']default["']\])?\(dirName\)/)
  })

  it('changes nothing else in the file', () => {
    const before = source(nativeJs)
    const out = rewriteLmdbLoader(before, addon)
    expect(out.replace(staticRequire(addon), 'loadNAPI(dirName)')).toBe(before)
  })

  it('throws NativeAddonError naming the file when the pattern is gone', () => {
    const changed = source(nativeJs).replace('loadNAPI(dirName)', 'loadNAPI(dirName, { prebuilds: true })')
    expect(() => rewriteLmdbLoader(changed, addon, 'lmdb/native.js')).toThrow(NativeAddonError)
    expect(() => rewriteLmdbLoader(changed, addon, 'lmdb/native.js')).toThrow(/lmdb\/native\.js: expected exactly one match/)
  })

  it('throws when the pattern occurs twice, rather than guessing which one loads the addon', () => {
    const twice = source(nativeJs) + '\nexport let again = loadNAPI(dirName);\n'
    expect(() => rewriteLmdbLoader(twice, addon)).toThrow(/found 2/)
  })

  it('inserts a path containing $ literally', () => {
    expect(rewriteLmdbLoader('x = loadNAPI(dirName)', "/opt/$&/a'b.node")).toBe(`x = require("/opt/$&/a'b.node")`)
  })
})

describe('rewriteMsgpackrExtractLoader', () => {
  const [indexJs] = loaders['msgpackr-extract'].loaders
  const addon = loaders['msgpackr-extract'].addon

  it('turns index.js into a static require of the addon', () => {
    const out = rewriteMsgpackrExtractLoader(source(indexJs), addon)
    expect(out.trim()).toBe(`module.exports = ${staticRequire(addon)};`)
  })

  it('the rewritten module loads and exports extractStrings', () => {
    const file = join(tmp, 'msgpackr-extract.cjs')
    writeFileSync(file, rewriteMsgpackrExtractLoader(source(indexJs), addon))
    const mod = createRequire(file)(file) as { extractStrings?: unknown }
    expect(typeof mod.extractStrings).toBe('function')
  })

  it('throws NativeAddonError when the pattern is gone', () => {
    expect(() => rewriteMsgpackrExtractLoader("module.exports = require('./build/Release/extract.node')", addon)).toThrow(
      NativeAddonError,
    )
  })
})

describe('rewriteArgon2Loader', () => {
  const [indexJs] = loaders.argon2.loaders
  const addon = loaders.argon2.addon

  it('makes requireNative() return the addon before any platform probing', () => {
    const out = rewriteArgon2Loader(source(indexJs), addon)
    expect(out).toContain(`function requireNative() {\n  return ${staticRequire(addon)}\n`)
    expect(addon).toMatch(/argon2-linux-(x64|arm64)-gnu[\\/]argon2\.linux-(x64|arm64)-gnu\.node$/)
  })

  it('the rewritten module hashes and verifies without NAPI_RS_* help', async () => {
    const file = join(tmp, 'argon2.cjs')
    writeFileSync(file, rewriteArgon2Loader(source(indexJs), addon))
    const argon2 = createRequire(file)(file) as {
      hash: (p: string) => Promise<string>
      verify: (h: string, p: string) => Promise<boolean>
    }
    const h = await argon2.hash('correct horse')
    expect(h).toStartWith('$argon2id$')
    expect(await argon2.verify(h, 'correct horse')).toBe(true)
    expect(await argon2.verify(h, 'wrong horse')).toBe(false)
  })

  it('throws NativeAddonError when requireNative is gone', () => {
    const changed = source(indexJs).replace('function requireNative()', 'function loadNativeBinding()')
    expect(() => rewriteArgon2Loader(changed, addon)).toThrow(NativeAddonError)
  })
})

describe('nativeAddonPlugin', () => {
  it('rewrites the loaders that a bundle of lmdb and argon2 actually loads', async () => {
    const entry = join(tmp, 'entry.ts')
    const lmdbIndex = join(loaders.lmdb.loaders[0], '..', 'node-index.js')
    writeFileSync(
      entry,
      `import { open } from ${JSON.stringify(lmdbIndex)}\n` +
        `import { hash } from ${JSON.stringify(loaders.argon2.loaders[0])}\n` +
        'console.log(typeof open, typeof hash)\n',
    )
    const log: RewriteLog = new Map()
    const result = await Bun.build({
      entrypoints: [entry],
      outdir: join(tmp, 'out'),
      target: 'bun',
      format: 'esm',
      plugins: [nativeAddonPlugin(log)],
      throw: false,
    })
    expect(result.logs.filter((l) => l.level === 'error').map(String)).toEqual([])
    expect(result.success).toBe(true)
    const rewritten = new Map([...log.values()].map((v) => [v.loader, v.addon]))
    expect(rewritten.get('lmdb')).toBe(loaders.lmdb.addon)
    expect(rewritten.get('msgpackr-extract')).toBe(loaders['msgpackr-extract'].addon)
    expect(rewritten.get('argon2')).toBe(loaders.argon2.addon)
    const nodeFiles = result.outputs.filter((o) => o.path.endsWith('.node'))
    expect(nodeFiles.length).toBeGreaterThanOrEqual(3)
  })
})
