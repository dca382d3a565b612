// The seed's link and listeners tables: link listeners and dialers, both backoff policies with their bounds,
// xgress listeners (edge, tunnel with its three modes, transport). Each rule with a valid and an invalid case.
import { describe, expect, it } from 'bun:test'
import { error, mismatch, valid, warning, type RuleCase } from './router-config-support.ts'

function table(title: string, cases: RuleCase[]): void {
  describe(title, () => {
    for (const c of cases) {
      it(c.name, () => {
        expect(mismatch(c)).toBeUndefined()
      })
    }
  })
}

const L = 'link.listeners[0]'
const D = 'link.dialers[0]'

table('link.listeners', [
  { name: 'requires binding', patch: { [`${L}.binding`]: undefined }, expect: error(`${L}.binding`, /missing required field binding/) },
  { name: 'rejects a binding other than transport', patch: { [`${L}.binding`]: 'tls' }, expect: error(`${L}.binding`, /transport is the only link binding/) },
  { name: 'requires bind', patch: { [`${L}.bind`]: undefined }, expect: error(`${L}.bind`, /missing required field bind/) },
  { name: 'rejects a bind without protocol', patch: { [`${L}.bind`]: '0.0.0.0:4022' }, expect: error(`${L}.bind`, /not a listen address/) },
  { name: 'requires advertise', patch: { [`${L}.advertise`]: undefined }, expect: error(`${L}.advertise`, /missing required field advertise/) },
  { name: 'rejects a host:port advertise, which the router cannot parse without a protocol', patch: { [`${L}.advertise`]: 'router-east.example.net:4022' }, expect: error(`${L}.advertise`, /no protocol; write it as tls:router-east.example.net:4022/) },
  { name: 'rejects an advertise without port', patch: { [`${L}.advertise`]: 'tls:router-east.example.net' }, expect: error(`${L}.advertise`, /missing port/) },
  { name: 'warns that a wildcard advertise cannot be dialed', patch: { [`${L}.advertise`]: 'tls:0.0.0.0:4022' }, expect: warning(`${L}.advertise`, /cannot dial/) },
  { name: 'accepts groups as one name', patch: { [`${L}.groups`]: 'east' }, expect: valid },
  { name: 'rejects groups that are numbers', patch: { [`${L}.groups`]: 5 }, expect: error(`${L}.groups`, /expected a string or a list/) },
  { name: 'accepts channel options', patch: { [`${L}.options`]: { outQueueSize: 16 } }, expect: valid },
  { name: 'warns about unknown options with a suggestion', patch: { [`${L}.options`]: { outQueSize: 16 } }, expect: warning(`${L}.options.outQueSize`, /did you mean outQueueSize/) },
  { name: 'rejects link.listeners that is not a list', patch: { 'link.listeners': { binding: 'transport' } }, expect: error('link.listeners', /expected a list/) },
])

table('link.dialers', [
  { name: 'accepts split false', patch: { [`${D}.split`]: false }, expect: valid },
  { name: 'rejects a quoted split', patch: { [`${D}.split`]: 'false' }, expect: error(`${D}.split`, /expected true or false.*remove the quotes/) },
  { name: 'requires binding', patch: { [`${D}.binding`]: undefined }, expect: error(`${D}.binding`, /missing required field binding/) },
  { name: 'rejects a binding other than transport', patch: { [`${D}.binding`]: 'udp' }, expect: error(`${D}.binding`, /expected "transport"/) },
  { name: 'accepts bind as an interface', patch: { [`${D}.bind`]: 'eth1' }, expect: valid },
  { name: 'rejects bind as an address', patch: { [`${D}.bind`]: '10.0.0.1:4022' }, expect: error(`${D}.bind`, /is an address/) },
  { name: 'accepts groups as a list', patch: { [`${D}.groups`]: ['default', 'west'] }, expect: valid },
  { name: 'rejects groups as a mapping', patch: { [`${D}.groups`]: { a: 1 } }, expect: error(`${D}.groups`, /got a mapping/) },
  { name: 'accepts options.connectTimeout within 30ms..60s', patch: { [`${D}.options`]: { connectTimeout: '60s' } }, expect: valid },
  { name: 'rejects options.connectTimeout above 60s', patch: { [`${D}.options`]: { connectTimeout: '61s' } }, expect: error(`${D}.options.connectTimeout`, /above the maximum of 60s/) },
  { name: 'accepts maxDefaultConnections 100', patch: { [`${D}.maxDefaultConnections`]: 100 }, expect: valid },
  { name: 'rejects maxDefaultConnections 0', patch: { [`${D}.maxDefaultConnections`]: 0 }, expect: error(`${D}.maxDefaultConnections`, /between 1 and 100/) },
])

for (const policy of ['healthyDialBackoff', 'unhealthyDialBackoff']) {
  const P = `${D}.${policy}`
  table(`link.dialers[].${policy}`, [
    { name: 'accepts the lower bound 10ms', patch: { [`${P}.minRetryInterval`]: '10ms', [`${P}.maxRetryInterval`]: '10ms' }, expect: valid },
    { name: 'accepts the upper bound 24h', patch: { [`${P}.minRetryInterval`]: '24h', [`${P}.maxRetryInterval`]: '24h' }, expect: valid },
    { name: 'rejects minRetryInterval below 10ms', patch: { [`${P}.minRetryInterval`]: '9ms' }, expect: error(`${P}.minRetryInterval`, /below the minimum of 10ms/) },
    { name: 'rejects maxRetryInterval above 24h', patch: { [`${P}.maxRetryInterval`]: '25h' }, expect: error(`${P}.maxRetryInterval`, /above the maximum of 24h/) },
    { name: 'rejects minRetryInterval above 24h', patch: { [`${P}.minRetryInterval`]: '1440m1s', [`${P}.maxRetryInterval`]: '24h' }, expect: error(`${P}.minRetryInterval`, /above the maximum of 24h/) },
    { name: 'rejects maxRetryInterval below 10ms', patch: { [`${P}.minRetryInterval`]: '10ms', [`${P}.maxRetryInterval`]: '1ms' }, expect: error(`${P}.maxRetryInterval`, /below the minimum of 10ms/) },
    { name: 'rejects a bare number of seconds', patch: { [`${P}.minRetryInterval`]: 5 }, expect: error(`${P}.minRetryInterval`, /bare number/) },
    { name: 'rejects minRetryInterval larger than maxRetryInterval', patch: { [`${P}.minRetryInterval`]: '2h', [`${P}.maxRetryInterval`]: '1h' }, expect: error(`${P}.minRetryInterval`, /larger than maxRetryInterval 1h/) },
    { name: 'compares with the default maxRetryInterval', patch: { [`${P}.maxRetryInterval`]: undefined, [`${P}.minRetryInterval`]: '23h' }, expect: error(`${P}.minRetryInterval`, /\(default\)/) },
    { name: 'accepts retryBackoffFactor 1 and 100', patch: { [`${P}.retryBackoffFactor`]: 100 }, expect: valid },
    { name: 'rejects retryBackoffFactor below 1', patch: { [`${P}.retryBackoffFactor`]: 0.9 }, expect: error(`${P}.retryBackoffFactor`, /between 1 and 100/) },
    { name: 'rejects retryBackoffFactor above 100', patch: { [`${P}.retryBackoffFactor`]: 101 }, expect: error(`${P}.retryBackoffFactor`, /between 1 and 100/) },
    { name: 'rejects a quoted retryBackoffFactor', patch: { [`${P}.retryBackoffFactor`]: '2' }, expect: error(`${P}.retryBackoffFactor`, /remove the quotes/) },
  ])
}

const transportListener = { binding: 'transport', bind: 'tls:0.0.0.0:7099', advertise: 'router-east.example.net:7099' }

table('listeners', [
  { name: 'requires binding', patch: { 'listeners[1].binding': undefined }, expect: error('listeners[1].binding', /missing required field binding/) },
  { name: 'rejects an unknown binding, on which the router stops at start', patch: { 'listeners[1].binding': 'tunel' }, expect: error('listeners[1].binding', /did you mean "tunnel"/) },
  { name: 'accepts a transport listener with bind and advertise', patch: { 'listeners[2]': transportListener }, expect: valid },
  { name: 'accepts address in place of bind', patch: { 'listeners[2]': { ...transportListener, bind: undefined, address: 'tls:0.0.0.0:7099' } }, expect: valid },
  { name: 'requires bind (or address)', patch: { 'listeners[2]': { binding: 'transport', advertise: 'x.example.net:7099' } }, expect: error('listeners[2].bind', /missing required field bind \(or address\)/) },
  { name: 'requires advertise', patch: { 'listeners[2]': { binding: 'transport', bind: 'tls:0.0.0.0:7099' } }, expect: error('listeners[2].advertise', /missing required field advertise/) },
  { name: 'rejects a malformed advertise', patch: { 'listeners[2]': { ...transportListener, advertise: 'router:http' } }, expect: error('listeners[2].advertise', /not a number/) },
  { name: 'accepts xgress options of a transport listener', patch: { 'listeners[2]': { ...transportListener, options: { mtu: 1400, txPortalMinSize: 16384 } } }, expect: valid },
  { name: 'rejects options that are not a mapping', patch: { 'listeners[2]': { ...transportListener, options: 'fast' } }, expect: error('listeners[2].options', /expected a mapping/) },
  { name: 'rejects two listeners on one port', patch: { 'listeners[2]': { ...transportListener, bind: 'tls:127.0.0.1:3022' } }, expect: error('listeners[2].bind', /port 3022 is already used by listeners\[0\].address/) },
  { name: 'requires the address of an edge listener', patch: { 'listeners[0].address': undefined }, expect: error('listeners[0].address', /missing required field address/) },
  { name: 'warns that an edge listener ignores bind', patch: { 'listeners[0].bind': 'tls:0.0.0.0:3022' }, expect: warning('listeners[0].bind', /listens on address/) },
  { name: 'requires options.advertise of an edge listener', patch: { 'listeners[0].options.advertise': undefined }, expect: error('listeners[0].options.advertise', /missing required field advertise/) },
  { name: 'rejects an edge advertise with a protocol', patch: { 'listeners[0].options.advertise': 'tls:router-east.example.net:3022' }, expect: error('listeners[0].options.advertise', /has a protocol/) },
  { name: 'rejects an edge advertise without port, on which the router crashes', patch: { 'listeners[0].options.advertise': 'router-east.example.net' }, expect: error('listeners[0].options.advertise', /crashes/) },
  { name: 'rejects an IPv6 edge address, which the router splits wrongly', patch: { 'listeners[0].address': 'tls:[::]:3022' }, expect: error('listeners[0].address', /IPv6/) },
  { name: 'rejects edge enabled without an edge listener', patch: { 'listeners[0]': { binding: 'tunnel', options: { mode: 'host' } } }, expect: error('listeners', /no listener has binding edge/) },
])

const T = 'listeners[1].options'
table('listeners: tunnel modes', [
  { name: 'accepts host mode with no further options', patch: { [T]: { mode: 'host' } }, expect: valid },
  { name: 'warns that host mode ignores resolver', patch: { [T]: { mode: 'host', resolver: 'udp://127.0.0.1:53' } }, expect: warning(`${T}.resolver`, /ignored in host mode/) },
  { name: 'accepts tproxy mode with a resolver', patch: { [T]: { mode: 'tproxy', resolver: 'udp://10.0.0.53:53' } }, expect: valid },
  { name: 'accepts tproxy with a diverter path', patch: { [T]: { mode: 'tproxy:/opt/diverter' } }, expect: valid },
  { name: 'rejects a malformed resolver', patch: { [T]: { mode: 'tproxy', resolver: '127.0.0.1:53' } }, expect: error(`${T}.resolver`, /not a nameserver URL/) },
  { name: 'warns that tproxy mode ignores services', patch: { [T]: { mode: 'tproxy', services: ['echo:80'] } }, expect: warning(`${T}.services`, /ignored in tproxy mode/) },
  { name: 'accepts proxy mode with <service>:<port> services', patch: { [T]: { mode: 'proxy', services: ['echo:8080', 'dns:53:udp'] } }, expect: valid },
  { name: 'rejects a service without a port', patch: { [T]: { mode: 'proxy', services: ['echo'] } }, expect: error(`${T}.services[0]`, /not <service>:<port>/) },
  { name: 'rejects a service port out of range', patch: { [T]: { mode: 'proxy', services: ['echo:0'] } }, expect: error(`${T}.services[0]`, /out of range/) },
  { name: 'warns that proxy mode without services proxies nothing', patch: { [T]: { mode: 'proxy' } }, expect: warning(`${T}.services`, /proxies nothing/) },
  { name: 'rejects an unknown mode with a suggestion', patch: { [T]: { mode: 'proxi' } }, expect: error(`${T}.mode`, /did you mean "proxy"/) },
  { name: 'warns that a tunnel does not listen on an address', patch: { 'listeners[1].bind': 'tls:0.0.0.0:1' }, expect: warning('listeners[1].bind', /does not listen on an address/) },
])
