/**
 * The router configuration file, version 3, as one TypeBox schema: sections, fields, types, defaults,
 * bounds and known keys. `x-*` keywords (value syntax kinds, duration bounds, why a rule exists) are
 * read by src/router-config; rules between fields live there too. Imports TypeBox only.
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox'

/** Go time.ParseDuration syntax: `500ms`, `1h30m`, `1.5s`, a bare `0`; no day unit. */
export const DURATION_PATTERN = '^[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$'

const HOST = '(\\[[0-9A-Fa-f:.]+\\]|[^:\\s\\[\\]]+)'
const PROTO = '(tls|dtls|tcp|ws|wss|udp)'

/** Editor patterns of the value kinds; the validator checks each kind with a precise message instead. */
const KIND_PATTERNS: Record<string, string> = {
  duration: DURATION_PATTERN,
  'ctrl-address': `^tls:${HOST}:[0-9]{1,5}$`,
  'listen-address': `^${PROTO}:(\\[[0-9A-Fa-f:.]+\\]|[^:\\s\\[\\]]*):[0-9]{1,5}$`,
  'dial-address': `^${PROTO}:${HOST}:[0-9]{1,5}$`,
  'edge-listen-address': `^${PROTO}:[^:\\s\\[\\]]*:[0-9]{1,5}$`,
  'edge-advertise': '^[^:\\s\\[\\]]+:[0-9]{1,5}$',
  'listener-advertise': `^(${PROTO}:)?${HOST}:[0-9]{1,5}$`,
  'host-port': `^${HOST}:[0-9]{1,5}$`,
  uri: '^[A-Za-z][A-Za-z0-9+.-]*:\\S*$',
  email: '^[^\\s@]+@[^\\s@]+$',
  'dns-name': '^(\\*\\.)?[A-Za-z0-9_.-]+$',
  'tunnel-mode': '^(tproxy|host|proxy)$|^tproxy:.+$',
  'tunnel-service': '^[^:\\s]+:[0-9]{1,5}(:(tcp|udp))?$',
  resolver: '^[A-Za-z][A-Za-z0-9+.-]*://\\S+$',
  cidr: '^[0-9A-Fa-f:.]+/[0-9]{1,3}$',
}

/** Listener bindings with an xgress factory in the router; any other binding stops it at start. */
export const LISTENER_BINDINGS = ['edge', 'tunnel', 'transport', 'transport_udp', 'proxy', 'proxy_udp', 'edge_transport'] as const
/** Dialer bindings the seed and the router name; others are not checked until the router uses them. */
export const DIALER_BINDINGS = ['transport', 'transport_udp', 'proxy', 'proxy_udp', 'udp', 'edge', 'tunnel', 'edge_transport'] as const

const opt = Type.Optional

function obj<P extends TProperties>(properties: P, options: Record<string, unknown> = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options })
}

function kind(k: string, description: string, extra: Record<string, unknown> = {}) {
  return Type.String({ description, 'x-kind': k, ...(KIND_PATTERNS[k] && { pattern: KIND_PATTERNS[k] }), ...extra })
}

/** A duration field; `min`/`max` are inclusive, `positive` rejects zero. */
function duration(description: string, o: { default?: string; min?: string; max?: string; positive?: boolean; severity?: 'warning'; why?: string } = {}) {
  return kind('duration', description, {
    ...(o.default !== undefined && { default: o.default }),
    ...(o.min && { 'x-min': o.min }),
    ...(o.max && { 'x-max': o.max }),
    ...(o.positive && { 'x-positive': true }),
    ...(o.severity && { 'x-severity': o.severity }),
    ...(o.why && { 'x-why': o.why }),
  })
}

const int = (description: string, o: Record<string, unknown> = {}) => Type.Integer({ description, minimum: 0, ...o })
const ms = (description: string, def: number) => int(`${description} (integer milliseconds)`, { default: def, 'x-unit': 'ms' })
const num = (description: string, o: Record<string, unknown> = {}) => Type.Number({ description, ...o })
const str = (description: string, o: Record<string, unknown> = {}) => Type.String({ description, ...o })
const bool = (description: string, o: Record<string, unknown> = {}) => Type.Boolean({ description, ...o })
const strings = (description: string) => Type.Array(Type.String(), { description })
const oneOrMany = (description: string, item: TSchema = Type.String(), o: Record<string, unknown> = {}) =>
  Type.Union([item, Type.Array(item)], { description, ...o })
const ignored = (why: string) => Type.Unknown({ description: `Ignored: ${why}`, deprecated: true, 'x-ignored': why })
const anyMap = (description: string) => Type.Object({}, { additionalProperties: true, description })

const groups = oneOrMany('Groups (a name or a list); dialers dial only listeners sharing at least one group.', Type.String(), { default: ['default'] })

const channelProps = {
  outQueueSize: opt(int('Outgoing message queue size (default 4; the edge listener raises 4 to 64).')),
  maxQueuedConnects: opt(int('Connect requests buffered before acknowledgement (default 1).', { minimum: 1, maximum: 5000 })),
  maxOutstandingConnects: opt(int('Connects in hello synchronization at once (default 16).', { minimum: 1, maximum: 1000 })),
  connectTimeout: opt(duration('Hello synchronization timeout (default 5s).', { min: '30ms', max: '60s' })),
  connectTimeoutMs: opt(int('Hello synchronization timeout in milliseconds; read only when connectTimeout is absent.', { minimum: 30, maximum: 60000 })),
  writeTimeout: opt(duration('Write timeout; 0 disables (default 0).')),
}
const channelOptions = obj(channelProps, { description: 'Channel options.' })

const heartbeatProps = {
  sendInterval: opt(duration('How often heartbeats are sent (default 10s).', { positive: true })),
  checkInterval: opt(duration('How often heartbeat state is checked (default 1s).', { positive: true })),
  closeUnresponsiveTimeout: opt(duration('Close a connection unresponsive this long (default 30s; 1m on links without this section).')),
}

const xgressProps = {
  mtu: opt(int('Maximum payload size; 0 means no limit.')),
  randomDrops: opt(bool('Drop payloads at random (testing).')),
  drop1InN: opt(int('With randomDrops, drop one payload in N.', { minimum: 1 })),
  txQueueSize: opt(int('Transmit queue size.')),
  txPortalStartSize: opt(int('Initial transmit window in bytes.')),
  txPortalMinSize: opt(int('Smallest transmit window in bytes.')),
  txPortalMaxSize: opt(int('Largest transmit window in bytes.')),
  txPortalIncreaseThresh: opt(int('Successful transmits before the window grows.')),
  txPortalIncreaseScale: opt(num('Window growth factor.', { minimum: 0 })),
  txPortalRetxThresh: opt(int('Retransmits before the window shrinks.')),
  txPortalRetxScale: opt(num('Window shrink factor on retransmits.', { minimum: 0 })),
  txPortalDupAckThresh: opt(int('Duplicate acknowledgements before the window shrinks.')),
  txPortalDupAckScale: opt(num('Window shrink factor on duplicate acknowledgements.', { minimum: 0 })),
  rxBufferSize: opt(int('Receive buffer size in bytes.')),
  retxStartMs: opt(int('First retransmit timeout in milliseconds.')),
  retxScale: opt(num('Retransmit timeout growth factor.', { minimum: 0 })),
  retxAddMs: opt(int('Milliseconds added to each retransmit timeout.')),
  retxMaxMs: opt(int('Largest retransmit timeout in milliseconds.')),
  maxRttScale: opt(num('Round-trip time scale limit.', { minimum: 0 })),
  maxCloseWaitMs: opt(int('Longest wait for a clean close in milliseconds.', { 'x-unit': 'ms' })),
  getCircuitTimeout: opt(duration('Timeout of a circuit lookup (default 30s).')),
  circuitStartTimeout: opt(duration('Timeout of a circuit start (default 3m).')),
  connectTimeout: opt(duration('Dial timeout; 0 uses the operating system default.')),
}

const identitySource = (what: string) => kind('identity-source', `${what}: a file path, file:<path>, pem:<PEM> or engine:<spec>.`, { minLength: 1 })
const identityProps = {
  cert: identitySource('Client certificate used to connect to the controller'),
  server_cert: opt(identitySource('Default server certificate for listeners and hosted services')),
  key: identitySource('Private key of the certificates'),
  server_key: opt(identitySource('Key of server_cert when it differs from key')),
  ca: opt(identitySource('CA bundle')),
  alt_server_certs: opt(Type.Array(obj({ server_cert: identitySource('Alternate server certificate (SNI)'), server_key: identitySource('Its key') }), { description: 'Alternate server certificates chosen by SNI.' })),
}
const identity = obj(identityProps, {
  description: 'Certificates and keys of the router: client, server, alternates by SNI, and the CA bundle.',
  'x-missing': 'the router cannot start without it',
})

const csrProps = {
  country: opt(str('Subject country.')),
  province: opt(str('Subject province.')),
  locality: opt(str('Subject locality.')),
  organization: opt(str('Subject organization.')),
  organizationalUnit: opt(str('Subject organizational unit.')),
  sans: obj({
    dns: opt(Type.Array(kind('dns-name', 'DNS name.'), { description: 'DNS SAN entries.' })),
    ip: opt(Type.Array(kind('ip', 'IP address.'), { description: 'IP SAN entries.' })),
    uri: opt(Type.Array(kind('uri', 'Absolute URI.'), { description: 'URI SAN entries.' })),
    email: opt(Type.Array(kind('email', 'E-mail address.'), { description: 'E-mail SAN entries.' })),
  }, { description: 'Subject alternative names; at least one is needed to accept SDK or router connections.', 'x-missing': 'the real router crashes (nil pointer) on a csr without sans' }),
}
const csr = obj(csrProps, { description: 'Certificate subject used at enrollment and renewal.' })

const ctrl = obj({
  endpoint: opt(kind('ctrl-address', 'Controller address tls:<host>:<port>; wins over endpoints.')),
  endpoints: opt(Type.Array(kind('ctrl-address', 'Controller address tls:<host>:<port>.'), { minItems: 1, description: 'Controller addresses (ignored when endpoint is set).' })),
  bind: opt(kind('interface', 'Local interface name or IP used to dial the controller.', { minLength: 1 })),
  defaultRequestTimeout: opt(duration('Controller request timeout.', { default: '5s', positive: true })),
  startupTimeout: opt(duration('Exit if no controller was reached by then; 0 disables.', { default: '30s' })),
  endpointsFile: opt(str('File where the current cluster endpoints are kept (default endpoints.yml beside the configuration).', { minLength: 1 })),
  heartbeats: opt(obj({ ...heartbeatProps, unresponsiveAfter: opt(duration('Mark the controller unresponsive after this long (default 5s).', { positive: true })) }, { description: 'Heartbeats toward the controllers.' })),
  options: opt(channelOptions),
  rateLimiter: opt(obj({
    enabled: opt(bool('Adaptive rate limiting of controller requests.', { default: true })),
    minSize: int('Smallest queue size.', { minimum: 5, maximum: 1000, 'x-missing': 'the real router defaults it to 1 and then rejects anything below 5' }),
    maxSize: opt(int('Largest queue size.', { minimum: 5, maximum: 1000, default: 250 })),
    timeout: opt(duration('Queue wait timeout.', { default: '30s' })),
    successThreshold: opt(num('Success ratio that grows the queue.', { minimum: 0, maximum: 1, default: 0.9 })),
    increaseFactor: opt(num('Queue growth factor (usually below 2).', { exclusiveMinimum: 1, default: 1.02 })),
    decreaseFactor: opt(num('Queue shrink factor.', { minimum: 0, maximum: 1, default: 0.9 })),
    increaseCheckInterval: opt(int('Successes between growth checks.', { minimum: 1, default: 10 })),
    decreaseCheckInterval: opt(int('Failures between shrink checks.', { minimum: 1, default: 10 })),
  }, { description: 'Adaptive rate limiter of controller requests.' })),
  listeners: opt(Type.Array(obj({
    bind: kind('listen-address', 'Listen address for controllers.'),
    advertise: opt(kind('dial-address', 'Address controllers dial.')),
    bindInterface: opt(str('Interface of the listener.')),
    groups: opt(groups),
    options: opt(channelOptions),
  }), { description: 'Listeners on which controllers connect to the router.' })),
}, { description: 'Addressing of and connection to the controller.', 'x-missing': 'the router cannot start without it' })

const dialer = obj({
  binding: kind('dialer-binding', 'Xgress binding of the dialer.', { examples: [...DIALER_BINDINGS] }),
  options: opt(obj(xgressProps, { description: 'Xgress options (mtu and others).' })),
})

const edge = obj({
  csr: opt(obj(csrProps, { description: 'Deprecated location of csr.', deprecated: true, 'x-deprecated': 'edge.csr is deprecated; put csr at the top level' })),
  db: opt(str('File of the router data model cache.', { minLength: 1 })),
  dbSaveIntervalSeconds: opt(int('Seconds between saves of the data model cache; below 30 the router uses 30.', { default: 30 })),
  heartbeatIntervalSeconds: opt(int('API session heartbeat interval in seconds.', { minimum: 10, maximum: 60, default: 60, 'x-severity': 'warning', 'x-why': 'the router ignores it and uses 60' })),
  sessionValidateChunkSize: opt(int('Sessions validated per request.', { minimum: 1, default: 1000 })),
  sessionValidateMinInterval: opt(duration('Shortest wait between session validations.', { default: '250ms' })),
  sessionValidateMaxInterval: opt(duration('Longest wait between session validations.', { default: '1500ms' })),
  apiProxy: opt(obj({ listener: kind('host-port', 'Local host:port serving the proxied API.'), upstream: kind('host-port', 'Controller edge API host:port.') }, { description: 'Proxy of the controller API.' })),
}, { description: 'Present (even empty) to enable edge functionality such as SDK connectivity.', 'x-null': 'edge has an empty value, which the router treats as absent: it starts in fabric-only mode; write "edge: {}" to enable edge functionality' })

const forwarder = obj({
  faultTxInterval: opt(ms('Wait between checks for faulted circuits; 0 disables', 15000)),
  idleCircuitTimeout: opt(ms('Wait before a circuit is marked idle and a confirmation is requested', 60000)),
  idleTxInterval: opt(ms('Wait between checks confirming idle circuits are in use; 0 disables', 60000)),
  linkDialQueueLength: opt(int('Maximum queued outgoing router link dials.', { minimum: 1, maximum: 10000, default: 1000 })),
  linkDialWorkerCount: opt(int('Maximum workers emptying the link dial queue.', { minimum: 1, maximum: 10000, default: 32 })),
  rateLimitedQueueLength: opt(int('Maximum rate limited operations to the controller, including terminator creates.', { minimum: 1, maximum: 50000, default: 5000 })),
  rateLimitedWorkerCount: opt(int('Maximum workers emptying the rate limited queue.', { minimum: 1, maximum: 10000, default: 5 })),
  xgressCloseCheckInterval: opt(ms('Wait before un-routing an idle circuit', 5000)),
  xgressDialDwellTime: opt(ms('Wait before dialing a service for egress', 0)),
  xgressDialQueueLength: opt(int('Maximum queued outgoing service dials.', { minimum: 1, maximum: 10000, default: 1000 })),
  xgressDialWorkerCount: opt(int('Maximum workers emptying the xgress dial queue.', { minimum: 1, maximum: 10000, default: 128 })),
  unresponsiveLinkTimeout: opt(Type.Union([int('Milliseconds.', { minimum: 5000, 'x-unit': 'ms' }), duration('Duration.', { min: '5s' })], { description: 'Close a link unresponsive this long; at least 5s.', default: '1m' })),
  latencyProbeInterval: opt(ignored('current routers no longer read latencyProbeInterval')),
  latencyProbeTimeout: opt(ignored('current routers no longer read latencyProbeTimeout')),
  idleSessionTimeout: opt(ignored('current routers no longer read idleSessionTimeout')),
}, { description: 'Forwarding: idle circuits, dial queues.', default: {}, 'x-null': 'forwarder has an empty value; the router warns and uses the defaults' })

const pingCheck = obj({
  interval: opt(duration('Frequency of controller connection checks.', { default: '30s', positive: true })),
  timeout: opt(duration('Time before giving up on a ping.', { default: '15s', positive: true })),
  initialDelay: opt(duration('Wait before the first ping.', { default: '15s' })),
}, { description: 'Controller ping check.', default: {} })
const linkCheck = obj({
  interval: opt(duration('How often the check runs.', { default: '5s', positive: true })),
  initialDelay: opt(duration('Wait before the first run.', { default: '1s' })),
  minLinks: opt(int('Links needed for the check to pass; 0 only reports the existing links.', { default: 0, 'x-why': 'the real router crashes on a non-integer minLinks' })),
}, { description: 'Link check.', default: {} })

const backoff = (which: string, min: string, max: string, factor: number) =>
  obj({
    minRetryInterval: opt(duration('Shortest wait between dial attempts.', { default: min, min: '10ms', max: '24h' })),
    maxRetryInterval: opt(duration('Longest wait between dial attempts.', { default: max, min: '10ms', max: '24h' })),
    retryBackoffFactor: opt(num('Growth of the wait after each failure.', { default: factor, minimum: 1, maximum: 100 })),
  }, { description: `Retry policy when the dialed router is ${which}.`, default: {} })

const linkBinding = Type.Literal('transport', { description: 'Only transport is supported.', 'x-why': 'transport is the only link binding' })

const link = obj({
  listeners: opt(Type.Array(obj({
    binding: linkBinding,
    bind: kind('listen-address', 'Listen address, e.g. tls:0.0.0.0:4022.'),
    advertise: kind('dial-address', 'Address other routers dial, e.g. tls:router.example.com:4022.'),
    bindInterface: opt(str('Interface of the listener.')),
    groups: opt(groups),
    options: opt(channelOptions),
  }), { description: 'The router listens for other routers.' })),
  dialers: opt(Type.Array(obj({
    binding: linkBinding,
    split: opt(bool('Separate connections for payloads and acknowledgements.', { default: true })),
    bind: opt(kind('interface', 'Network interface or local IP for outbound data.', { minLength: 1 })),
    groups: opt(groups),
    options: opt(channelOptions),
    healthyDialBackoff: opt(backoff('connected to the controller', '5s', '5m', 1.5)),
    unhealthyDialBackoff: opt(backoff('not connected to the controller', '1m', '1h', 10)),
    maxDefaultConnections: opt(int('Payload connections per link.', { minimum: 1, maximum: 100, default: 3 })),
    maxAckConnections: opt(int('Acknowledgement connections per link.', { minimum: 0, maximum: 100, default: 1 })),
    startupDelay: opt(duration('Wait before the first dial.', { default: '3s' })),
  }), { description: 'The router dials other routers.' })),
  heartbeats: opt(obj(heartbeatProps, { description: 'Link heartbeats.' })),
  payloadSenderQueueSize: opt(int('Payload sender queue size.', { minimum: 1, default: 128 })),
  ackSenderQueueSize: opt(int('Acknowledgement sender queue size.', { minimum: 1, default: 64 })),
}, { description: 'Link listeners and dialers of the router mesh.' })

const whenBinding = (bindings: string[], then: TSchema) => ({ if: { properties: { binding: { enum: bindings } }, required: ['binding'] }, then })
const notAnAddress = ignored('this binding does not listen on an address')
const listenerAddress = {
  bind: opt(kind('listen-address', 'Listen address, e.g. tls:0.0.0.0:3022.')),
  address: opt(kind('listen-address', 'Listen address (same as bind).')),
  advertise: kind('listener-advertise', 'Address clients use, host:port.'),
}

const listener = obj({
  binding: Type.Union(LISTENER_BINDINGS.map((b) => Type.Literal(b)), { description: 'Xgress component providing the server side.' }),
  bind: opt(Type.Unknown({ description: 'Listen address.' })),
  address: opt(Type.Unknown({ description: 'Listen address (same as bind).' })),
  advertise: opt(Type.Unknown({ description: 'Address clients use.' })),
  options: opt(Type.Unknown({ description: 'Component options (by binding).' })),
}, {
  description: 'A listener open to outside clients.',
  allOf: [
    whenBinding(['edge'], Type.Object({
      address: kind('edge-listen-address', 'Listen address, e.g. tls:0.0.0.0:3022.'),
      bind: opt(ignored('the edge binding listens on address')),
      advertise: opt(ignored('the edge binding reads options.advertise')),
      options: obj({
        advertise: kind('edge-advertise', 'host:port that SDKs connect to (no protocol).'),
        ...xgressProps,
        ...channelProps,
        lookupSessionTimeout: opt(duration('Wait for a session to arrive (default 5s).')),
        lookupApiSessionTimeout: opt(duration('Wait for an API session to arrive (default 5s).')),
        getSessionTimeout: opt(ignored('current routers no longer read getSessionTimeout')),
      }, { description: 'Edge listener options.', 'x-missing': 'the real router requires options.advertise on an edge listener' }),
    })),
    whenBinding(['tunnel'], Type.Object({
      bind: opt(notAnAddress),
      address: opt(notAnAddress),
      advertise: opt(notAnAddress),
      options: opt(obj({
        mode: opt(kind('tunnel-mode', 'tproxy, host or proxy (or tproxy:<diverter path>).', { default: 'tproxy' })),
        resolver: opt(oneOrMany('Nameserver address(es) in tproxy mode, e.g. udp://127.0.0.1:53.', kind('resolver', 'Nameserver URL.'))),
        services: opt(Type.Array(kind('tunnel-service', '<service>:<port>'), { description: 'Services and ports of proxy mode.' })),
        svcPollRate: opt(duration('How often services are polled (default 15s).', { positive: true })),
        dnsSvcIpRange: opt(kind('cidr', 'Range of intercept IPs (default 100.64.0.1/10).')),
        dnsUpstream: opt(oneOrMany('Upstream nameserver(s).')),
        dnsUpstreamMode: opt(str('How upstream nameservers are used (default parallel).')),
        dnsUnanswerable: opt(str('Answer to unanswerable queries (default refused).')),
        lanIf: opt(oneOrMany('LAN interface(s).')),
        udpIdleTimeout: opt(duration('Idle timeout of UDP flows.')),
        udpCheckInterval: opt(duration('Check interval of UDP flows.', { positive: true })),
        ...xgressProps,
      }, { description: 'Tunnel options.' })),
    })),
    whenBinding(['transport', 'transport_udp', 'edge_transport'], Type.Object({ ...listenerAddress, options: opt(obj(xgressProps, { description: 'Xgress options.' })) })),
    whenBinding(['proxy', 'proxy_udp'], Type.Object({
      ...listenerAddress,
      options: obj({ service: str('Service the proxy forwards to.', { minLength: 1 }), ...xgressProps }, { description: 'Proxy options.', 'x-missing': 'the real router needs options.service on a proxy listener' }),
    })),
  ],
})

const metrics = obj({
  reportInterval: opt(duration('Wait between metrics messages to the controller.', { default: '1m', positive: true })),
  messageQueueSize: opt(int('Maximum buffered metrics messages.', { default: 10 })),
  intervalAgeThreshold: opt(duration('Minimum age of a batch before it may be sent; 0 means 80s.', { default: '80s' })),
  eventQueueSize: opt(int('Metrics event queue size; below 16 the router uses 16.', { default: 256 })),
  enableDataDelayMetric: opt(Type.Union([Type.Boolean(), Type.String()], { description: 'true enables the data delay metric.' })),
}, { description: 'Metrics reporting.', default: {} })

const westworld3 = obj({
  profile_version: opt(int('Profile version.')),
  tx_portal_min_sz: opt(int('Smallest transmit window.')),
  tx_portal_max_sz: opt(int('Largest transmit window.')),
  instrument: opt(obj({ name: opt(str('Instrument name.')), path: opt(str('Output path.')), snapshot_ms: opt(int('Snapshot interval in milliseconds.')) })),
  enabled: opt(bool('Enable westworld3.')),
}, { description: 'The internally tuned TCP protocol.' })

const webServer = obj({
  name: str('Server name.', { minLength: 1 }),
  apis: Type.Array(obj({
    binding: Type.Literal('health-checks', { description: 'API to serve.', 'x-why': 'the router registers only the health-checks API' }),
    options: opt(anyMap('API options (none currently).')),
  }), { minItems: 1, description: 'APIs of the server.' }),
  bindPoints: Type.Array(obj({
    interface: opt(kind('host-port', 'Listen interface:port.')),
    address: opt(kind('host-port', 'Public host:port.')),
    newAddress: opt(kind('host-port', 'host:port clients should move to.')),
    identity: opt(obj({
      file: opt(str('Identity file.')),
      env: opt(str('Environment variable holding a base64 identity.')),
      service: opt(str('Service to bind.')),
      tlsClientAuthenticationPolicy: opt(str('Client certificate policy.')),
      listenOptions: opt(obj({ bindUsingEdgeIdentity: opt(bool('Bind using the edge identity.')) })),
      serveTLS: opt(bool('Serve TLS (default true).')),
    }, { description: 'Serve over the overlay instead of an interface.' })),
  }), { minItems: 1, description: 'Where the server listens.' }),
  identity: opt(obj(identityProps, { description: 'Server identity (defaults to the router identity).' })),
  options: opt(obj({
    readTimeout: opt(duration('Read timeout.', { default: '5s', positive: true })),
    writeTimeout: opt(duration('Write timeout.', { default: '10s', positive: true })),
    idleTimeout: opt(duration('Idle timeout.', { default: '5s', positive: true })),
    minTLSVersion: opt(Type.Union(['TLS1.0', 'TLS1.1', 'TLS1.2', 'TLS1.3'].map((v) => Type.Literal(v)), { default: 'TLS1.2' })),
    maxTLSVersion: opt(Type.Union(['TLS1.0', 'TLS1.1', 'TLS1.2', 'TLS1.3'].map((v) => Type.Literal(v)), { default: 'TLS1.3' })),
  }, { description: 'HTTP server options.', default: {} })),
})

/**
 * The whole router configuration file, version 3: the seed's sections first, then the keys current
 * routers also read. Unknown keys are reported with a suggestion; they never stop the router.
 * @see ../shared/seeds/001_c6b96f1c29405e86.txt (router configuration file reference)
 */
export const RouterConfigSchema = obj({
  v: Type.Integer({ const: 3, description: 'Version of the configuration file; only 3 is supported.', 'x-why': 'the real router crashes on any other value', 'x-missing': 'the real router crashes without it' }),
  ctrl,
  csr: opt(csr),
  dialers: opt(Type.Array(dialer, { description: 'Dialers used to terminate services for egress.' })),
  edge: opt(edge),
  forwarder: opt(forwarder),
  healthChecks: opt(obj({ ctrlPingCheck: opt(pingCheck), linkCheck: opt(linkCheck) }, { description: 'Router health checks.', default: {} })),
  identity,
  link: opt(link),
  listeners: opt(Type.Array(listener, { description: 'Interfaces, ports and addresses open to outside clients.' })),
  metrics: opt(metrics),
  trace: opt(obj({ path: str('File receiving decoded messages.', { minLength: 1 }) }, { description: 'Debug output of all router messages.' })),
  transport: opt(obj({
    westworld3: opt(westworld3),
    ws: opt(anyMap('WebSocket transport settings.')),
    wss: opt(anyMap('Secure WebSocket transport settings.')),
    tls: opt(anyMap('TLS transport settings.')),
    dtls: opt(anyMap('DTLS transport settings.')),
    tcp: opt(anyMap('TCP transport settings.')),
    udp: opt(anyMap('UDP transport settings.')),
  }, { description: 'Transport level configuration.' })),
  profile: opt(obj({
    cpu: opt(obj({ path: str('Output file of CPU profile data.', { minLength: 1 }) })),
    memory: opt(obj({ path: str('Output file of memory profile data.', { minLength: 1 }), intervalMs: opt(int('Memory profile interval in milliseconds.', { minimum: 1, default: 15000, 'x-unit': 'ms' })) })),
  }, { description: 'CPU and memory profiling.' })),
  web: opt(Type.Array(webServer, { description: 'Web servers exposing APIs (health-checks).' })),
  enableDebugOps: opt(bool('Enable debug operations.')),
  plugins: opt(strings('Plugins to load.')),
  proxy: opt(obj({
    type: Type.Union([Type.Literal('none'), Type.Literal('http')], { description: 'Proxy type.' }),
    address: opt(kind('host-port', 'Proxy host:port (http).')),
    username: opt(str('Proxy user.')),
    password: opt(str('Proxy password.')),
  }, { description: 'Proxy for outbound connections.' })),
  tls: opt(obj({ handshakeTimeout: opt(duration('TLS handshake timeout of all listeners.', { positive: true })) }, { description: 'Process-wide TLS settings.' })),
  connectEvents: opt(obj({
    enabled: opt(bool('Report connect events.', { default: true })),
    batchInterval: opt(duration('Batching interval.', { default: '3s', min: '250ms', max: '10m', severity: 'warning', why: 'the router clamps it into range' })),
    fullSyncInterval: opt(duration('Full sync interval.', { default: '5m', min: '1s', max: '24h', severity: 'warning', why: 'the router clamps it into range' })),
    maxQueuedEvents: opt(int('Queued events limit.', { default: 100000, maximum: 10000000, 'x-severity': 'warning', 'x-why': 'the router clamps it into range' })),
  }, { description: 'Connect event reporting.' })),
  interfaceDiscovery: opt(obj({
    disabled: opt(bool('Disable interface discovery.', { default: false })),
    checkInterval: opt(duration('Check interval.', { default: '1m', positive: true })),
    minReportInterval: opt(duration('Minimum report interval.', { default: '24h' })),
  }, { description: 'Discovery of network interfaces.' })),
  managedConfig: opt(obj({ allow: opt(strings('Sections the controller may manage; ["all"] allows every one.')) }, { description: 'Controller-managed configuration.' })),
}, {
  title: 'Router configuration file (v3)',
  description: 'Configuration file of a router of the overlay network, version 3.',
})

/** A router configuration as the schema describes it (before defaults). */
export type RouterConfig = Static<typeof RouterConfigSchema>
