// The seed's tables of forwarder, healthChecks, metrics, trace, transport, profile and web: every field with a valid
// and an invalid case, and the defaults filled into the effective configuration.
import { describe, expect, it } from 'bun:test'
import { parse } from 'yaml'
import { validateRouterConfig } from '../../../src/router-config/router-config-validate.ts'
import { error, fixture, mismatch, valid, warning, type RuleCase } from './router-config-support.ts'

function table(title: string, cases: RuleCase[]): void {
  describe(title, () => {
    for (const c of cases) {
      it(c.name, () => {
        expect(mismatch(c)).toBeUndefined()
      })
    }
  })
}

const MILLISECOND_FIELDS = ['faultTxInterval', 'idleCircuitTimeout', 'idleTxInterval', 'xgressCloseCheckInterval', 'xgressDialDwellTime']
const BOUNDED_FIELDS: [string, number, number][] = [
  ['linkDialQueueLength', 1, 10000],
  ['linkDialWorkerCount', 2, 10000],
  ['rateLimitedQueueLength', 1, 50000],
  ['rateLimitedWorkerCount', 2, 10000],
  ['xgressDialQueueLength', 1, 10000],
  ['xgressDialWorkerCount', 1, 10000],
]

const forwarderCases: RuleCase[] = []
for (const field of MILLISECOND_FIELDS) {
  const path = `forwarder.${field}`
  forwarderCases.push(
    { name: `accepts ${field}: 0 and 250000`, patch: { [path]: field === 'xgressDialDwellTime' ? 0 : 250000 }, expect: valid },
    { name: `rejects a negative ${field}`, patch: { [path]: -1 }, expect: error(path, /at least 0/) },
    { name: `rejects ${field} as a duration string`, patch: { [path]: '15s' }, expect: error(path, /integer milliseconds, e.g. 15000/) },
  )
}
for (const [field, min, max] of BOUNDED_FIELDS) {
  const path = `forwarder.${field}`
  forwarderCases.push(
    { name: `accepts ${field} at its minimum ${min}`, patch: { [path]: min }, expect: valid },
    { name: `accepts ${field} at its maximum ${max}`, patch: { [path]: max }, expect: valid },
    { name: `rejects ${field} at 0`, patch: { [path]: 0 }, expect: error(path, new RegExp(`between 1 and ${max}`)) },
    { name: `rejects ${field} above ${max}`, patch: { [path]: max + 1 }, expect: error(path, new RegExp(`between 1 and ${max}`)) },
    { name: `rejects ${field} as a fraction`, patch: { [path]: 10.5 }, expect: error(path, /expected an integer, got the number 10.5/) },
  )
}
forwarderCases.push(
  { name: 'warns that routers refuse linkDialWorkerCount 1 although the seed allows it', patch: { 'forwarder.linkDialWorkerCount': 1 }, expect: warning('forwarder.linkDialWorkerCount', /reject 1/) },
  { name: 'warns that routers refuse rateLimitedWorkerCount 1 although the seed allows it', patch: { 'forwarder.rateLimitedWorkerCount': 1 }, expect: warning('forwarder.rateLimitedWorkerCount', /reject 1/) },
  { name: 'warns that latencyProbeInterval is ignored', patch: { 'forwarder.latencyProbeInterval': 1000 }, expect: warning('forwarder.latencyProbeInterval', /ignored/) },
  { name: 'suggests the nearest key for a misspelt field', patch: { 'forwarder.linkDialQueueLenght': 10 }, expect: warning('forwarder.linkDialQueueLenght', /did you mean linkDialQueueLength\?/) },
  { name: 'accepts unresponsiveLinkTimeout as a duration or milliseconds', patch: { 'forwarder.unresponsiveLinkTimeout': 5000 }, expect: valid },
  { name: 'rejects unresponsiveLinkTimeout below 5s', patch: { 'forwarder.unresponsiveLinkTimeout': '4s' }, expect: error('forwarder.unresponsiveLinkTimeout', /minimum of 5s/) },
  { name: 'warns that an empty forwarder uses the defaults', patch: { forwarder: null }, expect: warning('forwarder', /uses the defaults/) },
)
table('forwarder', forwarderCases)

const H = 'healthChecks'
const durationFields = [`${H}.ctrlPingCheck.interval`, `${H}.ctrlPingCheck.timeout`, `${H}.ctrlPingCheck.initialDelay`, `${H}.linkCheck.interval`, `${H}.linkCheck.initialDelay`]
const healthCases: RuleCase[] = durationFields.flatMap((path) => [
  { name: `accepts ${path} as a duration`, patch: { [path]: '1m30s' }, expect: valid },
  { name: `rejects ${path} as a bare number`, patch: { [path]: 30 }, expect: error(path, /a bare number has no unit; write 30s/) },
])
healthCases.push(
  { name: 'accepts linkCheck.minLinks 0', patch: { [`${H}.linkCheck.minLinks`]: 0 }, expect: valid },
  { name: 'rejects a negative minLinks', patch: { [`${H}.linkCheck.minLinks`]: -1 }, expect: error(`${H}.linkCheck.minLinks`, /at least 0/) },
  { name: 'rejects a non-integer minLinks, on which the router crashes', patch: { [`${H}.linkCheck.minLinks`]: 'two' }, expect: error(`${H}.linkCheck.minLinks`, /crashes/) },
  { name: 'rejects a zero check interval', patch: { [`${H}.linkCheck.interval`]: '0s' }, expect: error(`${H}.linkCheck.interval`, /longer than 0/) },
  { name: 'warns when no web server exposes the health checks', patch: { web: undefined }, expect: warning(H, /health-checks API/) },
)
table('healthChecks', healthCases)

table('metrics', [
  { name: 'accepts reportInterval 30s', patch: { 'metrics.reportInterval': '30s' }, expect: valid },
  { name: 'rejects reportInterval as a bare number', patch: { 'metrics.reportInterval': 60 }, expect: error('metrics.reportInterval', /bare number/) },
  { name: 'accepts messageQueueSize 100', patch: { 'metrics.messageQueueSize': 100 }, expect: valid },
  { name: 'rejects a non-integer messageQueueSize', patch: { 'metrics.messageQueueSize': 'ten' }, expect: error('metrics.messageQueueSize', /expected an integer/) },
  { name: 'accepts intervalAgeThreshold 0 (the router then uses 80s)', patch: { 'metrics.intervalAgeThreshold': '0' }, expect: valid },
  { name: 'rejects intervalAgeThreshold with a day unit', patch: { 'metrics.intervalAgeThreshold': '1d' }, expect: error('metrics.intervalAgeThreshold', /no day unit/) },
])

table('trace', [
  { name: 'accepts a path', patch: { trace: { path: '/var/log/router.trace' } }, expect: valid },
  { name: 'requires path', patch: { trace: {} }, expect: error('trace.path', /missing required field path/) },
  { name: 'rejects an empty path', patch: { trace: { path: '' } }, expect: error('trace.path', /must not be empty/) },
])

table('transport', [
  { name: 'accepts the westworld3 keys', patch: { 'transport.westworld3': { profile_version: 1, tx_portal_min_sz: 16384, tx_portal_max_sz: 1048576, instrument: { name: 'metrics', path: '/tmp/ww3', snapshot_ms: 1000 }, enabled: true } }, expect: valid },
  { name: 'rejects a non-integer tx_portal_max_sz', patch: { 'transport.westworld3': { tx_portal_max_sz: '1M' } }, expect: error('transport.westworld3.tx_portal_max_sz', /expected an integer/) },
  { name: 'rejects tx_portal_min_sz above tx_portal_max_sz', patch: { 'transport.westworld3': { tx_portal_min_sz: 2000, tx_portal_max_sz: 1000 } }, expect: error('transport.westworld3.tx_portal_min_sz', /larger than tx_portal_max_sz/) },
  { name: 'warns about an unknown westworld3 key', patch: { 'transport.westworld3': { enable: true } }, expect: warning('transport.westworld3.enable', /did you mean enabled/) },
  { name: 'rejects transport that is not a mapping', patch: { transport: 'westworld3' }, expect: error('transport', /expected a mapping/) },
])

table('profile', [
  { name: 'accepts cpu and memory profiles', patch: { profile: { cpu: { path: 'cpu.prof' }, memory: { path: 'mem.prof', intervalMs: 30000 } } }, expect: valid },
  { name: 'requires cpu.path', patch: { profile: { cpu: {} } }, expect: error('profile.cpu.path', /missing required field path/) },
  { name: 'requires memory.path', patch: { profile: { memory: { intervalMs: 1000 } } }, expect: error('profile.memory.path', /missing required field path/) },
  { name: 'rejects memory.intervalMs as a duration', patch: { profile: { memory: { path: 'm', intervalMs: '15s' } } }, expect: error('profile.memory.intervalMs', /integer milliseconds, e.g. 15000/) },
  { name: 'rejects one file for both profiles', patch: { profile: { cpu: { path: 'p' }, memory: { path: 'p' } } }, expect: error('profile.memory.path', /overwrite/) },
])

table('web', [
  { name: 'accepts a health-checks server', patch: { 'web[0].options': { readTimeout: '5s', minTLSVersion: 'TLS1.2' } }, expect: valid },
  { name: 'requires name', patch: { 'web[0].name': undefined }, expect: error('web[0].name', /missing required field name/) },
  { name: 'rejects an API the router does not register', patch: { 'web[0].apis[0].binding': 'edge-management' }, expect: error('web[0].apis[0].binding', /only the health-checks API/) },
  { name: 'requires bindPoints', patch: { 'web[0].bindPoints': undefined }, expect: error('web[0].bindPoints', /missing required field bindPoints/) },
  { name: 'requires the interface of a bind point', patch: { 'web[0].bindPoints[0].interface': undefined }, expect: error('web[0].bindPoints[0].interface', /missing required field interface/) },
  { name: 'rejects a bind point port out of range', patch: { 'web[0].bindPoints[0].interface': '0.0.0.0:0' }, expect: error('web[0].bindPoints[0].interface', /at least 1/) },
  { name: 'rejects minTLSVersion above maxTLSVersion', patch: { 'web[0].options': { minTLSVersion: 'TLS1.3', maxTLSVersion: 'TLS1.2' } }, expect: error('web[0].options.minTLSVersion', /larger than maxTLSVersion/) },
  { name: 'rejects an unknown TLS version with a suggestion', patch: { 'web[0].options': { minTLSVersion: 'TLS1.4' } }, expect: error('web[0].options.minTLSVersion', /expected one of/) },
])

describe('defaults of the effective configuration', () => {
  const effective = validateRouterConfig(fixture('minimal.yml'), { env: {} }).effective as Record<string, Record<string, unknown>>

  it('fills the forwarder table of the seed', () => {
    expect(effective.forwarder).toMatchObject({
      faultTxInterval: 15000, idleCircuitTimeout: 60000, idleTxInterval: 60000, linkDialQueueLength: 1000, linkDialWorkerCount: 32,
      rateLimitedQueueLength: 5000, rateLimitedWorkerCount: 5, xgressCloseCheckInterval: 5000, xgressDialDwellTime: 0,
      xgressDialQueueLength: 1000, xgressDialWorkerCount: 128,
    })
  })

  it('fills healthChecks, metrics and ctrl.defaultRequestTimeout', () => {
    expect(effective.healthChecks).toEqual({ ctrlPingCheck: { interval: '30s', timeout: '15s', initialDelay: '15s' }, linkCheck: { interval: '5s', initialDelay: '1s', minLinks: 0 } })
    expect(effective.metrics).toMatchObject({ reportInterval: '1m', messageQueueSize: 10, intervalAgeThreshold: '80s' })
    expect(effective.ctrl).toMatchObject({ defaultRequestTimeout: '5s' })
  })

  it('fills both backoff policies, split and groups of a link dialer, and groups of a link listener', () => {
    const text = `${fixture('minimal.yml')}\nlink:\n  dialers: [{binding: transport}]\n  listeners: [{binding: transport, bind: "tls:0.0.0.0:1", advertise: "tls:r:1"}]\n`
    const link = (validateRouterConfig(text, { env: {} }).effective as { link: { dialers: unknown[]; listeners: unknown[] } }).link
    expect(link.dialers[0]).toMatchObject({
      split: true, groups: ['default'],
      healthyDialBackoff: { minRetryInterval: '5s', maxRetryInterval: '5m', retryBackoffFactor: 1.5 },
      unhealthyDialBackoff: { minRetryInterval: '1m', maxRetryInterval: '1h', retryBackoffFactor: 10 },
    })
    expect(link.listeners[0]).toMatchObject({ groups: ['default'] })
  })

  it('fills profile.memory.intervalMs only when memory is present, and creates no optional section', () => {
    const text = `${fixture('minimal.yml')}\nprofile:\n  memory:\n    path: mem.prof\n`
    const eff = validateRouterConfig(text, { env: {} }).effective as Record<string, unknown>
    expect(eff.profile).toEqual({ memory: { path: 'mem.prof', intervalMs: 15000 } })
    for (const section of ['csr', 'edge', 'link', 'listeners', 'dialers', 'trace', 'web']) expect(effective[section]).toBeUndefined()
  })

  it('keeps the values of the file as written', () => {
    const eff = validateRouterConfig(fixture('edge-router.yml'), { env: {} }).effective
    const source = parse(fixture('edge-router.yml'), { version: '1.1' }) as Record<string, unknown>
    expect(eff).toMatchObject(source)
  })
})
