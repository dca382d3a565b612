/**
 * Address syntax as the router parses it: `<proto>:<host>:<port>` transport addresses, Go-style
 * `host:port` splitting, IP literals and host names. Pure parsing; messages are for operators.
 */
import { isIPv4, isIPv6 } from 'node:net'

/** Protocols with an address parser registered in the router, in the order it tries them. */
export const TRANSPORT_PROTOCOLS = ['tls', 'dtls', 'tcp', 'ws', 'wss', 'udp'] as const
/** One of {@link TRANSPORT_PROTOCOLS}. */
export type TransportProtocol = (typeof TRANSPORT_PROTOCOLS)[number]

/** A split `host:port`; `bracketed` is true for `[ipv6]:port`. */
export interface HostPort {
  host: string
  port: string
  bracketed: boolean
}

/** Splits `host:port` as Go's net.SplitHostPort does, or says why it cannot. */
export function splitHostPort(text: string): HostPort | { error: string } {
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return { error: 'missing "]" after an IPv6 address' }
    if (text[close + 1] !== ':') return { error: 'missing port after "]"' }
    const host = text.slice(1, close)
    const port = text.slice(close + 2)
    if (port.includes(':')) return { error: 'too many colons' }
    return { host, port, bracketed: true }
  }
  const colon = text.lastIndexOf(':')
  if (colon < 0) return { error: 'missing port (expected host:port)' }
  const host = text.slice(0, colon)
  if (host.includes(':')) return { error: 'too many colons; write an IPv6 address in brackets, e.g. [::1]:3022' }
  if (host.includes('[') || host.includes(']')) return { error: 'unexpected "[" or "]"' }
  return { host, port: text.slice(colon + 1), bracketed: false }
}

/** An IPv4 or IPv6 literal as Go's net.ParseIP accepts it (no zone, no leading zeros in IPv4). */
export function isIpLiteral(text: string): boolean {
  if (text.includes('%')) return false
  return isIPv4(text) || isIPv6(text)
}

const LABEL = /^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$/

/** A DNS host name: dot-separated labels of letters, digits, `-` and `_`, at most 253 characters. */
export function isHostName(text: string, allowWildcard = false): boolean {
  let name = text.endsWith('.') ? text.slice(0, -1) : text
  if (allowWildcard && name.startsWith('*.')) name = name.slice(2)
  if (name === '' || name.length > 253) return false
  return name.split('.').every((label) => label.length <= 63 && LABEL.test(label))
}

/** Checks a host (IP literal or name); `undefined` when fine, else the reason. */
export function checkHost(host: string, bracketed: boolean): string | undefined {
  if (bracketed) return isIPv6(host) ? undefined : `${JSON.stringify(host)} in brackets is not an IPv6 address`
  if (/^[0-9.]+$/.test(host)) return isIPv4(host) ? undefined : `${JSON.stringify(host)} is not a valid IPv4 address`
  if (isHostName(host)) return undefined
  return `${JSON.stringify(host)} is not a valid host name or IP address`
}

/** Checks a decimal port; `undefined` when fine, else the reason. */
export function checkPort(port: string, min: number): string | undefined {
  if (port === '') return 'the port is missing'
  if (!/^[0-9]+$/.test(port)) return `port ${JSON.stringify(port)} is not a number`
  const n = Number(port)
  if (n > 65535) return `port ${port} is out of range (at most 65535)`
  if (n < min) return `port ${port} is out of range (at least ${min})`
  return undefined
}

/** A parsed transport address. */
export interface TransportAddress extends HostPort {
  protocol: TransportProtocol
}

/** Parses `<proto>:<host>:<port>`; `hostRequired` and `minPort` tighten it for addresses that are dialed. */
export function parseTransportAddress(
  text: string,
  options: { hostRequired: boolean; minPort: number },
): TransportAddress | { error: string } {
  const colon = text.indexOf(':')
  const protocol = colon < 0 ? '' : text.slice(0, colon)
  if (!(TRANSPORT_PROTOCOLS as readonly string[]).includes(protocol)) {
    if (protocol === 'transwarp' || protocol === 'transwarptls') {
      return { error: `the ${protocol} protocol is no longer supported by the router (use ${TRANSPORT_PROTOCOLS.join(', ')})` }
    }
    if (/^[^:]+:[0-9]+$/.test(text)) return { error: `no protocol; write it as tls:${text} (protocols: ${TRANSPORT_PROTOCOLS.join(', ')})` }
    const what = colon < 0 || /^[0-9]/.test(protocol) || protocol.includes('.') ? 'no protocol' : `unknown protocol ${JSON.stringify(protocol)}`
    return { error: `${what}; expected <protocol>:<host>:<port> with protocol ${TRANSPORT_PROTOCOLS.join(', ')}` }
  }
  const split = splitHostPort(text.slice(colon + 1))
  if ('error' in split) return split
  if (split.host === '') {
    if (options.hostRequired) return { error: 'the host is missing' }
  } else {
    const hostProblem = checkHost(split.host, split.bracketed)
    if (hostProblem) return { error: hostProblem }
  }
  const portProblem = checkPort(split.port, options.minPort)
  if (portProblem) return { error: portProblem }
  return { protocol: protocol as TransportProtocol, ...split }
}
