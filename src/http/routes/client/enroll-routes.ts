/**
 * Client API enrollment, without a session: `POST /enroll/ott`, `POST /enroll/updb?token=`, `POST /enroll/erott`
 * (JSON), `POST /enroll/extend/router` (JSON, over the router's current client certificate), `POST /enroll/ottca` and
 * `POST /enroll/ca` (the certificate presented on the TLS connection, no CSR) and the generic
 * `POST /enroll?method=…&token=…` (a PEM CSR body, or JSON). The routes check the media types and dispatch to the
 * registered enrollment module; the module decides everything else.
 * - the answer is JSON only: an `Accept` that allows neither application/json nor a wildcard is 415 UNSUPPORTED_MEDIA
 * - the generic form takes application/json, application/x-pem-file, text/plain, application/pkcs7 or no content
 *   type; any other is 415 UNSUPPORTED_MEDIA. Under every type but JSON the body is the PEM CSR itself, read as text
 *   (never by the JSON parser); the answer is JSON all the same, as the real controller's legacy path answers
 * - the generic form without `method` (or with an empty one) redeems by the method of the token's own enrollment
 *   record (ott, ottca, updb or a router's erott), as the real controller does; a token no record holds: 400
 *   INVALID_ENROLLMENT_TOKEN (flow enroll-by-token.ts)
 * - a method no module redeems: 400 INVALID_ENROLL_METHOD
 * - `POST /enroll/token`: enrollment by an external JWT signer's token in `Authorization: Bearer` (flow
 *   enroll-token.ts), with a JSON body (`clientCsr` or none)
 * - `GET /enroll/jwks` and `POST /enroll/challenge`: the keys that sign enrollment JWTs and the proof that this
 *   controller holds one (flow enroll-keys.ts); both answers are the spec's bare `jwks` and `nonceSignature`, without
 *   the `{data, meta}` envelope
 * @see controller-behaviour.md §6 "Enroll endpoints"; edge-api client.yml POST /enroll, /enroll/ott, /enroll/updb,
 *   /enroll/erott, /enroll/extend/router, /enroll/ottca, /enroll/ca, /enroll/token, GET /enroll/jwks,
 *   POST /enroll/challenge
 */
import { ApiError } from '../../../errors/api-error.ts'
import type { EnrollmentMethodRegistry } from '../../../flows/enroll/enroll-method.ts'
import type { EnrollByToken } from '../../../flows/enroll/enroll-by-token.ts'
import type { ErottEnrollMethod } from '../../../flows/enroll/enroll-erott.ts'
import type { EnrollKeys } from '../../../flows/enroll/enroll-keys.ts'
import {
  EnrollmentCerts,
  EnrollmentJwks,
  ErOttEnrollmentRequest,
  GenericEnrollBody,
  GenericEnrollQuery,
  NonceChallenge,
  NonceSignature,
  OttEnrollmentRequest,
  RouterExtendEnrollmentRequest,
  TokenEnrollmentRequest,
  UpdbCredentials,
  UpdbEnrollQuery,
  UpdbEnrollResult,
} from '../../../../schemas/enroll.ts'
import { Empty } from '../../../../schemas/common.ts'
import { ok } from '../../http-envelope.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { peerOf } from '../../peer-cert.ts'
import { changeOf } from '../route-change.ts'

const ROUTES = {
  generic: '/enroll',
  ott: '/enroll/ott',
  updb: '/enroll/updb',
  erott: '/enroll/erott',
  extendRouter: '/enroll/extend/router',
  ottca: '/enroll/ottca',
  ca: '/enroll/ca',
  token: '/enroll/token',
  jwks: '/enroll/jwks',
  challenge: '/enroll/challenge',
} as const

const GENERIC_CONTENT_TYPES = new Set(['', 'application/json', 'application/x-pem-file', 'text/plain', 'application/pkcs7'])
const JSON_ACCEPTS = new Set(['application/json', 'application/*', '*/*'])

/** The media type of a header value, lowercase and without parameters. */
function mediaType(value: string): string {
  return value.split(';')[0].trim().toLowerCase()
}

/** 415 unless the caller accepts a JSON answer (no Accept header accepts anything). */
export function decideAcceptsJson(request: Request): void {
  const accept = request.headers.get('accept')
  if (accept === null || accept.trim() === '') return
  if (accept.split(',').some((part) => JSON_ACCEPTS.has(mediaType(part)))) return
  throw new ApiError('UNSUPPORTED_MEDIA')
}

export interface EnrollRouteDeps {
  enrollments: EnrollmentMethodRegistry
  /** The generic form: by the query's method, else by the method of the token's enrollment record. */
  byToken: EnrollByToken
  /** The erott module: its certificate extension has a route of its own. */
  routerEnrollments: Pick<ErottEnrollMethod, 'extend'>
  /** The enrollment JWKS and the nonce challenge. */
  keys: EnrollKeys
}

export function enrollRoutes(deps: EnrollRouteDeps): RouteDef[] {
  const inputOf = (ctx: RouteCtx<unknown, Record<string, unknown>>, token: string | undefined) =>
    ({ token, body: ctx.body, contentType: ctx.request.headers.get('content-type'), header: (name: string) => ctx.request.headers.get(name) })
  const redeem = async (ctx: RouteCtx<unknown, Record<string, unknown>>, method: string, token: string | undefined) => {
    decideAcceptsJson(ctx.request)
    return ok(await deps.enrollments.resolve(method).redeem(inputOf(ctx, token), peerOf(ctx.request), changeOf(ctx)))
  }
  return [
    route({
      method: 'POST', path: ROUTES.ott, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'Enroll an identity with a one-time token and a CSR', body: OttEnrollmentRequest, response: EnrollmentCerts,
      handle: (ctx) => redeem(ctx, 'ott', undefined),
    }),
    route({
      method: 'POST', path: ROUTES.updb, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'Set the password of an updb enrollment with its one-time token', query: UpdbEnrollQuery, body: UpdbCredentials,
      response: UpdbEnrollResult,
      handle: (ctx) => redeem(ctx, 'updb', ctx.query.token),
    }),
    route({
      method: 'POST', path: ROUTES.erott, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'Enroll a router with its one-time token, a client CSR and a server CSR', body: ErOttEnrollmentRequest, response: EnrollmentCerts,
      handle: (ctx) => redeem(ctx, 'erott', undefined),
    }),
    route({
      method: 'POST', path: ROUTES.extendRouter, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: "Renew a router's certificates over its current client certificate", body: RouterExtendEnrollmentRequest, response: EnrollmentCerts,
      handle: async (ctx) => {
        decideAcceptsJson(ctx.request)
        return ok(await deps.routerEnrollments.extend(ctx.body, peerOf(ctx.request), changeOf(ctx)))
      },
    }),
    route({
      method: 'POST', path: ROUTES.ottca, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'Enroll an identity with a one-time token and the client certificate of its CA, presented on the TLS connection',
      body: OttEnrollmentRequest, response: EnrollmentCerts,
      handle: (ctx) => redeem(ctx, 'ottca', undefined),
    }),
    route({
      method: 'POST', path: ROUTES.ca, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'Create and enroll an identity with a client certificate of a CA that allows auto-enrollment',
      response: Empty,
      handle: (ctx) => redeem(ctx, 'ca', undefined),
    }),
    route({
      method: 'POST', path: ROUTES.token, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: "Create and enroll an identity with an external JWT signer's token (Authorization: Bearer): with clientCsr to a certificate, without to token login",
      body: TokenEnrollmentRequest, response: EnrollmentCerts,
      handle: (ctx) => redeem(ctx, 'token', undefined),
    }),
    route({
      method: 'GET', path: ROUTES.jwks, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: 'The public keys that sign enrollment JWTs (a JWKS, not enveloped)', response: EnrollmentJwks, bare: true,
      handle: async (ctx) => {
        decideAcceptsJson(ctx.request)
        return Response.json(await deps.keys.jwks())
      },
    }),
    route({
      method: 'POST', path: ROUTES.challenge, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: "Sign a nonce (a UUID) with this controller's enrollment signing key named by keyId (not enveloped)",
      body: NonceChallenge, response: NonceSignature, bare: true,
      handle: async (ctx) => {
        decideAcceptsJson(ctx.request)
        return Response.json(await deps.keys.challenge(ctx.body.nonce, ctx.body.keyId))
      },
    }),
    route({
      method: 'POST', path: ROUTES.generic, apis: ['client'], access: 'public', tag: 'Enroll',
      summary: "Enroll by the query's token and method, else the method of the token's enrollment (legacy form; a PEM CSR body or JSON)",
      query: GenericEnrollQuery, body: GenericEnrollBody, untypedBodyIsText: true, response: EnrollmentCerts,
      handle: async (ctx) => {
        if (!GENERIC_CONTENT_TYPES.has(mediaType(ctx.request.headers.get('content-type') ?? ''))) throw new ApiError('UNSUPPORTED_MEDIA')
        decideAcceptsJson(ctx.request)
        return ok(await deps.byToken.redeem(ctx.query.method, inputOf(ctx, ctx.query.token), peerOf(ctx.request), changeOf(ctx)))
      },
    }),
  ]
}
