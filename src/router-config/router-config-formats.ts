/**
 * Value syntax the schema marks with `x-kind` but cannot express precisely: durations with bounds,
 * transport addresses, host:port, interfaces, SAN entries, tunnel options, bindings. Each check
 * returns a sentence for the operator, or nothing when the value is fine.
 */
import { DIALER_BINDINGS } from '../../schemas/router-config.ts'
import { checkHost, checkPort, isHostName, isIpLiteral, parseTransportAddress, splitHostPort } from './router-config-address.ts'
import { durationNs, parseDuration } from './router-config-duration.ts'
import type { Severity } from './router-config-findings.ts'
import { nearest } from './router-config-suggest.ts'

/** The schema keywords a format check may read. */
export interface KindOptions {
  'x-min'?: string
  'x-max'?: string
  'x-positive'?: boolean
  'x-severity'?: Severity
}

/** A problem with a value; errors unless `severity` says otherwise. */
export interface FormatIssue {
  message: string
  severity?: Severity
}

/** One value kind: what it looks like (for "expected ..." messages) and its check. */
export interface ValueKind {
  expected: string
  check: (value: string, options: KindOptions) => FormatIssue | undefined
}

const q = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s)
const issue = (message: string, severity?: Severity): FormatIssue => ({ message, ...(severity && { severity }) })
const isWildcardHost = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === ''

function checkDuration(value: string, o: KindOptions): FormatIssue | undefined {
  const parsed = parseDuration(value)
  if (!parsed.ok) return issue(parsed.reason)
  if (parsed.ns < 0) return issue(`${q(value)} is negative; a duration here must not be`)
  if (o['x-positive'] && parsed.ns === 0) return issue('must be longer than 0')
  if (o['x-min'] && parsed.ns < durationNs(o['x-min'])) return issue(`${value} is below the minimum of ${o['x-min']}`, o['x-severity'])
  if (o['x-max'] && parsed.ns > durationNs(o['x-max'])) return issue(`${value} is above the maximum of ${o['x-max']}`, o['x-severity'])
  return undefined
}

function checkDialAddress(value: string, what: string): FormatIssue | undefined {
  const parsed = parseTransportAddress(value, { hostRequired: true, minPort: 1 })
  if ('error' in parsed) return issue(`${q(value)} is not ${what}: ${parsed.error}`)
  if (isWildcardHost(parsed.host)) return issue(`${q(value)} advertises ${parsed.host}, which other machines cannot dial`, 'warning')
  return undefined
}

function checkHostPort(value: string, minPort: number): string | undefined {
  const split = splitHostPort(value)
  if ('error' in split) return split.error
  if (split.host === '') return 'the host is missing'
  return checkHost(split.host, split.bracketed) ?? checkPort(split.port, minPort)
}

function checkEdgeAdvertise(value: string): FormatIssue | undefined {
  if (/^(tls|dtls|tcp|ws|wss|udp):/.test(value) && value.split(':').length > 2) {
    return issue(`${q(value)} has a protocol; the advertise address of an edge listener is host:port, e.g. edge.example.com:3022`)
  }
  if (value.includes('[') || value.split(':').length > 2) {
    return issue(`${q(value)}: the router splits an edge advertise address on ":" and cannot take an IPv6 literal; use a host name`)
  }
  if (!value.includes(':')) return issue(`${q(value)} has no port; the real router crashes on an edge advertise address without ":"`)
  const problem = checkHostPort(value, 1)
  if (problem) return issue(`${q(value)} is not host:port: ${problem}`)
  if (isWildcardHost(value.split(':')[0])) return issue(`${q(value)} advertises a wildcard address, which SDKs cannot dial`, 'warning')
  return undefined
}

function checkUri(value: string): FormatIssue | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return issue(`${q(value)} is not an absolute URI (it needs a scheme, e.g. spiffe://example.org/router)`)
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return issue(`${q(value)} contains spaces or control characters`)
  if (/%(?![0-9A-Fa-f]{2})/.test(value)) return issue(`${q(value)} has an invalid percent-escape`)
  return undefined
}

function checkCidr(value: string): FormatIssue | undefined {
  const [ip, bits, extra] = value.split('/')
  if (extra !== undefined || bits === undefined || !/^[0-9]{1,3}$/.test(bits) || !isIpLiteral(ip)) {
    return issue(`${q(value)} is not a CIDR range such as 100.64.0.1/10`)
  }
  const max = ip.includes(':') ? 128 : 32
  return Number(bits) > max ? issue(`prefix /${bits} is longer than ${max} bits`) : undefined
}

/** Every value kind named by `x-kind` in the schema. */
export const VALUE_KINDS: Record<string, ValueKind> = {
  duration: { expected: 'a duration such as 30s or 1h30m', check: checkDuration },
  'ctrl-address': {
    expected: 'a controller address tls:<host>:<port>',
    check: (v) => {
      const parsed = parseTransportAddress(v, { hostRequired: true, minPort: 1 })
      if (!('error' in parsed)) {
        return parsed.protocol === 'tls' ? undefined : issue(`${q(v)}: controller addresses have the form tls:<host>:<port>, not ${parsed.protocol}:`)
      }
      if (v.startsWith('tls:')) return issue(`${q(v)} is not a controller address tls:<host>:<port>: ${parsed.error}`)
      const bare = parseTransportAddress(`tls:${v}`, { hostRequired: true, minPort: 1 })
      return issue(`${q(v)} is not a controller address: expected tls:<host>:<port>${'error' in bare ? '' : `; did you mean "tls:${v}"?`}`)
    },
  },
  'listen-address': {
    expected: 'a listen address such as tls:0.0.0.0:3022',
    check: (v) => {
      const parsed = parseTransportAddress(v, { hostRequired: false, minPort: 0 })
      return 'error' in parsed ? issue(`${q(v)} is not a listen address <protocol>:<host>:<port>: ${parsed.error}`) : undefined
    },
  },
  'dial-address': { expected: 'an address such as tls:router.example.com:3022', check: (v) => checkDialAddress(v, 'an address <protocol>:<host>:<port>') },
  'edge-listen-address': {
    expected: 'a listen address such as tls:0.0.0.0:3022',
    check: (v) => {
      const parsed = parseTransportAddress(v, { hostRequired: false, minPort: 0 })
      if ('error' in parsed) return issue(`${q(v)} is not a listen address <protocol>:<host>:<port>: ${parsed.error}`)
      if (parsed.bracketed) return issue(`${q(v)}: the router splits an edge listener address on ":" and cannot take an IPv6 literal`)
      return undefined
    },
  },
  'edge-advertise': { expected: 'host:port such as edge.example.com:3022', check: checkEdgeAdvertise },
  'listener-advertise': {
    expected: 'host:port such as router.example.com:3022',
    check: (v) => {
      if (/^(tls|dtls|tcp|ws|wss|udp):/.test(v) && v.split(':').length > 2) return checkDialAddress(v, 'an address <protocol>:<host>:<port>')
      const problem = checkHostPort(v, 1)
      return problem ? issue(`${q(v)} is not host:port: ${problem}`) : undefined
    },
  },
  'host-port': {
    expected: 'host:port such as 0.0.0.0:8081',
    check: (v) => {
      const problem = checkHostPort(v.trim(), 1)
      return problem ? issue(`${q(v)} is not host:port: ${problem}`) : undefined
    },
  },
  interface: {
    expected: 'a local interface name or IP address',
    check: (v) => {
      if (isIpLiteral(v)) return undefined
      if (v.includes(':')) return issue(`${q(v)} is an address; expected a local interface name (eth0) or IP address, without port or protocol`)
      if (/\s/.test(v)) return issue(`${q(v)} contains spaces; expected a local interface name or IP address`)
      return undefined
    },
  },
  ip: { expected: 'an IP address', check: (v) => (isIpLiteral(v) ? undefined : issue(`${q(v)} is not an IP address`)) },
  uri: { expected: 'an absolute URI', check: checkUri },
  email: { expected: 'an e-mail address', check: (v) => (/^[^\s@]+@[^\s@]+$/.test(v) ? undefined : issue(`${q(v)} is not an e-mail address`)) },
  'dns-name': {
    expected: 'a DNS name',
    check: (v) => {
      if (isIpLiteral(v)) return issue(`${q(v)} is an IP address; put it in sans.ip so that clients checking the IP accept the certificate`, 'warning')
      return isHostName(v, true) ? undefined : issue(`${q(v)} is not a valid DNS name`)
    },
  },
  'identity-source': {
    expected: 'a file path, file:<path>, pem:<PEM> or engine:<spec>',
    check: (v) => {
      if (v.startsWith('pem:') && !v.includes('-----BEGIN')) return issue('a pem: value must hold a PEM block (-----BEGIN ...)')
      if ((v.startsWith('file:') || v.startsWith('engine:')) && v.slice(v.indexOf(':') + 1).trim() === '') return issue(`${q(v)} names nothing after the prefix`)
      return undefined
    },
  },
  'tunnel-mode': {
    expected: 'tproxy, host or proxy',
    check: (v) => {
      if (v === 'tproxy' || v === 'host' || v === 'proxy' || (v.startsWith('tproxy:') && v.length > 7)) return undefined
      const hint = nearest(v, ['tproxy', 'host', 'proxy'])
      return issue(`invalid mode ${q(v)}: must be one of tproxy, host, proxy (or tproxy:<diverter path>)${hint ? `; did you mean "${hint}"?` : ''}`)
    },
  },
  'tunnel-service': {
    expected: '<service>:<port>',
    check: (v) => {
      const m = /^([^:\s]+):([^:]*)(?::(tcp|udp))?$/.exec(v)
      if (!m) return issue(`${q(v)} is not <service>:<port> (optionally :tcp or :udp)`)
      const problem = checkPort(m[2], 1)
      return problem ? issue(`${q(v)}: ${problem}`) : undefined
    },
  },
  resolver: {
    expected: 'a nameserver URL such as udp://127.0.0.1:53',
    check: (v) => {
      const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.+)$/.exec(v)
      const problem = m ? checkHostPort(m[2], 1) : 'expected <scheme>://<host>:<port>'
      return problem ? issue(`${q(v)} is not a nameserver URL such as udp://127.0.0.1:53: ${problem}`) : undefined
    },
  },
  cidr: { expected: 'a CIDR range such as 100.64.0.1/10', check: checkCidr },
  'dialer-binding': {
    expected: 'a dialer binding',
    check: (v) => {
      if ((DIALER_BINDINGS as readonly string[]).includes(v)) return undefined
      const hint = nearest(v, DIALER_BINDINGS)
      const known = DIALER_BINDINGS.join(', ')
      return issue(`unknown dialer binding ${q(v)} (known: ${known})${hint ? `; did you mean "${hint}"?` : ''}; the router fails only when a service uses it`, 'warning')
    },
  },
}
