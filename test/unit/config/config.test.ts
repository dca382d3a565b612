// Settings precedence: flags, then environment, then the YAML file, then defaults; bad files fail clearly.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ConfigError, defaultAdvertise, formatHostPort, resolveClusterAccess, resolveConfig } from '../../../src/config/config.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

describe('resolveConfig', () => {
  it('uses the defaults when nothing is given', () => {
    const c = resolveConfig({}, {})
    expect(c.dataDir).toBe(resolve('./data'))
    expect([c.listenHost, c.listenPort]).toEqual(['127.0.0.1', 1280])
    expect(c.adminUsername).toBe('admin')
    expect(c.adminPassword).toBeUndefined()
    expect(c.sessionTimeoutMs).toBe(30 * 60_000)
    expect(c.sans).toEqual([])
  })

  it('prefers flags over environment over file', () => {
    const cfg = file('a.yml', 'data: /from/file\nlisten: 127.0.0.1:3000\nadminUsername: fileadmin\nsans: [a.example]\n')
    const fromFile = resolveConfig({ config: cfg }, {})
    expect(fromFile.dataDir).toBe('/from/file')
    expect(fromFile.listenPort).toBe(3000)
    expect(fromFile.sans).toEqual(['a.example'])
    const fromEnv = resolveConfig({ config: cfg }, { EDGEPLANE_DATA: '/from/env', EDGEPLANE_SANS: 'b.example, 10.0.0.1' })
    expect(fromEnv.dataDir).toBe('/from/env')
    expect(fromEnv.sans).toEqual(['b.example', '10.0.0.1'])
    const fromFlag = resolveConfig({ config: cfg, data: '/from/flag', sans: ['c.example'] }, { EDGEPLANE_DATA: '/from/env' })
    expect(fromFlag.dataDir).toBe('/from/flag')
    expect(fromFlag.sans).toEqual(['c.example'])
  })

  it('parses session timeouts as durations and falls back below one minute', () => {
    expect(resolveConfig({ sessionTimeout: '1h30m' }, {}).sessionTimeoutMs).toBe(90 * 60_000)
    expect(() => resolveConfig({}, { EDGEPLANE_SESSION_TIMEOUT: '10s' })).toThrow("is shorter than its minimum 1m")
    expect(resolveConfig({ sessionTimeout: '1m' }, {}).sessionTimeoutMs).toBe(60_000)
    expect(() => resolveConfig({ sessionTimeout: 'soon' }, {})).toThrow(ConfigError)
  })

  it('reads the advertised address from flag, environment or file, and leaves it unset by default', () => {
    expect(resolveConfig({}, {}).advertise).toBeUndefined()
    const cfg = file('adv.yml', 'advertise: ctrl.example:443\n')
    expect(resolveConfig({ config: cfg }, {}).advertise).toEqual({ host: 'ctrl.example', port: 443 })
    expect(resolveConfig({ config: cfg }, { EDGEPLANE_ADVERTISE: 'env.example:8443' }).advertise).toEqual({ host: 'env.example', port: 8443 })
    expect(resolveConfig({ advertise: '[2001:db8::1]:1280' }, { EDGEPLANE_ADVERTISE: 'env.example:8443' }).advertise).toEqual({ host: '2001:db8::1', port: 1280 })
    expect(() => resolveConfig({ advertise: 'ctrl.example' }, {})).toThrow(ConfigError)
  })

  it('advertises the listen address by default, localhost for a wildcard bind', () => {
    expect(defaultAdvertise({ host: '10.1.2.3', port: 1280 })).toEqual({ host: '10.1.2.3', port: 1280 })
    expect(defaultAdvertise({ host: '0.0.0.0', port: 1280 })).toEqual({ host: 'localhost', port: 1280 })
    expect(defaultAdvertise({ host: '::', port: 443 })).toEqual({ host: 'localhost', port: 443 })
    expect(formatHostPort({ host: '::1', port: 443 })).toBe('[::1]:443')
  })

  it('parses the enrollment duration, 180 minutes by default and below 5 minutes', () => {
    expect(resolveConfig({}, {}).enrollmentDurationMs).toBe(180 * 60_000)
    expect(resolveConfig({ enrollmentDuration: '24h' }, {}).enrollmentDurationMs).toBe(24 * 3_600_000)
    expect(() => resolveConfig({}, { EDGEPLANE_ENROLLMENT_DURATION: '1m' })).toThrow("is shorter than its minimum 5m")
    expect(resolveConfig({ config: file('ed.yml', 'enrollmentDuration: 10m\n') }, {}).enrollmentDurationMs).toBe(10 * 60_000)
    expect(() => resolveConfig({ enrollmentDuration: 'later' }, {})).toThrow(ConfigError)
  })

  it('reads the TOTP issuer from flag, environment or file, openziti.io by default, and refuses a blank one', () => {
    expect(resolveConfig({}, {}).totpIssuer).toBe('openziti.io')
    expect(resolveConfig({ totpIssuer: 'flag.example' }, { EDGEPLANE_TOTP_ISSUER: 'env.example' }).totpIssuer).toBe('flag.example')
    expect(resolveConfig({}, { EDGEPLANE_TOTP_ISSUER: 'env.example' }).totpIssuer).toBe('env.example')
    expect(resolveConfig({ config: file('ti.yml', 'totpIssuer: Example Corp\n') }, {}).totpIssuer).toBe('Example Corp')
    expect(() => resolveConfig({ totpIssuer: '  ' }, {})).toThrow(ConfigError)
  })

  it('takes the snapshot directory from flag, environment or file, absolute; unset by default', () => {
    expect(resolveConfig({}, {}).snapshotDir).toBeUndefined()
    expect(resolveConfig({ snapshotDir: '/flag/snaps' }, { EDGEPLANE_SNAPSHOT_DIR: '/env/snaps' }).snapshotDir).toBe('/flag/snaps')
    expect(resolveConfig({}, { EDGEPLANE_SNAPSHOT_DIR: '/env/snaps' }).snapshotDir).toBe('/env/snaps')
    expect(resolveConfig({ config: file('sd.yml', 'snapshotDir: snaps\n') }, {}).snapshotDir).toBe(resolve('snaps'))
  })

  it('accepts IPv6 listen addresses in brackets', () => {
    const c = resolveConfig({ listen: '[::1]:8443' }, {})
    expect([c.listenHost, c.listenPort]).toEqual(['::1', 8443])
  })

  const bad: [string, () => unknown][] = [
    ['a listen address without a port', () => resolveConfig({ listen: 'localhost' }, {})],
    ['a port above 65535', () => resolveConfig({ listen: '127.0.0.1:70000' }, {})],
    ['a short admin password', () => resolveConfig({ adminPassword: 'abc' }, {})],
    ['a short admin username', () => resolveConfig({ adminUsername: 'abc' }, {})],
    ['an unknown key in the file', () => resolveConfig({ config: file('b.yml', 'dta: /x\n') }, {})],
    ['a wrong type in the file', () => resolveConfig({ config: file('c.yml', 'listen: 1280\n') }, {})],
    ['a file that is not YAML', () => resolveConfig({ config: file('d.yml', 'a: [1,\n') }, {})],
    ['a missing file', () => resolveConfig({ config: join(dir, 'missing.yml') }, {})],
  ]
  for (const [what, fn] of bad) {
    it(`refuses ${what} with a ConfigError`, () => {
      expect(fn).toThrow(ConfigError)
    })
  }
})

describe('operations settings (issue 12, part G)', () => {
  it('case=log level and metrics address: flag, then environment, then file; default info and none', () => {
    expect(resolveConfig({}, {})).toMatchObject({ logLevel: 'info', metricsListen: undefined })
    const cfg = file('ops.yml', 'logLevel: warn\nmetricsListen: 127.0.0.1:9090\n')
    expect(resolveConfig({ config: cfg }, {})).toMatchObject({ logLevel: 'warn', metricsListen: { host: '127.0.0.1', port: 9090 } })
    expect(resolveConfig({ config: cfg }, { EDGEPLANE_LOG_LEVEL: 'error', EDGEPLANE_METRICS_LISTEN: '[::1]:9100' })).toMatchObject({
      logLevel: 'error',
      metricsListen: { host: '::1', port: 9100 },
    })
    expect(resolveConfig({ config: cfg, logLevel: 'debug' }, { EDGEPLANE_LOG_LEVEL: 'error' }).logLevel).toBe('debug')
    expect(() => resolveConfig({ logLevel: 'verbose' }, {})).toThrow("log level 'verbose' is not one of debug, info, warn, error")
    expect(() => resolveConfig({ metricsListen: 'nowhere' }, {})).toThrow(ConfigError)
  })

  it('case=rate limits from the file: durations parsed, bounds checked, unknown keys refused', () => {
    const cfg = file(
      'limits.yml',
      'authRateLimiter: {minSize: 10, maxSize: 20}\ncommandRateLimiter: {queueSize: 50}\nloginThrottle: {freeFailures: 3, baseDelay: 2s, maxDelay: 5m, forgetAfter: 1h, knownSource: 48h, distinctUsernames: 50, distinctWindow: 30m}\n',
    )
    const c = resolveConfig({ config: cfg }, {})
    expect(c.authRateLimiter).toEqual({ minSize: 10, maxSize: 20 })
    expect(c.commandRateLimiter).toEqual({ queueSize: 50 })
    expect(c.loginThrottle).toEqual({
      enabled: undefined,
      freeFailures: 3,
      baseDelayMs: 2_000,
      maxDelayMs: 300_000,
      forgetAfterMs: 3_600_000,
      knownSourceMs: 48 * 3_600_000,
      distinctUsernames: 50,
      distinctWindowMs: 1_800_000,
    })
    expect(() => resolveConfig({ config: file('w.yml', 'authRateLimiter: {minSize: 4}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('x.yml', 'authRateLimiter: {maxSize: 1001}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('y.yml', 'authRateLimiter: {minSize: 30, maxSize: 20}\n') }, {})).toThrow('minSize 30 is larger than maxSize 20')
    expect(() => resolveConfig({ config: file('z.yml', 'loginThrottle: {baseDelay: soon}\n') }, {})).toThrow('loginThrottle.baseDelay')
    expect(() => resolveConfig({ config: file('v.yml', 'loginThrottle: {distinctUsernames: 0}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('t.yml', 'loginThrottle: {distinctWindow: 1d}\n') }, {})).toThrow('loginThrottle.distinctWindow')
    expect(() => resolveConfig({ config: file('u.yml', 'commandRateLimiter: {size: 5}\n') }, {})).toThrow(ConfigError)
  })

  it('case=server-timing off by default; on by the file, EDGEPLANE_SERVER_TIMING or --server-timing (the flag wins, then the variable)', () => {
    expect(resolveConfig({}, {}).serverTiming).toBe(false)
    const on = file('timing-on.yml', 'serverTiming: true\n')
    expect(resolveConfig({ config: on }, {}).serverTiming).toBe(true)
    expect(resolveConfig({ config: on }, { EDGEPLANE_SERVER_TIMING: 'off' }).serverTiming).toBe(false)
    expect(resolveConfig({}, { EDGEPLANE_SERVER_TIMING: 'on' }).serverTiming).toBe(true)
    expect(resolveConfig({ serverTiming: true }, { EDGEPLANE_SERVER_TIMING: 'off' }).serverTiming).toBe(true)
    expect(resolveConfig({ serverTiming: false, config: file('timing-off.yml', 'serverTiming: false\n') }, {}).serverTiming).toBe(false)
    expect(() => resolveConfig({}, { EDGEPLANE_SERVER_TIMING: 'yes' })).toThrow('EDGEPLANE_SERVER_TIMING')
    expect(() => resolveConfig({ config: file('timing-bad.yml', 'serverTiming: "on"\n') }, {})).toThrow(ConfigError)
  })

  it('case=console on by default; off by the file, EDGEPLANE_CONSOLE or --no-console (the flag wins, then the variable)', () => {
    expect(resolveConfig({}, {}).console).toBe(true)
    const off = file('console-off.yml', 'console: {enabled: false}\n')
    expect(resolveConfig({ config: off }, {}).console).toBe(false)
    expect(resolveConfig({ config: off }, { EDGEPLANE_CONSOLE: 'on' }).console).toBe(true)
    expect(resolveConfig({}, { EDGEPLANE_CONSOLE: 'off' }).console).toBe(false)
    expect(resolveConfig({ noConsole: true }, { EDGEPLANE_CONSOLE: 'on' }).console).toBe(false)
    expect(resolveConfig({ noConsole: false, config: file('console-on.yml', 'console: {enabled: true}\n') }, {}).console).toBe(true)
    expect(() => resolveConfig({}, { EDGEPLANE_CONSOLE: 'yes' })).toThrow('EDGEPLANE_CONSOLE')
    expect(() => resolveConfig({ config: file('console-bad.yml', 'console: {enabled: true, path: /ui}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('console-bad2.yml', 'console: {enabled: "no"}\n') }, {})).toThrow(ConfigError)
  })

  it('case=oidc from the file and EDGEPLANE_OIDC: durations parsed with a 1m minimum, patterns kept, the variable wins', () => {
    const cfg = file('oidc.yml', 'oidc: {enabled: true, accessTokenDuration: 5m, refreshTokenDuration: 2h, redirectURIs: ["http://localhost:*/cb"]}\n')
    const c = resolveConfig({ config: cfg }, {})
    expect(c.oidc).toMatchObject({ enabled: true, accessTokenMs: 300_000, refreshTokenMs: 7_200_000, idTokenMs: undefined, redirectUris: ['http://localhost:*/cb'] })
    expect(resolveConfig({ config: cfg }, { EDGEPLANE_OIDC: 'off' }).oidc.enabled).toBe(false)
    expect(resolveConfig({}, {}).oidc.enabled).toBeUndefined()
    expect(() => resolveConfig({}, { EDGEPLANE_OIDC: 'maybe' })).toThrow('EDGEPLANE_OIDC')
    expect(() => resolveConfig({ config: file('o1.yml', 'oidc: {accessTokenDuration: 30s}\n') }, {})).toThrow('oidc.accessTokenDuration')
    expect(() => resolveConfig({ config: file('o2.yml', 'oidc: {redirectURIs: []}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('o3.yml', 'oidc: {issuer: x}\n') }, {})).toThrow(ConfigError)
  })

  it('case=connection limits from the file: durations parsed, bounds checked, unset ones left to the defaults', () => {
    const cfg = file(
      'conn.yml',
      'connectionLimits: {handshakeTimeout: 5s, headersTimeout: 2s, requestTimeout: 1m, keepAliveTimeout: 90s, writeTimeout: 45s, maxHeaderBytes: 32768, maxHeaders: 50, maxConnections: 500, maxConnectionsPerAddress: 20}\n',
    )
    expect(resolveConfig({ config: cfg }, {}).connectionLimits).toEqual({
      handshakeTimeoutMs: 5_000,
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 90_000,
      writeTimeoutMs: 45_000,
      maxHeaderBytes: 32_768,
      maxHeaders: 50,
      maxConnections: 500,
      maxConnectionsPerAddress: 20,
    })
    const partial = resolveConfig({ config: file('conn2.yml', 'connectionLimits: {maxConnections: 7}\n') }, {}).connectionLimits
    expect(Object.entries(partial).filter(([, v]) => v !== undefined)).toEqual([['maxConnections', 7]])
    expect(() => resolveConfig({ config: file('c3.yml', 'connectionLimits: {headersTimeout: 500ms}\n') }, {})).toThrow('connectionLimits.headersTimeout')
    expect(() => resolveConfig({ config: file('c4.yml', 'connectionLimits: {requestTimeout: soon}\n') }, {})).toThrow('connectionLimits.requestTimeout')
    expect(() => resolveConfig({ config: file('c5.yml', 'connectionLimits: {maxHeaderBytes: 100}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('c6.yml', 'connectionLimits: {maxConnections: 0}\n') }, {})).toThrow(ConfigError)
    expect(() => resolveConfig({ config: file('c7.yml', 'connectionLimits: {idleTimeout: 5s}\n') }, {})).toThrow(ConfigError)
  })
})

describe('cluster settings (issue 23)', () => {
  const endpointsEnv = { EDGEPLANE_CLUSTER_ENDPOINTS: 'http://10.0.0.2:2379, http://10.0.0.3:2379/', EDGEPLANE_NODE_NAME: 'env-node' }

  it('case=none: a single node when no endpoint and no node name is set anywhere', () => {
    expect(resolveConfig({}, {}).cluster).toBeUndefined()
    expect(resolveConfig({}, { EDGEPLANE_CLUSTER_ENDPOINTS: '', EDGEPLANE_NODE_NAME: ' ' }).cluster).toBeUndefined()
  })

  it('case=precedence: each of endpoints, node name and prefix from its flag, then environment, then the file', () => {
    const cfg = file('cluster.yml', 'cluster:\n  endpoints: [http://10.0.0.1:2379]\n  nodeName: file-node\n  prefix: /from-file/\n')
    expect(resolveConfig({ config: cfg }, {}).cluster).toEqual({ endpoints: ['http://10.0.0.1:2379'], nodeName: 'file-node', prefix: '/from-file' })
    expect(resolveConfig({ config: cfg }, { ...endpointsEnv, EDGEPLANE_CLUSTER_PREFIX: '/from-env' }).cluster).toEqual({
      endpoints: ['http://10.0.0.2:2379', 'http://10.0.0.3:2379'],
      nodeName: 'env-node',
      prefix: '/from-env',
    })
    const fromFlags = resolveConfig({ config: cfg, clusterEndpoints: ['https://etcd-a:2379,https://etcd-b:2379', 'https://etcd-a:2379'], nodeName: 'flag-node' }, endpointsEnv)
    expect(fromFlags.cluster).toEqual({ endpoints: ['https://etcd-a:2379', 'https://etcd-b:2379'], nodeName: 'flag-node', prefix: '/from-file' })
    // one from each source
    const mixed = file('cluster-prefix.yml', 'cluster:\n  prefix: /mixed\n')
    expect(resolveConfig({ config: mixed, nodeName: 'n1' }, { EDGEPLANE_CLUSTER_ENDPOINTS: 'http://127.0.0.1:2379' }).cluster).toEqual({
      endpoints: ['http://127.0.0.1:2379'],
      nodeName: 'n1',
      prefix: '/mixed',
    })
  })

  it('case=one without the other: the error names what is missing and where to set it', () => {
    expect(() => resolveConfig({ nodeName: 'n1' }, {})).toThrow(/node name 'n1' is set, but no cluster endpoints.*--cluster-endpoints.*EDGEPLANE_CLUSTER_ENDPOINTS.*cluster\.endpoints/)
    expect(() => resolveConfig({}, { EDGEPLANE_CLUSTER_ENDPOINTS: 'http://127.0.0.1:2379' })).toThrow(/no node name.*--node-name.*EDGEPLANE_NODE_NAME.*cluster\.nodeName/)
    expect(() => resolveConfig({}, { EDGEPLANE_CLUSTER_PREFIX: '/p' })).toThrow(/cluster prefix is set, but no cluster endpoints and node name/)
  })

  for (const [what, flags, env, message] of [
    ['a URL of another scheme', { clusterEndpoints: ['ftp://10.0.0.1:2379'] }, {}, /'ftp:\/\/10\.0\.0\.1:2379' is not an http or https URL/],
    ['a host:port without a scheme', { clusterEndpoints: ['10.0.0.1:2379'] }, {}, /not an http or https URL|not a URL/],
    ['a text that is no URL', {}, { EDGEPLANE_CLUSTER_ENDPOINTS: 'http://' }, /'http:\/\/' is not a URL/],
    ['a URL with a path', { clusterEndpoints: ['http://10.0.0.1:2379/v3'] }, {}, /no path, query or fragment/],
    ['a URL with credentials', { clusterEndpoints: ['http://root:pw@10.0.0.1:2379'] }, {}, /must not carry credentials/],
    ['an empty list', { clusterEndpoints: [' , '] }, {}, /cluster endpoints are empty/],
    ['a node name with a slash', { clusterEndpoints: ['http://127.0.0.1:2379'], nodeName: 'a/b' }, {}, /node name 'a\/b' is not valid/],
    ['a node name of 64 characters', { clusterEndpoints: ['http://127.0.0.1:2379'], nodeName: 'n'.repeat(64) }, {}, /is not valid: 1 to 63/],
    ['a node name starting with a dot', { clusterEndpoints: ['http://127.0.0.1:2379'], nodeName: '.n' }, {}, /is not valid/],
    ['a prefix without a leading slash', { clusterEndpoints: ['http://127.0.0.1:2379'], nodeName: 'n' }, { EDGEPLANE_CLUSTER_PREFIX: 'edgeplane' }, /cluster prefix 'edgeplane' is not valid/],
    ['a prefix of only a slash', { clusterEndpoints: ['http://127.0.0.1:2379'], nodeName: 'n' }, { EDGEPLANE_CLUSTER_PREFIX: '/' }, /cluster prefix '\/' is not valid/],
  ] as const) {
    it(`case=refuses ${what} with a ConfigError`, () => {
      let thrown: unknown
      try {
        resolveConfig(flags as never, env as Record<string, string>)
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(ConfigError)
      expect((thrown as Error).message).toMatch(message)
    })
  }

  it('case=file schema: an unknown key in cluster: or a non-list of endpoints is refused naming the path', () => {
    expect(() => resolveConfig({ config: file('c1.yml', 'cluster:\n  nodename: x\n') }, {})).toThrow(/\/cluster/)
    expect(() => resolveConfig({ config: file('c2.yml', 'cluster:\n  endpoints: http://127.0.0.1:2379\n  nodeName: x\n') }, {})).toThrow(/\/cluster\/endpoints/)
  })

  it('case=access for `edgeplane cluster`: endpoints and prefix without a node name, the data directory as run resolves it', () => {
    const cfg = file('access.yml', 'data: /from/file\ncluster:\n  endpoints: [http://10.0.0.1:2379]\n')
    expect(resolveClusterAccess({ config: cfg }, {})).toEqual({ endpoints: ['http://10.0.0.1:2379'], prefix: undefined, dataDir: '/from/file' })
    expect(resolveClusterAccess({ config: cfg, prefix: '/other/' }, { EDGEPLANE_CLUSTER_ENDPOINTS: 'http://10.0.0.9:2379', EDGEPLANE_DATA: '/from/env' })).toEqual({
      endpoints: ['http://10.0.0.9:2379'],
      prefix: '/other',
      dataDir: '/from/env',
    })
    expect(resolveClusterAccess({ data: '/from/flag' }, { EDGEPLANE_DATA: '/from/env' }).dataDir).toBe('/from/flag')
    expect(resolveClusterAccess({}, {})).toEqual({ endpoints: undefined, prefix: undefined, dataDir: resolve('./data') })
  })
})
