/** Both APIs: version information, capabilities, and the served API specs (generated from the route records). */
import { Type } from '@sinclair/typebox'
import { ApiError } from '../../../errors/api-error.ts'
import { ListQuery, StringEnum } from '../../../../schemas/common.ts'
import { envelopeBytes, jsonBytes, list, ok, selfLink } from '../../http-envelope.ts'
import { buildSwagger } from '../../http-openapi.ts'
import { API_PREFIX, route, type ApiName, type RouteDef } from '../../http-route.ts'
import { OIDC_PREFIX } from '../../oidc/oidc-app.ts'

export interface VersionInfo {
  version: string
  revision: string
  buildDate: string
  runtimeVersion: string
  /** https://host:port of the listener, for apiBaseUrls. */
  baseUrl: () => string
  /** OIDC sign-in is served at /oidc (then OIDC_AUTH and `edge-oidc` are advertised). */
  oidc?: boolean
  /** Also advertise OIDC_AUTH_WITH_CSR (off by default: clients generated from the spec reject the value). */
  oidcCsrCapability?: boolean
  /** Running as a node of a cluster (then HA_CONTROLLER is advertised, as the real controller does with Raft). */
  clustered?: boolean
}

const SPEC_IDS: Record<string, ApiName> = { 'edge-client': 'client', 'edge-management': 'management' }

/**
 * The capabilities: OIDC_AUTH when `/oidc` is served. The real controller also lists OIDC_AUTH_WITH_CSR, which the
 * specs' `capabilities` enum lacks and clients generated from them reject (a README difference): only on request.
 * HA_CONTROLLER on a cluster node: an SDK then reads `GET /controllers` to fail over.
 */
const CAPABILITIES = ['OIDC_AUTH', 'HA_CONTROLLER'] as const

function capabilitiesOf(v: VersionInfo): string[] {
  const oidc = !v.oidc ? [] : v.oidcCsrCapability ? ['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR'] : ['OIDC_AUTH']
  return v.clustered ? [...oidc, 'HA_CONTROLLER'] : oidc
}

const VersionDetail = Type.Object({
  version: Type.String(),
  revision: Type.String(),
  buildDate: Type.String(),
  runtimeVersion: Type.String(),
  apiVersions: Type.Record(Type.String(), Type.Record(Type.String(), Type.Object({ path: Type.String(), apiBaseUrls: Type.Array(Type.String()) }))),
  capabilities: Type.Array(Type.String()),
})

export function versionDocument(v: VersionInfo) {
  const base = v.baseUrl()
  const entry = (path: string) => ({ v1: { path, apiBaseUrls: [`${base}${path}`] } })
  return {
    version: v.version,
    revision: v.revision,
    buildDate: v.buildDate,
    runtimeVersion: v.runtimeVersion,
    apiVersions: {
      edge: entry(API_PREFIX.client),
      'edge-client': entry(API_PREFIX.client),
      'edge-management': entry(API_PREFIX.management),
      fabric: entry(API_PREFIX.fabric),
      ...(v.oidc ? { 'edge-oidc': entry(OIDC_PREFIX) } : {}),
    },
    capabilities: capabilitiesOf(v),
  }
}

/** `allRoutes` is read lazily: the spec covers every route, including these. */
export function versionRoutes(v: VersionInfo, allRoutes: () => readonly RouteDef[]): RouteDef[] {
  const specs = new Map<ApiName, string>()
  const specOf = (api: ApiName) => {
    let s = specs.get(api)
    if (!s) specs.set(api, (s = JSON.stringify(buildSwagger(api, allRoutes(), v.version))))
    return s
  }
  const specDetail = (id: string) => ({
    id,
    name: id === 'edge-client' ? 'Edge Client API' : 'Edge Management API',
    createdAt: v.buildDate,
    updatedAt: v.buildDate,
    tags: {},
    _links: { ...selfLink('specs', id), spec: { href: `./specs/${id}/spec` } },
  })
  const both: ApiName[] = ['client', 'management']
  // the document changes only with the advertised address: rendered once per address, not per request
  let rendered: { base: string; bytes: Uint8Array } | undefined
  const versionAnswer = () => {
    const base = v.baseUrl()
    if (rendered?.base !== base) rendered = { base, bytes: envelopeBytes(versionDocument(v)) }
    return jsonBytes(200, rendered.bytes)
  }
  const version = { apis: both, access: 'public', tag: 'Informational', response: VersionDetail, handle: versionAnswer } as const
  return [
    route({ ...version, method: 'GET', path: '/version', summary: 'Version information' }),
    // The real controller answers the version document at each API's root too (the specs' listRoot).
    route({ ...version, method: 'GET', path: '/', summary: 'Version information, at the root of the API' }),
    route({
      method: 'GET', path: '/enumerated-capabilities', apis: both, access: 'public', tag: 'Informational',
      summary: 'Every capability a controller may advertise in /version', response: Type.Array(StringEnum(CAPABILITIES)),
      handle: () => ok(CAPABILITIES),
    }),
    route({
      method: 'GET', path: '/specs', apis: both, access: 'public', tag: 'Informational', summary: 'List the API specs', query: ListQuery,
      handle: () => {
        const data = Object.keys(SPEC_IDS).map(specDetail)
        return list(data, { limit: data.length, offset: 0, totalCount: data.length }, [])
      },
    }),
    route({
      method: 'GET', path: '/specs/:id', apis: both, access: 'public', tag: 'Informational', summary: 'One API spec',
      handle: (ctx) => {
        if (!SPEC_IDS[ctx.params.id]) throw ApiError.notFound()
        return ok(specDetail(ctx.params.id))
      },
    }),
    route({
      method: 'GET', path: '/specs/:id/spec', apis: both, access: 'public', tag: 'Informational',
      summary: 'The swagger 2.0 document of an API, as JSON text in `data` (the specs\' detailSpecBody)', response: Type.String(),
      handle: (ctx) => {
        const api = SPEC_IDS[ctx.params.id]
        if (!api) throw ApiError.notFound()
        return ok(specOf(api))
      },
    }),
  ]
}
