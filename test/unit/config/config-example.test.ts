// packaging/edgeplane.example.yml cannot go stale: every key of the config file schema, every environment variable
// config.ts reads and every flag of `edgeplane run` appears in it, and the file (with its commented-out keys
// switched on too) is a valid configuration.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigFileSchema, resolveConfig } from '../../../src/config/config.ts'

const ROOT = join(import.meta.dir, '..', '..', '..')
const EXAMPLE = join(ROOT, 'packaging', 'edgeplane.example.yml')
const text = readFileSync(EXAMPLE, 'utf8')
const dir = mkdtempSync(join(tmpdir(), 'edgeplane-example-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('packaging/edgeplane.example.yml', () => {
  it('names every key of the config file, as a setting or a commented-out one', () => {
    const keys = Object.keys(ConfigFileSchema.properties)
    expect(keys.length).toBeGreaterThan(5)
    for (const key of keys) expect(text).toMatch(new RegExp(`^(?:# )?${key}:`, 'm'))
  })

  it('names every environment variable config.ts reads and every flag of edgeplane run', () => {
    const configSource = readFileSync(join(ROOT, 'src', 'config', 'config.ts'), 'utf8')
    const envs = new Set([...configSource.matchAll(/\benv\.(EDGEPLANE_[A-Z_]+)/g)].map((m) => m[1]))
    expect(envs.size).toBeGreaterThan(5)
    for (const env of [...envs, 'EDGEPLANE_CONFIG']) expect(text).toContain(env)
    const mainSource = readFileSync(join(ROOT, 'src', 'main.ts'), 'utf8')
    const runOptions = mainSource.slice(mainSource.indexOf('async function run('), mainSource.indexOf('strict: true'))
    const flags = [...runOptions.matchAll(/^\s+'?([a-z][a-z-]*)'?: \{ type: '(?:string|boolean)'/gm)].map((m) => m[1]).filter((f) => f !== 'help')
    expect(flags).toContain('data')
    for (const flag of flags) expect(text).toContain(flag === 'config' ? '--config' : `flag --${flag}`)
  })

  it('is a valid configuration as shipped and with every commented-out key switched on', () => {
    const shipped = join(dir, 'shipped.yml')
    writeFileSync(shipped, text)
    expect(resolveConfig({ config: shipped }, {}).listenPort).toBe(1280)
    const all = join(dir, 'all.yml')
    writeFileSync(all, text.replace(/^# ([a-z][a-zA-Z]*: .*)$/gm, '$1'))
    const c = resolveConfig({ config: all }, {})
    expect(c.hostname).toBe('ctrl-1')
    expect(c.adminPassword).toBe('change-me-now')
  })
})

describe('packaging/edgeplane.service', () => {
  const unit = readFileSync(join(ROOT, 'packaging', 'edgeplane.service'), 'utf8')
  const directive = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1])

  it('runs `edgeplane run` with the example config and a data directory of its own, hardened', () => {
    expect(directive('ExecStart')).toEqual(['/usr/local/bin/edgeplane run --config /etc/edgeplane/edgeplane.yml'])
    expect(directive('Environment')).toEqual(['EDGEPLANE_DATA=/var/lib/edgeplane'])
    expect(directive('StateDirectory')).toEqual(['edgeplane'])
    expect(directive('StateDirectoryMode')).toEqual(['0700'])
    for (const [name, value] of [['NoNewPrivileges', 'yes'], ['ProtectSystem', 'strict'], ['DynamicUser', 'yes'], ['ProtectHome', 'yes'], ['UMask', '0077']]) {
      expect(directive(name)).toEqual([value])
    }
    // the JIT needs writable executable memory
    expect(directive('MemoryDenyWriteExecute')).toEqual([])
  })
})
