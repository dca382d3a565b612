/**
 * Cross-field rules of listeners, links and addresses that a schema cannot express:
 * - a listener other than edge and tunnel needs bind or address;
 * - edge enabled requires a listeners list with an edge listener; edge and tunnel listeners require edge;
 * - tunnel options must suit the mode (resolver in tproxy, services in proxy);
 * - no two listeners may listen on the same port;
 * - link dial backoff: minRetryInterval ≤ maxRetryInterval (with defaults);
 * - advertised hosts should be covered by the csr SANs (the router refuses uncovered ones).
 */
import { isIpLiteral, parseTransportAddress, splitHostPort } from './router-config-address.ts'
import { parseDuration } from './router-config-duration.ts'
import { asMap, childOf, entryOf, itemsOf, objectAt, stringOf, stringsOf, type RuleContext } from './router-config-tree.ts'
import type { ConfigNode } from './router-config-yaml.ts'

const ADDRESS_BINDINGS = new Set(['transport', 'transport_udp', 'edge_transport', 'proxy', 'proxy_udp'])

function checkListenerAddresses({ root, findings }: RuleContext): void {
  itemsOf(childOf(root, 'listeners')).forEach((listener, i) => {
    const binding = stringOf(childOf(listener, 'binding'))
    if (listener.kind !== 'map' || binding === undefined || !ADDRESS_BINDINGS.has(binding)) return
    const bind = entryOf(listener, 'bind')
    const address = entryOf(listener, 'address')
    if (!bind && !address) {
      findings.error(`listeners[${i}].bind`, listener.offset, `missing required field bind (or address): the listen address of the ${binding} listener`)
    } else if (bind && address && stringOf(bind.value) !== stringOf(address.value)) {
      findings.warning(`listeners[${i}].address`, address.keyOffset, 'both bind and address are set to different addresses; set only one')
    }
  })
}

function checkEdgeBindings({ root, findings }: RuleContext): void {
  const edge = childOf(root, 'edge')
  const edgeEnabled = edge?.kind === 'map'
  const listenersEntry = entryOf(root, 'listeners')
  const listeners = itemsOf(listenersEntry?.value)
  if (edgeEnabled) {
    if (!listenersEntry) {
      findings.error('listeners', root.offset, 'edge is enabled, so the router requires a listeners list with at least one edge listener')
    } else if (listenersEntry.value.kind === 'seq' && !listeners.some((l) => stringOf(childOf(l, 'binding')) === 'edge')) {
      findings.error('listeners', listenersEntry.value.offset, 'edge is enabled but no listener has binding edge; the router refuses to start without one')
    }
    return
  }
  listeners.forEach((listener, i) => {
    const binding = childOf(listener, 'binding')
    const name = stringOf(binding)
    if (binding && (name === 'edge' || name === 'tunnel')) {
      findings.error(`listeners[${i}].binding`, binding.offset, `binding ${name} needs the edge section; without it the router fails at start (add "edge: {}")`)
    }
  })
}

function checkTunnelModes({ root, findings }: RuleContext): void {
  itemsOf(childOf(root, 'listeners')).forEach((listener, i) => {
    if (stringOf(childOf(listener, 'binding')) !== 'tunnel') return
    const options = asMap(childOf(listener, 'options'))
    if (!options) return
    const path = `listeners[${i}].options`
    const mode = stringOf(childOf(options, 'mode')) ?? 'tproxy'
    const flag = (key: string, why: string): void => {
      const e = entryOf(options, key)
      if (e) findings.warning(`${path}.${key}`, e.keyOffset, `${key} is ignored in ${mode} mode; ${why}`)
    }
    if (mode === 'host') {
      for (const key of ['resolver', 'services', 'dnsSvcIpRange', 'dnsUpstream', 'lanIf']) flag(key, 'host mode only hosts services')
    } else if (mode === 'proxy') {
      flag('resolver', 'it is read in tproxy mode')
      const services = entryOf(options, 'services')
      if (!services || (services.value.kind === 'seq' && services.value.items.length === 0)) {
        findings.warning(`${path}.services`, services?.value.offset ?? options.offset, 'proxy mode without services proxies nothing; list <service>:<port> entries')
      }
    } else if (mode.startsWith('tproxy')) {
      flag('services', 'it is read in proxy mode')
    }
  })
}

interface Listen {
  path: string
  offset: number
  host: string
  port: string
  family: 'tcp' | 'udp'
}

function listenOf(text: string | undefined, path: string, node: ConfigNode, web = false): Listen | undefined {
  if (text === undefined) return undefined
  if (web) {
    const split = splitHostPort(text.trim())
    return 'error' in split ? undefined : { path, offset: node.offset, host: split.host, port: split.port, family: 'tcp' }
  }
  const parsed = parseTransportAddress(text, { hostRequired: false, minPort: 0 })
  if ('error' in parsed || parsed.port === '0') return undefined
  const family = parsed.protocol === 'udp' || parsed.protocol === 'dtls' ? 'udp' : 'tcp'
  return { path, offset: node.offset, host: parsed.host, port: parsed.port, family }
}

function checkPortClashes({ root, findings }: RuleContext): void {
  const all: Listen[] = []
  const add = (node: ConfigNode | undefined, path: string, web = false): void => {
    const l = node && listenOf(stringOf(node), path, node, web)
    if (l) all.push(l)
  }
  itemsOf(childOf(root, 'listeners')).forEach((l, i) => {
    add(childOf(l, 'address'), `listeners[${i}].address`)
    if (!entryOf(l, 'address')) add(childOf(l, 'bind'), `listeners[${i}].bind`)
  })
  itemsOf(childOf(childOf(root, 'link'), 'listeners')).forEach((l, i) => add(childOf(l, 'bind'), `link.listeners[${i}].bind`))
  itemsOf(childOf(childOf(root, 'ctrl'), 'listeners')).forEach((l, i) => add(childOf(l, 'bind'), `ctrl.listeners[${i}].bind`))
  itemsOf(childOf(root, 'web')).forEach((server, i) =>
    itemsOf(childOf(server, 'bindPoints')).forEach((bp, j) => add(childOf(bp, 'interface'), `web[${i}].bindPoints[${j}].interface`, true)),
  )
  const wildcard = (h: string): boolean => h === '' || h === '0.0.0.0' || h === '::'
  all.sort((a, b) => a.offset - b.offset)
  const byPort = new Map<string, Listen[]>()
  for (const l of all) {
    const key = `${l.family}:${Number(l.port)}`
    const same = byPort.get(key) ?? []
    const earlier = same.find((o) => o.host === l.host || wildcard(o.host) || wildcard(l.host))
    if (earlier) findings.error(l.path, l.offset, `port ${l.port} is already used by ${earlier.path}; the second listener cannot bind it`)
    same.push(l)
    byPort.set(key, same)
  }
}

function checkBackoffs({ root, effective, findings }: RuleContext): void {
  itemsOf(childOf(childOf(root, 'link'), 'dialers')).forEach((dialer, i) => {
    for (const policy of ['healthyDialBackoff', 'unhealthyDialBackoff']) {
      const eff = objectAt(effective, 'link', 'dialers', i, policy)
      const min = parseDuration(String(eff?.minRetryInterval ?? ''))
      const max = parseDuration(String(eff?.maxRetryInterval ?? ''))
      if (!min.ok || !max.ok || min.ns <= max.ns) continue
      const node = asMap(childOf(dialer, policy))
      const at = childOf(node, 'minRetryInterval') ?? childOf(node, 'maxRetryInterval') ?? node ?? dialer
      const minText = `${eff?.minRetryInterval}${entryOf(node, 'minRetryInterval') ? '' : ' (default)'}`
      const maxText = `${eff?.maxRetryInterval}${entryOf(node, 'maxRetryInterval') ? '' : ' (default)'}`
      findings.error(`link.dialers[${i}].${policy}.minRetryInterval`, at.offset, `minRetryInterval ${minText} is larger than maxRetryInterval ${maxText}`)
    }
  })
}

function coveredBy(host: string, dns: string[], ips: string[]): boolean {
  if (isIpLiteral(host)) return ips.includes(host)
  const h = host.toLowerCase().replace(/\.$/, '')
  return dns.some((d) => {
    const name = d.toLowerCase().replace(/\.$/, '')
    if (!name.startsWith('*.')) return name === h
    const rest = h.slice(h.indexOf('.') + 1)
    return h.includes('.') && rest === name.slice(2)
  })
}

function checkAdvertiseSans({ root, findings }: RuleContext): void {
  const csr = childOf(root, 'csr') ?? childOf(childOf(root, 'edge'), 'csr')
  const sans = asMap(childOf(csr, 'sans'))
  if (!sans) return
  const dns = stringsOf(childOf(sans, 'dns'))
  const ips = stringsOf(childOf(sans, 'ip'))
  if (dns.length === 0 && ips.length === 0) return
  const check = (node: ConfigNode | undefined, path: string, host: string | undefined): void => {
    if (!node || !host || host === '0.0.0.0' || host === '::' || coveredBy(host, dns, ips)) return
    findings.warning(path, node.offset, `advertised host ${host} is not among the csr SANs (dns or ip); the router refuses to start when its certificate does not cover an advertised host`)
  }
  itemsOf(childOf(childOf(root, 'link'), 'listeners')).forEach((l, i) => {
    const node = childOf(l, 'advertise')
    const text = stringOf(node)
    const parsed = text === undefined ? undefined : parseTransportAddress(text, { hostRequired: true, minPort: 1 })
    if (parsed && !('error' in parsed) && (parsed.protocol === 'tls' || parsed.protocol === 'dtls')) check(node, `link.listeners[${i}].advertise`, parsed.host)
  })
  itemsOf(childOf(root, 'listeners')).forEach((l, i) => {
    const node = childOf(childOf(l, 'options'), 'advertise')
    const text = stringOf(node)
    if (stringOf(childOf(l, 'binding')) !== 'edge' || text === undefined || /^[a-z]+:.*:/.test(text)) return
    const split = splitHostPort(text)
    if (!('error' in split)) check(node, `listeners[${i}].options.advertise`, split.host)
  })
}

/** Every listener, link and address rule, in a fixed order. */
export const LISTENER_RULES = [
  checkListenerAddresses,
  checkEdgeBindings,
  checkTunnelModes,
  checkPortClashes,
  checkBackoffs,
  checkAdvertiseSans,
] as const
