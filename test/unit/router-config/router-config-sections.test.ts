// Seed rules 1–7 and the tables of v, ctrl, csr, identity, dialers and edge: each rule with a valid and an invalid case.
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

table('v', [
  { name: 'accepts the integer 3', patch: { v: 3 }, expect: valid },
  { name: 'rejects another version', patch: { v: 2 }, expect: error('v', /expected the integer 3, got the integer 2/) },
  { name: 'rejects a quoted "3", on which the router crashes', patch: { v: '3' }, expect: error('v', /got the string "3"; remove the quotes/) },
  { name: 'rejects 3.5', patch: { v: 3.5 }, expect: error('v', /expected the integer 3/) },
  { name: 'requires v', patch: { v: undefined }, expect: error('v', /missing required section v/) },
])

table('required and recommended sections (seed rules 2–7)', [
  { name: 'requires ctrl to start', patch: { ctrl: undefined }, expect: error('ctrl', /missing required section ctrl/) },
  { name: 'requires identity to start', patch: { identity: undefined }, expect: error('identity', /missing required section identity/) },
  { name: 'warns that without csr the router cannot enroll', patch: { csr: undefined }, expect: warning('csr', /cannot enroll or renew/) },
  { name: 'accepts edge.csr in place of csr, with a deprecation warning', patch: { csr: undefined, 'edge.csr': { sans: { dns: ['router-east.example.net'] } } }, expect: warning('edge.csr', /deprecated/) },
  { name: 'warns that without dialers the router cannot terminate services', patch: { dialers: undefined }, expect: warning('dialers', /cannot connect to terminate services/) },
  { name: 'warns that without edge the router is fabric only', patch: { edge: undefined, listeners: undefined }, expect: warning('edge', /fabric-only mode/) },
  { name: 'warns that without link there is no mesh', patch: { link: undefined }, expect: warning('link', /cannot dial or accept other routers/) },
  { name: 'warns that without listeners nothing reaches a fabric router', patch: { edge: undefined, listeners: undefined }, expect: warning('listeners', /no external connections/) },
  { name: 'requires an edge listener when edge is enabled', patch: { listeners: undefined }, expect: error('listeners', /requires a listeners list/) },
  { name: 'warns about an unknown section with the nearest name', patch: { healthCheck: {} }, expect: warning('healthCheck', /unknown section "healthCheck".*did you mean healthChecks\?/) },
])

table('ctrl', [
  { name: 'accepts endpoint tls:<host>:<port>', patch: { 'ctrl.endpoint': 'tls:10.0.0.1:6262' }, expect: valid },
  { name: 'accepts a bracketed IPv6 endpoint', patch: { 'ctrl.endpoint': 'tls:[::1]:6262' }, expect: valid },
  { name: 'rejects an endpoint without protocol and suggests tls:', patch: { 'ctrl.endpoint': 'ctrl:6262' }, expect: error('ctrl.endpoint', /did you mean "tls:ctrl:6262"/) },
  { name: 'rejects an endpoint of another protocol', patch: { 'ctrl.endpoint': 'tcp:ctrl:6262' }, expect: error('ctrl.endpoint', /form tls:<host>:<port>, not tcp/) },
  { name: 'rejects a port out of range', patch: { 'ctrl.endpoint': 'tls:ctrl:70000' }, expect: error('ctrl.endpoint', /port 70000 is out of range/) },
  { name: 'rejects an unbracketed IPv6 endpoint', patch: { 'ctrl.endpoint': 'tls:::1:6262' }, expect: error('ctrl.endpoint', /too many colons/) },
  { name: 'accepts endpoints as a list of addresses', patch: { 'ctrl.endpoint': undefined, 'ctrl.endpoints': ['tls:a:6262', 'tls:b:6262'] }, expect: valid },
  { name: 'rejects a bad entry of endpoints', patch: { 'ctrl.endpoint': undefined, 'ctrl.endpoints': ['tls:a:6262', 'b'] }, expect: error('ctrl.endpoints[1]', /not a controller address/) },
  { name: 'rejects an empty endpoints list', patch: { 'ctrl.endpoint': undefined, 'ctrl.endpoints': [] }, expect: error('ctrl.endpoints', /must not be an empty list/) },
  { name: 'rejects endpoints that is not a list', patch: { 'ctrl.endpoint': undefined, 'ctrl.endpoints': 'tls:a:6262' }, expect: error('ctrl.endpoints', /expected a list/) },
  { name: 'requires endpoint or endpoints', patch: { 'ctrl.endpoint': undefined }, expect: error('ctrl.endpoint', /missing endpoint \(or endpoints\)/) },
  { name: 'warns that endpoints is ignored beside endpoint', patch: { 'ctrl.endpoints': ['tls:b:6262'] }, expect: warning('ctrl.endpoints', /ignored because endpoint is set/) },
  { name: 'accepts bind as an interface name', patch: { 'ctrl.bind': 'eth0' }, expect: valid },
  { name: 'accepts bind as a local IP', patch: { 'ctrl.bind': '192.168.1.10' }, expect: valid },
  { name: 'rejects bind given as an address', patch: { 'ctrl.bind': 'tls:0.0.0.0:6262' }, expect: error('ctrl.bind', /is an address; expected a local interface/) },
  { name: 'accepts defaultRequestTimeout 10s', patch: { 'ctrl.defaultRequestTimeout': '10s' }, expect: valid },
  { name: 'rejects a bare number as defaultRequestTimeout', patch: { 'ctrl.defaultRequestTimeout': 10 }, expect: error('ctrl.defaultRequestTimeout', /a bare number has no unit/) },
  { name: 'rejects a day unit in defaultRequestTimeout', patch: { 'ctrl.defaultRequestTimeout': '1d' }, expect: error('ctrl.defaultRequestTimeout', /no day unit/) },
  { name: 'accepts heartbeats with durations', patch: { 'ctrl.heartbeats.unresponsiveAfter': '5s' }, expect: valid },
  { name: 'rejects a heartbeat interval without unit', patch: { 'ctrl.heartbeats.sendInterval': 10 }, expect: error('ctrl.heartbeats.sendInterval', /bare number/) },
  { name: 'accepts channel options', patch: { 'ctrl.options.maxOutstandingConnects': 1000, 'ctrl.options.writeTimeout': '0' }, expect: valid },
  { name: 'rejects maxQueuedConnects out of 1..5000', patch: { 'ctrl.options.maxQueuedConnects': 0 }, expect: error('ctrl.options.maxQueuedConnects', /between 1 and 5000/) },
  { name: 'rejects connectTimeout below 30ms', patch: { 'ctrl.options.connectTimeout': '10ms' }, expect: error('ctrl.options.connectTimeout', /below the minimum of 30ms/) },
  { name: 'warns that connectTimeoutMs is ignored beside connectTimeout', patch: { 'ctrl.options.connectTimeoutMs': 1000 }, expect: warning('ctrl.options.connectTimeoutMs', /ignored because connectTimeout is set/) },
  { name: 'requires rateLimiter.minSize, which the router defaults to an invalid 1', patch: { 'ctrl.rateLimiter': { enabled: true } }, expect: error('ctrl.rateLimiter.minSize', /defaults it to 1/) },
  { name: 'rejects rateLimiter.minSize above maxSize', patch: { 'ctrl.rateLimiter': { minSize: 300, maxSize: 200 } }, expect: error('ctrl.rateLimiter.minSize', /minSize 300 is larger than maxSize 200/) },
  { name: 'accepts a valid rateLimiter', patch: { 'ctrl.rateLimiter': { minSize: 5, maxSize: 1000 } }, expect: valid },
])

table('csr', [
  { name: 'accepts the subject fields as strings', patch: { 'csr.organization': 'ACME' }, expect: valid },
  { name: 'rejects a subject field that YAML 1.1 reads as a boolean (NO)', patch: { 'csr.country': false }, expect: error('csr.country', /expected a string, got the boolean false/) },
  { name: 'accepts a wildcard DNS SAN', patch: { 'csr.sans.dns': ['*.example.net', 'router-east.example.net'] }, expect: valid },
  { name: 'rejects an invalid DNS SAN', patch: { 'csr.sans.dns[0]': 'bad name' }, expect: error('csr.sans.dns[0]', /not a valid DNS name/) },
  { name: 'accepts IPv4 and IPv6 SANs', patch: { 'csr.sans.ip': ['10.1.2.3', 'fe80::1', '127.0.0.1'] }, expect: valid },
  { name: 'rejects an invalid IP SAN', patch: { 'csr.sans.ip[0]': '10.1.2' }, expect: error('csr.sans.ip[0]', /not an IP address/) },
  { name: 'accepts an absolute URI SAN', patch: { 'csr.sans.uri[0]': 'ziti://router/east' }, expect: valid },
  { name: 'rejects a relative URI SAN', patch: { 'csr.sans.uri[0]': 'router/east' }, expect: error('csr.sans.uri[0]', /not an absolute URI/) },
  { name: 'rejects a URI SAN with a bad escape', patch: { 'csr.sans.uri[0]': 'spiffe://x/%zz' }, expect: error('csr.sans.uri[0]', /percent-escape/) },
  { name: 'accepts an e-mail SAN', patch: { 'csr.sans.email[0]': 'noc@example.net' }, expect: valid },
  { name: 'rejects an invalid e-mail SAN', patch: { 'csr.sans.email[0]': 'noc.example.net' }, expect: error('csr.sans.email[0]', /not an e-mail address/) },
  { name: 'requires sans, without which the router crashes', patch: { 'csr.sans': undefined }, expect: error('csr.sans', /crashes/) },
  { name: 'warns when there is no SAN at all', patch: { 'csr.sans': {} }, expect: warning('csr.sans', /cannot accept connections from SDKs/) },
  { name: 'warns that edge.csr is ignored beside a root csr', patch: { 'edge.csr': { sans: { dns: ['x.example.net'] } } }, expect: warning('edge.csr', /ignored because csr is set/) },
  { name: 'warns when an advertised host is not a SAN', patch: { 'csr.sans.dns': ['localhost'] }, expect: warning('listeners[0].options.advertise', /not among the csr SANs/) },
])

table('identity', [
  { name: 'accepts file:, pem: and bare paths', patch: { 'identity.ca': 'file:/etc/ca.pem', 'identity.server_cert': 'pem:-----BEGIN CERTIFICATE-----' }, expect: valid },
  { name: 'requires cert', patch: { 'identity.cert': undefined }, expect: error('identity.cert', /missing required field cert/) },
  { name: 'requires key', patch: { 'identity.key': undefined }, expect: error('identity.key', /missing required field key/) },
  { name: 'rejects a non-string server_cert', patch: { 'identity.server_cert': 42 }, expect: error('identity.server_cert', /got the integer 42/) },
  { name: 'rejects an empty ca', patch: { 'identity.ca': '' }, expect: error('identity.ca', /must not be empty/) },
  { name: 'rejects a pem: value without PEM', patch: { 'identity.ca': 'pem:abc' }, expect: error('identity.ca', /PEM block/) },
  { name: 'accepts alternate server certificates', patch: { 'identity.alt_server_certs': [{ server_cert: 'alt.pem', server_key: 'alt.key' }] }, expect: valid },
  { name: 'requires server_key of an alternate certificate', patch: { 'identity.alt_server_certs': [{ server_cert: 'alt.pem' }] }, expect: error('identity.alt_server_certs[0].server_key', /missing required field/) },
  { name: 'rejects identity that is not a mapping', patch: { identity: 'router.json' }, expect: error('identity', /expected a mapping/) },
])

table('dialers', [
  { name: 'accepts bindings with options.mtu', patch: { 'dialers[0].options': { mtu: 1200 } }, expect: valid },
  { name: 'accepts the udp binding of the minimal setup', patch: { 'dialers[0].binding': 'udp' }, expect: valid },
  { name: 'rejects a non-integer mtu', patch: { 'dialers[0].options': { mtu: 'big' } }, expect: error('dialers[0].options.mtu', /expected an integer/) },
  { name: 'requires binding', patch: { 'dialers[0]': { options: {} } }, expect: error('dialers[0].binding', /missing required field binding/) },
  { name: 'warns about an unknown binding with a suggestion', patch: { 'dialers[0].binding': 'transprt' }, expect: warning('dialers[0].binding', /did you mean "transport"/) },
  { name: 'rejects dialers that is not a list', patch: { dialers: { binding: 'transport' } }, expect: error('dialers', /expected a list/) },
])

table('edge', [
  { name: 'accepts an empty edge mapping', patch: { edge: {} }, expect: valid },
  { name: 'warns that an empty value leaves edge disabled', patch: { edge: null }, expect: warning('edge', /treats as absent/) },
  { name: 'rejects edge that is not a mapping', patch: { edge: 'on' }, expect: error('edge', /expected a mapping/) },
  { name: 'warns about heartbeatIntervalSeconds outside 10..60', patch: { 'edge.heartbeatIntervalSeconds': 5 }, expect: warning('edge.heartbeatIntervalSeconds', /between 10 and 60.*uses 60/) },
  { name: 'warns that dbSaveIntervalSeconds below 30 is raised', patch: { 'edge.dbSaveIntervalSeconds': 10 }, expect: warning('edge.dbSaveIntervalSeconds', /uses 30/) },
  { name: 'accepts apiProxy with listener and upstream', patch: { 'edge.apiProxy': { listener: '0.0.0.0:1080', upstream: 'ctrl.example.net:1280' } }, expect: valid },
  { name: 'requires apiProxy.upstream', patch: { 'edge.apiProxy': { listener: '0.0.0.0:1080' } }, expect: error('edge.apiProxy.upstream', /missing required field/) },
  { name: 'rejects an edge listener without edge', patch: { edge: undefined }, expect: error('listeners[0].binding', /needs the edge section/) },
])
