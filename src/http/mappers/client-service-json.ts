/**
 * The Client API's service view as JSON text (UTF-8), assembled from parts rendered once: an SDK lists hundreds of services
 * many times a minute, and almost all of each row depends on the service record alone. So the record's part (ids,
 * dates, links, names, attributes) is rendered once per record object (records are replaced, never mutated — their
 * types are deeply read-only — so a WeakMap drops it with the old record), the config map once per (record, configs
 * of it the selection takes) while the configs and types it used are the current ones, and permissions and posture
 * placeholders once per permission set. The config maps are keyed on which of the service's own configs a selection
 * takes, not on the selection a client sent: a client cycling arbitrary `configTypes` values adds no entries beyond
 * the subsets of the service's configs, and at most MAX_CONFIG_RENDERINGS of those per record.
 * Only what is personal (permissions, an identity's config overrides, posture checks) is looked up per row.
 * The field layout is the one of client.yml serviceDetail; `toClientServiceDetail` gives the same view as an object.
 * @see client-service-mapper.ts
 */
import type { Permission } from '../../domain/policy/policy-reads.ts'
import type { Config, ConfigType, Service } from '../../domain/policy/policy-types.ts'
import {
  configMap,
  postureQueries,
  toClientServiceDetail,
  type ConfigLookups,
  type ConfigTypeSelection,
} from './client-service-mapper.ts'
import { utf8, type JsonBody } from '../http-envelope.ts'

/** Who sees the services and which config types it asked for: the same for every row of one answer. */
export interface ClientServiceViewer {
  identityId: string
  selection: ConfigTypeSelection
  lookups: ConfigLookups
  /** Services of which the identity overrides a config (their config maps are rendered afresh). */
  overridden: ReadonlySet<string>
  /**
   * The JSON text of the service's postureQueries array, when posture checks exist (otherwise the per-permission
   * placeholders are used). The same text object while the entries are the same: the row's tail is kept with it.
   */
  postureQueries?: (s: Service, permissions: readonly Permission[]) => Uint8Array
}

interface ConfigText {
  /** The configs and config types the text was rendered from; the text holds while each is still the current one. */
  used: (Config | ConfigType | undefined)[]
  json: Uint8Array
}

interface ServiceText {
  /** `{"id":…,…,"configs":[…],"config":` */
  head: Uint8Array
  /** `,"encryptionRequired":…,"maxIdleTimeMillis":…` */
  middle: Uint8Array
  /** head, `{}` and middle in one piece: the row of a client that takes none of the service's configs. */
  withoutConfigs?: Uint8Array
  /** Config maps by the configs of the service the selection takes (`takenConfigs`), oldest first. */
  configs: Map<number | string, ConfigText>
}

/** Config map renderings kept per service record; a real client uses one or two selections. */
export const MAX_CONFIG_RENDERINGS = 8

const EMPTY_MAP = utf8('{}')
const CLOSE_ROW = utf8('}')
const MARK = '\u0000config\u0000'

export class ClientServiceJson {
  private readonly services = new WeakMap<Service, ServiceText>()
  private readonly permissionTexts = new Map<string, Uint8Array>()
  private readonly permissionTextsByRef = new WeakMap<readonly Permission[], Uint8Array>()
  private readonly permissionPrefixes = new Map<string, Uint8Array>()
  private readonly permissionPrefixesByRef = new WeakMap<readonly Permission[], Uint8Array>()
  /** Row tails (`,"permissions":[…],"postureQueries":[…]}`) by postureQueries text, then permissions prefix. */
  private readonly tails = new WeakMap<Uint8Array, Map<Uint8Array, Uint8Array>>()

  /**
   * Writes the JSON text of one service as the viewer sees it, given the viewer's permissions on it: in two pieces
   * when the client takes none of its configs (copying a piece costs more than its bytes at 500 rows).
   */
  write(s: Service, permissions: readonly Permission[], viewer: ClientServiceViewer, body: JsonBody): void {
    const text = this.textOf(s)
    const config = this.configJson(s, text, viewer)
    if (config === EMPTY_MAP) body.bytes((text.withoutConfigs ??= concat([text.head, EMPTY_MAP, text.middle])))
    else body.bytes(text.head).bytes(config).bytes(text.middle)
    body.bytes(viewer.postureQueries ? this.tailOf(permissions, viewer.postureQueries(s, permissions)) : this.permissionTextOf(permissions))
  }

  /** `,"permissions":[…],"postureQueries":` + the postureQueries text + `}`, kept with the text. */
  private tailOf(permissions: readonly Permission[], postureQueries: Uint8Array): Uint8Array {
    const prefix = this.permissionsPrefixOf(permissions)
    let byPrefix = this.tails.get(postureQueries)
    if (!byPrefix) this.tails.set(postureQueries, (byPrefix = new Map()))
    let t = byPrefix.get(prefix)
    if (!t) byPrefix.set(prefix, (t = concat([prefix, postureQueries, CLOSE_ROW])))
    return t
  }

  private textOf(s: Service): ServiceText {
    let text = this.services.get(s)
    if (text) return text
    // one definition of the layout: the object view, with the personal fields cut out of its text; the last match,
    // since only numbers and booleans follow the config map while tags and names before it are free text
    const whole = JSON.stringify(toClientServiceDetail(s, { permissions: [], config: MARK as never, postureQueries: [] }))
    const marker = JSON.stringify(MARK)
    const cut = whole.lastIndexOf(`,"config":${marker},`) + ',"config":'.length
    const tailStart = cut + marker.length
    const permsAt = whole.indexOf(',"permissions":[]', tailStart)
    text = { head: utf8(whole.slice(0, cut)), middle: utf8(whole.slice(tailStart, permsAt)), configs: new Map() }
    this.services.set(s, text)
    return text
  }

  /** `,"permissions":[…],"postureQueries":` (the entries follow: posture checks exist). */
  private permissionsPrefixOf(permissions: readonly Permission[]): Uint8Array {
    let t = this.permissionPrefixesByRef.get(permissions)
    if (t) return t
    const key = permissions.join(',')
    t = this.permissionPrefixes.get(key)
    if (!t) this.permissionPrefixes.set(key, (t = utf8(`,"permissions":${JSON.stringify(permissions)},"postureQueries":`)))
    this.permissionPrefixesByRef.set(permissions, t)
    return t
  }

  /** `,"permissions":[…],"postureQueries":[…]}` with the placeholders of a permission set (no posture checks). */
  private permissionTextOf(permissions: readonly Permission[]): Uint8Array {
    let t = this.permissionTextsByRef.get(permissions)
    if (t) return t
    const key = permissions.join(',')
    t = this.permissionTexts.get(key)
    if (!t) {
      t = utf8(`,"permissions":${JSON.stringify(permissions)},"postureQueries":${JSON.stringify(postureQueries(permissions))}}`)
      this.permissionTexts.set(key, t)
    }
    this.permissionTextsByRef.set(permissions, t)
    return t
  }

  /** How many config map renderings are kept for a service record (diagnostics and tests). */
  configRenderingsOf(s: Service): number {
    return this.services.get(s)?.configs.size ?? 0
  }

  private configJson(s: Service, text: ServiceText, viewer: ClientServiceViewer): Uint8Array {
    const { selection, lookups } = viewer
    if (s.configs.length === 0 || (selection !== 'all' && selection.size === 0)) return EMPTY_MAP
    if (viewer.overridden.has(s.id)) return utf8(JSON.stringify(configMap(s, viewer.identityId, selection, lookups)))
    const key = takenConfigs(s, selection, lookups)
    if (key === 0) return EMPTY_MAP
    const cached = text.configs.get(key)
    if (cached && stillCurrent(s, cached.used, lookups)) return cached.json
    const json = utf8(JSON.stringify(configMap(s, viewer.identityId, selection, lookups)))
    if (!cached && text.configs.size >= MAX_CONFIG_RENDERINGS) text.configs.delete(text.configs.keys().next().value!)
    text.configs.set(key, { used: usedBy(s, lookups), json })
    return json
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/**
 * Which of the service's configs the selection takes (current configs whose type is selected): a bit per position in
 * `s.configs` (positions joined by commas beyond 31 configs), 0 when it takes none. Two selections with the same key
 * render the same config map, whatever else they name.
 */
function takenConfigs(s: Service, selection: ConfigTypeSelection, lookups: ConfigLookups): number | string {
  const wide = s.configs.length > 31
  let mask = 0
  let positions = ''
  for (let i = 0; i < s.configs.length; i++) {
    const c = lookups.config(s.configs[i]!)
    if (!c || (selection !== 'all' && !selection.has(c.configTypeId))) continue
    if (wide) positions += `${i},`
    else mask |= 1 << i
  }
  return wide ? positions || 0 : mask
}

/** The current config records of a service and their types, in the service's config order. */
function usedBy(s: Service, lookups: ConfigLookups): (Config | ConfigType | undefined)[] {
  const out: (Config | ConfigType | undefined)[] = []
  for (const id of s.configs) {
    const c = lookups.config(id)
    out.push(c, c ? lookups.configType(c.configTypeId) : undefined)
  }
  return out
}

/** Whether `used` (from usedBy) still names the current records. */
function stillCurrent(s: Service, used: readonly (Config | ConfigType | undefined)[], lookups: ConfigLookups): boolean {
  if (used.length !== s.configs.length * 2) return false
  for (let i = 0; i < s.configs.length; i++) {
    const c = lookups.config(s.configs[i]!)
    if (c !== used[2 * i] || (c ? lookups.configType(c.configTypeId) : undefined) !== used[2 * i + 1]) return false
  }
  return true
}
