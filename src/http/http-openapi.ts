/**
 * Generates the swagger 2.0 document of each API from the route records and their TypeBox schemas,
 * so the spec that /specs serves is the contract edgeplane enforces.
 */
import type { TSchema } from '@sinclair/typebox'
import { ApiErrorBody, CreatedData, Empty, Envelope, ListEnvelope } from '../../schemas/common.ts'
import { API_PREFIX, type ApiName, type HttpMethod, type RouteDef } from './http-route.ts'

/** An operation edgeplane serves that the official edge-api spec of its API does not describe. */
export interface SpecExtension {
  api: ApiName
  method: HttpMethod
  /** Swagger path template below the API prefix (`/identities/{id}`). */
  path: string
  why: string
}

/** What edgeplane serves beyond the official edge-api specs. */
export interface SpecExtensions {
  /** Operations the official spec of their API does not have. */
  operations: readonly SpecExtension[]
  /** Query parameters every list takes, whether or not the official spec names them for that list. */
  listQuery: { names: readonly string[]; why: string }
  /** Query parameters of one official operation that its spec does not name. */
  queryParameters: readonly (SpecExtension & { name: string })[]
}

/**
 * Everything edgeplane adds to the official specs: the only list of it. The API tests' spec checker accepts answers
 * of these operations (and fails any other operation missing from the official spec), and a test checks that the
 * served spec describes nothing beyond the official one but these.
 */
export const EDGEPLANE_EXTENSIONS: SpecExtensions = {
  operations: [
    {
      api: 'management', method: 'GET', path: '/edgeplane-status',
      why: 'start time and uptime of the controller for `edgeplane status --url`; the spec has no operation for them',
    },
    { api: 'management', method: 'GET', path: '/identities/{id}/access/{serviceId}', why: 'policy insight: why an identity can or cannot Dial/Bind a service, with the smallest fixes (issue 15)' },
    { api: 'management', method: 'GET', path: '/identities/{id}/access/edge-routers/{edgeRouterId}', why: 'policy insight: why an identity can or cannot use an edge router, with the smallest fixes (issue 15)' },
    { api: 'management', method: 'POST', path: '/policy-previews', why: 'policy insight: what a policy or role attribute change would do, without applying it (issue 15)' },
    { api: 'management', method: 'GET', path: '/cluster', why: 'a cluster node\'s state: its log, etcd, every node\'s applied revision and lag, the digest of its state, for `edgeplane cluster status` (issue 23)' },
  ],
  listQuery: {
    names: ['limit', 'offset', 'filter', 'sort'],
    why: 'the real controller reads them on every list; its spec never names sort and leaves them out of most sub-lists',
  },
  queryParameters: [
    {
      api: 'management', method: 'GET', path: '/services', name: 'asIdentity',
      why: "the services as an identity sees them (permissions, configs, posture); the real controller reads it, the official CLI's `list services --as-identity` sends it",
    },
  ],
}

/**
 * Operations of both APIs that are answered by the app's root routes (server.ts `rootRoutes`: at the root and below
 * each API prefix, before any route record), not by route records; the served documents describe them too.
 */
const ROOT_SERVED_OPERATIONS = [
  {
    method: 'get', path: '/.well-known/est/cacerts', operationId: 'listWellKnownCas', tag: 'Well Known',
    summary: "The controller's CA certificates as a base64 PKCS#7 store (EST cacerts)", produces: 'application/pkcs7-mime',
  },
] as const

/** TypeBox JSON Schema → swagger 2.0 schema: literal unions become enums, `| null` becomes x-nullable. */
export function toSwaggerSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toSwaggerSchema)
  if (s === null || typeof s !== 'object') return s
  const o = s as Record<string, unknown>
  if (Array.isArray(o.anyOf)) {
    const alts = o.anyOf as Record<string, unknown>[]
    const nonNull = alts.filter((a) => a.type !== 'null')
    const nullable = nonNull.length < alts.length
    let out: Record<string, unknown>
    if (nonNull.length > 0 && nonNull.every((a) => 'const' in a)) {
      out = { type: typeof nonNull[0].const === 'number' ? 'number' : 'string', enum: nonNull.map((a) => a.const) }
    } else if (nonNull.length === 1) {
      out = toSwaggerSchema(nonNull[0]) as Record<string, unknown>
    } else {
      out = { description: 'one of several shapes' }
    }
    if (nullable) out['x-nullable'] = true
    return out
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) {
    if (k === 'const') {
      out.enum = [v]
      continue
    }
    if (k === 'patternProperties') {
      const first = Object.values(v as Record<string, unknown>)[0]
      out.additionalProperties = toSwaggerSchema(first)
      continue
    }
    out[k] = toSwaggerSchema(v)
  }
  return out
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1])
}

/** The official operations of `api` that edgeplane refuses (route records with `refused`), as swagger `METHOD /path`. */
export function refusedOperations(api: ApiName, routes: readonly RouteDef[]): { method: HttpMethod; path: string; why: string }[] {
  return routes.filter((r) => r.refused !== undefined && r.apis.includes(api)).map((r) => ({ method: r.method, path: r.path.replace(/:([A-Za-z]+)/g, '{$1}'), why: r.refused! }))
}

const TITLES: Record<ApiName, string> = { client: 'edgeplane Client API', management: 'edgeplane Management API', fabric: 'edgeplane Fabric API' }

export function buildSwagger(api: ApiName, routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    if (!r.apis.includes(api) || r.refused !== undefined) continue
    const p = r.path.replace(/:([A-Za-z]+)/g, '{$1}')
    const parameters: unknown[] = pathParams(r.path).map((name) => ({ name, in: 'path', required: true, type: 'string' }))
    const q = r.query as { properties?: Record<string, TSchema>; required?: string[] } | undefined
    for (const [name, schema] of Object.entries(q?.properties ?? {})) {
      const sw = toSwaggerSchema(schema) as Record<string, unknown>
      parameters.push({ name, in: 'query', required: q?.required?.includes(name) ?? false, type: sw.type ?? 'string', ...(sw.enum ? { enum: sw.enum } : {}) })
    }
    if (r.body) parameters.push({ name: 'body', in: 'body', required: true, schema: toSwaggerSchema(r.body) })
    const status = r.successStatus ?? 200
    const isList = r.method === 'GET' && !!r.query && 'limit' in (q?.properties ?? {})
    const success = r.produces
      ? { type: 'string' }
      : r.bare && r.response
        ? r.response
        : status === 201
        ? Envelope(CreatedData)
        : r.response
          ? isList
            ? ListEnvelope(r.response)
            : Envelope(r.response)
          : Envelope(Empty)
    const errorResponse = { description: 'error', schema: toSwaggerSchema(ApiErrorBody) }
    paths[p] ??= {}
    paths[p][r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[^A-Za-z]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(r.consumes ? { consumes: [r.consumes] } : {}),
      ...(r.produces ? { produces: [r.produces] } : {}),
      security: r.access === 'public' ? [] : [{ ztSession: [] }],
      parameters,
      responses: {
        [status]: { description: 'success', schema: toSwaggerSchema(success) },
        400: errorResponse,
        ...(r.access === 'public' ? {} : { 401: errorResponse }),
        ...(r.path.includes(':id') ? { 404: errorResponse } : {}),
      },
    }
  }
  // the fabric API has no root-served operations (its spec document, /fabric/v1/swagger.json, is no operation)
  for (const op of api === 'fabric' ? [] : ROOT_SERVED_OPERATIONS) {
    paths[op.path] ??= {}
    paths[op.path][op.method] = {
      summary: op.summary,
      tags: [op.tag],
      operationId: op.operationId,
      produces: [op.produces],
      security: [],
      parameters: [],
      responses: { 200: { description: 'success', schema: { type: 'string' } } },
    }
  }
  return {
    swagger: '2.0',
    info: { title: TITLES[api], version },
    basePath: API_PREFIX[api],
    schemes: ['https'],
    consumes: ['application/json'],
    produces: ['application/json'],
    securityDefinitions: { ztSession: { type: 'apiKey', in: 'header', name: 'zt-session' } },
    paths,
  }
}
