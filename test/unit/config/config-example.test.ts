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

describe('packaging/edgeplane-cluster.conf and packaging/etcd.default.example', () => {
  const dropIn = readFileSync(join(ROOT, 'packaging', 'edgeplane-cluster.conf'), 'utf8')
  const etcdDefault = readFileSync(join(ROOT, 'packaging', 'etcd.default.example'), 'utf8')
  const sections = (unit: string) => {
    const out = new Map<string, string[]>()
    let section = ''
    for (const line of unit.split('\n')) {
      const head = /^\[(\w+)\]$/.exec(line)
      if (head) section = head[1]
      else if (/^[A-Za-z]+=/.test(line)) out.set(section, [...(out.get(section) ?? []), line])
    }
    return out
  }

  it('sets a cluster node through the environment that config.ts accepts, and retries a start without a limit', () => {
    const s = sections(dropIn)
    const env = Object.fromEntries(
      (s.get('Service') ?? []).filter((l) => l.startsWith('Environment=')).map((l) => l.slice('Environment='.length).split(/=(.*)/s).slice(0, 2)),
    )
    expect(Object.keys(env).sort()).toEqual(['EDGEPLANE_CLUSTER_ENDPOINTS', 'EDGEPLANE_NODE_NAME'])
    const c = resolveConfig({}, env)
    expect(c.cluster?.endpoints).toHaveLength(3)
    expect(c.cluster?.nodeName).toBe('ctrl-1')
    // StartLimitIntervalSec belongs to [Unit] (systemd ignores it in [Service])
    expect(s.get('Unit')).toContain('StartLimitIntervalSec=0')
    expect(s.get('Service')).toContain('RestartSec=5s')
  })

  it("describes one member of the three whose client URLs the drop-in lists, with etcd's auto-compaction off", () => {
    const vars = Object.fromEntries([...etcdDefault.matchAll(/^(ETCD_[A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]))
    expect(vars.ETCD_AUTO_COMPACTION_RETENTION).toBe('0')
    const members = vars.ETCD_INITIAL_CLUSTER.split(',').map((m: string) => m.split('=')[0])
    expect(members).toEqual(['etcd-1', 'etcd-2', 'etcd-3'])
    expect(members).toContain(vars.ETCD_NAME)
    expect(vars.ETCD_INITIAL_CLUSTER).toContain(`${vars.ETCD_NAME}=${vars.ETCD_INITIAL_ADVERTISE_PEER_URLS}`)
    expect(dropIn).toContain(vars.ETCD_ADVERTISE_CLIENT_URLS)
    expect(vars.ETCD_LISTEN_CLIENT_URLS.split(',')).toContain(vars.ETCD_ADVERTISE_CLIENT_URLS)
  })
})
