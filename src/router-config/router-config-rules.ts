/**
 * Cross-field rules of the router configuration that a schema cannot express; each names its
 * source. Value syntax is in router-config-formats.ts, listener and link rules in
 * router-config-rules-listeners.ts. Rules:
 * - seed rules 3–7: a missing csr, dialers, edge, link or listeners is a warning saying what is lost;
 * - ctrl needs endpoint or endpoints; endpoints is ignored when endpoint is set;
 * - ctrl.rateLimiter: minSize ≤ maxSize; csr: edge.csr ignored beside a root csr, SANs wanted;
 * - forwarder worker counts of 1 are refused by current routers; values the router raises or ignores;
 * - channel options: connectTimeoutMs is ignored beside connectTimeout;
 * - min ≤ max pairs: TLS versions, transmit windows; web bind points need interface and address;
 * - proxy of type http needs an address; cpu and memory profiles must not share a file.
 */
import { LISTENER_RULES } from './router-config-rules-listeners.ts'
import { asMap, childOf, entryOf, itemsOf, objectAt, stringOf, type RuleContext } from './router-config-tree.ts'
import { parseDuration } from './router-config-duration.ts'
import type { ConfigNode, MapNode } from './router-config-yaml.ts'

const MISSING_SECTION: Record<string, string> = {
  csr: 'no csr section: the router cannot enroll or renew its enrollment (current routers also refuse to start without csr or edge.csr)',
  dialers: 'no dialers section: the router cannot connect to terminate services',
  edge: 'no edge section: the router starts in fabric-only mode, without edge functionality (no SDK connectivity)',
  link: 'no link section: the router cannot dial or accept other routers for mesh establishment',
  listeners: 'no listeners section: no external connections reach the router',
}

function checkRecommendedSections({ root, findings }: RuleContext): void {
  const edge = entryOf(root, 'edge')
  for (const [section, message] of Object.entries(MISSING_SECTION)) {
    if (entryOf(root, section)) continue
    if (section === 'csr' && entryOf(edge?.value, 'csr')) continue
    if (section === 'listeners' && edge?.value.kind === 'map') continue // an error, reported with the edge rules
    findings.warning(section, root.offset, message)
  }
}

function checkCtrlEndpoints({ root, findings }: RuleContext): void {
  const ctrl = asMap(childOf(root, 'ctrl'))
  if (!ctrl) return
  const endpoint = entryOf(ctrl, 'endpoint')
  const endpoints = entryOf(ctrl, 'endpoints')
  if (!endpoint && !endpoints) {
    findings.error('ctrl.endpoint', ctrl.offset, 'missing endpoint (or endpoints): the router needs the address of at least one controller')
  } else if (endpoint && endpoints) {
    findings.warning('ctrl.endpoints', endpoints.keyOffset, 'endpoints is ignored because endpoint is set')
  }
  const seen = new Set<string>()
  itemsOf(endpoints?.value).forEach((item, i) => {
    const text = stringOf(item)
    if (text === undefined) return
    if (seen.has(text)) findings.warning(`ctrl.endpoints[${i}]`, item.offset, `${text} is listed twice`)
    seen.add(text)
  })
}

/** Reports `lowPath` when the effective value at `low` is above the one at `high`. */
function checkOrder(ctx: RuleContext, node: MapNode | undefined, eff: Record<string, unknown> | undefined, path: string, low: string, high: string, compare: (v: unknown) => number | undefined): void {
  if (!node || !eff) return
  const a = compare(eff[low])
  const b = compare(eff[high])
  if (a === undefined || b === undefined || a <= b) return
  const at = childOf(node, low) ?? childOf(node, high) ?? node
  const shown = (key: string): string => `${key} ${String(eff[key])}${entryOf(node, key) ? '' : ' (default)'}`
  ctx.findings.error(`${path}.${low}`, at.offset, `${shown(low)} is larger than ${shown(high)}`)
}

const asNumber = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
const asTls = (v: unknown): number | undefined => (typeof v === 'string' && /^TLS1\.[0-3]$/.test(v) ? Number(v.slice(5)) : undefined)
const asDuration = (v: unknown): number | undefined => {
  const parsed = typeof v === 'string' ? parseDuration(v) : undefined
  return parsed?.ok ? parsed.ns : undefined
}

function checkPairs(ctx: RuleContext): void {
  const { root, effective } = ctx
  const ctrl = childOf(root, 'ctrl')
  checkOrder(ctx, asMap(childOf(ctrl, 'rateLimiter')), objectAt(effective, 'ctrl', 'rateLimiter'), 'ctrl.rateLimiter', 'minSize', 'maxSize', asNumber)
  const edge = childOf(root, 'edge')
  checkOrder(ctx, asMap(edge), objectAt(effective, 'edge'), 'edge', 'sessionValidateMinInterval', 'sessionValidateMaxInterval', asDuration)
  const ww3 = asMap(childOf(childOf(root, 'transport'), 'westworld3'))
  checkOrder(ctx, ww3, objectAt(effective, 'transport', 'westworld3'), 'transport.westworld3', 'tx_portal_min_sz', 'tx_portal_max_sz', asNumber)
  itemsOf(childOf(root, 'web')).forEach((server, i) => {
    checkOrder(ctx, asMap(childOf(server, 'options')), objectAt(effective, 'web', i, 'options'), `web[${i}].options`, 'minTLSVersion', 'maxTLSVersion', asTls)
  })
  for (const section of ['listeners', 'dialers']) {
    itemsOf(childOf(root, section)).forEach((item, i) => {
      const options = asMap(childOf(item, 'options'))
      checkOrder(ctx, options, objectAt(effective, section, i, 'options'), `${section}[${i}].options`, 'txPortalMinSize', 'txPortalMaxSize', asNumber)
    })
  }
}

function checkCsrPlacement({ root, findings }: RuleContext): void {
  const rootCsr = entryOf(root, 'csr')
  const edgeCsr = entryOf(childOf(root, 'edge'), 'csr')
  if (rootCsr && edgeCsr) findings.warning('edge.csr', edgeCsr.keyOffset, 'edge.csr is ignored because csr is set at the top level')
  const csr = asMap((rootCsr ?? edgeCsr)?.value)
  const sans = asMap(childOf(csr, 'sans'))
  if (!sans) return
  const path = rootCsr ? 'csr.sans' : 'edge.csr.sans'
  const count = ['dns', 'ip', 'uri', 'email'].reduce((n, key) => n + itemsOf(childOf(sans, key)).length, 0)
  if (count === 0) findings.warning(path, sans.offset, 'no subject alternative names: the router cannot accept connections from SDKs or other routers')
}

function warnAt(ctx: RuleContext, node: ConfigNode | undefined, path: string, when: (n: number) => boolean, message: string): void {
  if (node?.kind === 'scalar' && node.type === 'integer' && when(Number(node.value))) ctx.findings.warning(path, node.offset, message)
}

function checkRaisedValues(ctx: RuleContext): void {
  const forwarder = childOf(ctx.root, 'forwarder')
  for (const key of ['linkDialWorkerCount', 'rateLimitedWorkerCount']) {
    warnAt(ctx, childOf(forwarder, key), `forwarder.${key}`, (n) => n === 1, 'current routers reject 1 here (they require at least 2, though their message says 1)')
  }
  warnAt(ctx, childOf(childOf(ctx.root, 'edge'), 'dbSaveIntervalSeconds'), 'edge.dbSaveIntervalSeconds', (n) => n < 30, 'below 30; the router uses 30')
  warnAt(ctx, childOf(childOf(ctx.root, 'metrics'), 'eventQueueSize'), 'metrics.eventQueueSize', (n) => n < 16, 'below 16; the router uses 16')
}

function checkChannelTimeouts({ root, findings }: RuleContext): void {
  const places: [ConfigNode | undefined, string][] = [[childOf(childOf(root, 'ctrl'), 'options'), 'ctrl.options']]
  const link = childOf(root, 'link')
  for (const section of ['listeners', 'dialers']) {
    itemsOf(childOf(link, section)).forEach((item, i) => places.push([childOf(item, 'options'), `link.${section}[${i}].options`]))
  }
  itemsOf(childOf(childOf(root, 'ctrl'), 'listeners')).forEach((item, i) => places.push([childOf(item, 'options'), `ctrl.listeners[${i}].options`]))
  itemsOf(childOf(root, 'listeners')).forEach((item, i) => places.push([childOf(item, 'options'), `listeners[${i}].options`]))
  for (const [options, path] of places) {
    const ms = entryOf(options, 'connectTimeoutMs')
    if (ms && entryOf(options, 'connectTimeout')) findings.warning(`${path}.connectTimeoutMs`, ms.keyOffset, 'connectTimeoutMs is ignored because connectTimeout is set')
  }
}

function checkWeb({ root, findings }: RuleContext): void {
  let servesHealth = false
  itemsOf(childOf(root, 'web')).forEach((server, i) => {
    if (itemsOf(childOf(server, 'apis')).some((api) => stringOf(childOf(api, 'binding')) === 'health-checks')) servesHealth = true
    itemsOf(childOf(server, 'bindPoints')).forEach((bp, j) => {
      if (bp.kind !== 'map' || entryOf(bp, 'identity')) return
      for (const key of ['interface', 'address']) {
        if (!entryOf(bp, key)) findings.error(`web[${i}].bindPoints[${j}].${key}`, bp.offset, `missing required field ${key}: a bind point without an identity needs interface and address (host:port)`)
      }
    })
    itemsOf(childOf(server, 'bindPoints')).forEach((bp, j) => {
      const identity = asMap(childOf(bp, 'identity'))
      if (!identity) return
      if (!entryOf(identity, 'file') && !entryOf(identity, 'env')) findings.error(`web[${i}].bindPoints[${j}].identity.file`, identity.offset, 'an identity bind point needs file or env')
      if (!entryOf(identity, 'service')) findings.error(`web[${i}].bindPoints[${j}].identity.service`, identity.offset, 'missing required field service: the service to bind')
    })
  })
  const health = entryOf(root, 'healthChecks')
  if (health && !servesHealth) {
    findings.warning('healthChecks', health.keyOffset, 'no web server exposes the health-checks API, so health status is not reachable; add one under web')
  }
}

function checkMisc({ root, findings }: RuleContext): void {
  const proxy = asMap(childOf(root, 'proxy'))
  if (proxy && stringOf(childOf(proxy, 'type')) === 'http' && !entryOf(proxy, 'address')) {
    findings.error('proxy.address', proxy.offset, 'missing required field address: an http proxy needs host:port')
  }
  const profile = childOf(root, 'profile')
  const cpu = childOf(childOf(profile, 'cpu'), 'path')
  const memory = childOf(childOf(profile, 'memory'), 'path')
  if (cpu && memory && stringOf(cpu) !== undefined && stringOf(cpu) === stringOf(memory)) {
    findings.error('profile.memory.path', memory.offset, 'the memory profile would overwrite the CPU profile: use another file')
  }
}

const RULES = [
  checkRecommendedSections,
  checkCtrlEndpoints,
  checkPairs,
  checkCsrPlacement,
  checkRaisedValues,
  checkChannelTimeouts,
  checkWeb,
  checkMisc,
  ...LISTENER_RULES,
] as const

/** Runs every cross-field rule on a configuration that already passed through the schema walk. */
export function checkRouterConfigRules(ctx: RuleContext): void {
  for (const rule of RULES) rule(ctx)
}
