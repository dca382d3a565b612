/**
 * Route definitions: one declarative record per operation (method, path, APIs, access level, TypeBox schemas,
 * handler). The same records mount the Elysia routes, answer 405 for a known path with the wrong verb, and generate
 * the OpenAPI document served at /specs, so the served spec says what edgeplane does.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import type { AccessLevel, AuthContext } from './http-auth.ts'

export type ApiName = 'client' | 'management' | 'fabric'
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export const API_PREFIX: Record<ApiName, string> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
  fabric: '/fabric/v1',
}

/** What a handler receives. `auth` is set on every route whose access is not public. */
export interface RouteCtx<B = unknown, Q = Record<string, string | string[] | undefined>> {
  request: Request
  body: B
  query: Q
  params: Record<string, string>
  auth: AuthContext
  api: ApiName
  /** The request's id: in its error answers, its log line and the change context of its writes. */
  requestId: string
}

export interface RouteDef {
  method: HttpMethod
  /** Path below the API prefix, Elysia style (`/identities/:id`). */
  path: string
  apis: readonly ApiName[]
  access: AccessLevel
  summary: string
  tag: string
  body?: TSchema
  /** The body's media type when it is not JSON: a `text/plain` body reaches the handler as its raw text, empty or not. */
  consumes?: 'text/plain'
  /** The success answer's media type when it is not the JSON envelope (a bare string, e.g. a JWT, or an image). */
  produces?: 'application/jwt' | 'image/png'
  /** A body sent without a content type is text, not JSON (the legacy `POST /enroll` takes a bare PEM CSR). */
  untypedBodyIsText?: boolean
  query?: TSchema
  /** Schema of `data` in the success answer, for the served spec. */
  response?: TSchema
  /** The success answer is `response` itself, not `{data, meta}` (the spec's `jwks` and `nonceSignature`). */
  bare?: true
  successStatus?: number
  /**
   * An official operation edgeplane answers only with a refusal (or with the real controller's refusal where it has
   * one, and a refusal beyond): why. Left out of the served spec; the served-spec test holds the official operations
   * to be served or refused.
   */
  refused?: string
  handle(ctx: RouteCtx<any, any>): Response | Promise<Response>
}

/** Declares a route with its body type inferred from its schema. */
export function route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(
  def: Omit<RouteDef, 'handle' | 'body' | 'query'> & {
    body?: B
    query?: Q
    handle(
      ctx: RouteCtx<B extends TSchema ? Static<B> : unknown, Q extends TSchema ? Static<Q> : Record<string, string | undefined>>,
    ): Response | Promise<Response>
  },
): RouteDef {
  return def as RouteDef
}
