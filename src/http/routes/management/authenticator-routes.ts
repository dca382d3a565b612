/**
 * Management API: authenticators of every identity (updb and cert): list, get, create (updb with a password, cert
 * with a certPem), put/patch (updb), delete, re-enroll (back to an enrollment), and request-extend (ask the holder of
 * a network-issued certificate to extend it early, optionally with a new key: domain/identity/identity-cert-extend.ts
 * decideExtendRequest). Admin only.
 */
import type { IdentityActor } from '../../../actors/identity/identity-actor.ts'
import type { Authenticator } from '../../../domain/identity/identity-types.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { createUpdbAuthenticator } from '../../../flows/authenticate/auth-updb-authenticators.ts'
import { createCertAuthenticator, type CertAuthenticatorDeps } from '../../../flows/authenticate/auth-cert-authenticators.ts'
import { reEnrollAuthenticator, type EnrollAdminDeps } from '../../../flows/enroll/enroll-admin.ts'
import { EnrollmentRefresh } from '../../../../schemas/enrollment.ts'
import { ListQuery } from '../../../../schemas/common.ts'
import {
  AuthenticatorCreate,
  AuthenticatorDetail,
  AuthenticatorPatch,
  AuthenticatorUpdate,
  RequestExtendAuthenticator,
} from '../../../../schemas/authenticator.ts'
import { created, ok, okEmpty } from '../../http-envelope.ts'
import { respondList } from '../../http-list.ts'
import { route, type RouteDef } from '../../http-route.ts'
import { AUTHENTICATOR_SYMBOLS, toAuthenticatorDetail, toAuthenticatorRow } from '../../mappers/authenticator-mapper.ts'
import { changeOf } from '../route-change.ts'
import { updbChangeRoutes } from '../shared/updb-change-routes.ts'

const ROUTES = {
  list: '/authenticators',
  item: '/authenticators/:id',
  reEnroll: '/authenticators/:id/re-enroll',
  requestExtend: '/authenticators/:id/request-extend',
} as const

export type AuthenticatorRouteDeps = { identities: IdentityActor } & CertAuthenticatorDeps & EnrollAdminDeps

export function authenticatorRoutes(deps: AuthenticatorRouteDeps): RouteDef[] {
  const find = (id: string): Authenticator => {
    const a = deps.identities.snapshot().authenticators.get(id)
    if (!a) throw ApiError.notFound()
    return a
  }
  const view = (a: Authenticator) => toAuthenticatorDetail(a, deps.identities.snapshot().identity(a.identityId))
  return [
    route({
      method: 'GET', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Authenticator', summary: 'List authenticators',
      query: ListQuery, response: AuthenticatorDetail,
      handle: (ctx) => {
        const s = deps.identities.snapshot()
        return respondList(ctx.query, {
          symbols: AUTHENTICATOR_SYMBOLS,
          indexed: ['id', 'identity', 'identityId', 'username'],
          candidates: (hint) => {
            if (!hint) return s.authenticators.values()
            const out = new Map<string, Authenticator>()
            for (const v of hint.values) {
              if (hint.field === 'identity' || hint.field === 'identityId') {
                for (const a of s.authenticatorsOf(v)) out.set(a.id, a)
                continue
              }
              const a = hint.field === 'id' ? s.authenticators.get(v) : s.updbByUsername(v)
              if (a) out.set(a.id, a)
            }
            return out.values()
          },
          toRow: toAuthenticatorRow,
          toView: view,
        })
      },
    }),
    route({
      method: 'POST', path: ROUTES.list, apis: ['management'], access: 'admin', tag: 'Authenticator', summary: 'Create an authenticator',
      body: AuthenticatorCreate, successStatus: 201,
      handle: async (ctx) => {
        const b = ctx.body
        if (b.method === 'cert') {
          if (b.certPem === undefined) throw ApiError.invalidField('certPem', 'certPem is required for method cert', '')
          const { id } = await createCertAuthenticator(deps, { identityId: b.identityId, certPem: b.certPem, tags: b.tags ?? {} }, changeOf(ctx))
          return created('authenticators', id)
        }
        if (b.method !== 'updb') {
          throw ApiError.invalidField('method', `method '${b.method}' can not be created here; supported: updb, cert`, b.method)
        }
        if (b.username === undefined) throw ApiError.invalidField('username', 'username is required for method updb', '')
        if (b.password === undefined) throw ApiError.invalidField('password', 'password is required for method updb', '')
        if (!deps.identities.snapshot().identity(b.identityId)) {
          throw ApiError.invalidField('identityId', `no identity found with id '${b.identityId}'`, b.identityId)
        }
        const { id } = await createUpdbAuthenticator(
          deps.identities,
          { identityId: b.identityId, username: b.username, password: b.password, tags: b.tags ?? {} },
          changeOf(ctx),
        )
        return created('authenticators', id)
      },
    }),
    route({
      method: 'GET', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Authenticator', summary: 'Get an authenticator',
      response: AuthenticatorDetail,
      handle: (ctx) => ok(view(find(ctx.params.id))),
    }),
    ...updbChangeRoutes({
      identities: deps.identities,
      path: ROUTES.item,
      apis: ['management'],
      access: 'admin',
      tag: 'Authenticator',
      subject: 'an authenticator',
      bodies: { put: AuthenticatorUpdate, patch: AuthenticatorPatch },
      find: (ctx) => find(ctx.params.id),
    }),
    route({
      method: 'POST', path: ROUTES.reEnroll, apis: ['management'], access: 'admin', tag: 'Authenticator',
      summary: 'Turn an authenticator back into an enrollment (updb → updb, cert → ott, cert of a CA → ottca)',
      body: EnrollmentRefresh, successStatus: 201,
      handle: async (ctx) => {
        const { id } = await reEnrollAuthenticator(deps, ctx.params.id, ctx.body.expiresAt, changeOf(ctx))
        return created('enrollments', id)
      },
    }),
    route({
      method: 'POST', path: ROUTES.requestExtend, apis: ['management'], access: 'admin', tag: 'Authenticator',
      summary: "Ask the holder of a certificate authenticator to extend its certificate early (rollKeys: with a new key)",
      body: RequestExtendAuthenticator,
      handle: async (ctx) => {
        await deps.identities.ask({ type: 'authenticator.requestExtend', id: ctx.params.id, rollKeys: ctx.body.rollKeys ?? false, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
    route({
      method: 'DELETE', path: ROUTES.item, apis: ['management'], access: 'admin', tag: 'Authenticator', summary: 'Delete an authenticator',
      handle: async (ctx) => {
        await deps.identities.ask({ type: 'authenticator.delete', id: ctx.params.id, change: changeOf(ctx) })
        return okEmpty()
      },
    }),
  ]
}
