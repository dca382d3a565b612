/**
 * Both APIs: TOTP MFA of the current identity and the session's second factor (`POST /authenticate/mfa`); the
 * Management API's admin delete. The routes a partially authenticated session may call are those with access
 * 'partial' (controller-behaviour.md §4): authenticate/mfa, reading and starting the enrollment, verify, the QR code.
 * Everything is decided in flows/authenticate/auth-mfa.ts.
 */
import { DetailMfa, DetailMfaRecoveryCodes, MfaCode, NewMfaRecoveryCodes, OptionalMfaCode, TotpTokenDetail } from '../../../../schemas/mfa.ts'
import type { TokenClaims } from '../../../flows/oidc/oidc-tokens.ts'
import type { MfaFlows } from '../../../flows/authenticate/auth-mfa.ts'
import { ApiError } from '../../../errors/api-error.ts'
import { json, ok, okEmpty } from '../../http-envelope.ts'
import { route, type RouteCtx, type RouteDef } from '../../http-route.ts'
import { MFA_LINKS, toMfaDetail, toMfaRecoveryCodesDetail } from '../../mappers/mfa-mapper.ts'
import { changeOf } from '../route-change.ts'

/** The header a code may come in (DELETE, GET recovery codes), beside the body's `code`. */
export const MFA_CODE_HEADER = 'mfa-validation-code'

/** The code of a request: the body's `code` when given, else the `mfa-validation-code` header. */
function codeOf(ctx: RouteCtx<{ code?: string }, unknown>): string | undefined {
  return ctx.body.code || ctx.request.headers.get(MFA_CODE_HEADER) || undefined
}

/** The QR code's size, quiet zone (4 modules) and error correction, as the real controller draws it. */
const QR_OPTIONS = { type: 'png', width: 256, margin: 4, errorCorrectionLevel: 'M' } as const

export function mfaRoutes(deps: {
  mfa: MfaFlows
  /** Signs the TOTP token of an OIDC session (`z_t:"t"`). */
  totpToken: (claims: TokenClaims) => Promise<{ token: string; issuedAt: number }>
}): RouteDef[] {
  const apis = ['client', 'management'] as const
  const tag = 'MFA'
  return [
    route({
      method: 'POST', path: '/authenticate/mfa', apis, access: 'partial', tag: 'Authentication',
      summary: 'Answer the session\'s TOTP query with a TOTP or recovery code', body: MfaCode,
      handle: async (ctx) => {
        await deps.mfa.authenticate(ctx.auth, ctx.body.code, changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      method: 'GET', path: '/current-identity/mfa', apis, access: 'partial', tag,
      summary: 'The caller\'s MFA enrollment (the provisioning URL and recovery codes only until it is verified)', response: DetailMfa,
      handle: (ctx) => {
        const m = deps.mfa.recordOf(ctx.auth.identity)
        return ok(toMfaDetail(m, m.isVerified ? undefined : deps.mfa.provisioningUrlOf(ctx.auth.identity)))
      },
    }),
    route({
      method: 'POST', path: '/current-identity/mfa', apis, access: 'partial', tag, successStatus: 201,
      summary: 'Start a TOTP enrollment (409 MFA_EXISTS when one exists)',
      handle: async (ctx) => {
        const { id } = await deps.mfa.enroll(ctx.auth.identity, changeOf(ctx))
        return json(201, { data: { _links: MFA_LINKS, id }, meta: {} })
      },
    }),
    route({
      method: 'DELETE', path: '/current-identity/mfa', apis, access: 'session', tag,
      summary: `Remove the caller's MFA: a verified one needs a TOTP or recovery code (body code or header ${MFA_CODE_HEADER})`,
      body: OptionalMfaCode,
      handle: async (ctx) => {
        await deps.mfa.remove(ctx.auth.identity, codeOf(ctx), changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      method: 'POST', path: '/current-identity/mfa/verify', apis, access: 'partial', tag,
      summary: 'Complete the TOTP enrollment with a TOTP code (recovery codes are refused); completes the session\'s TOTP query too',
      body: MfaCode,
      handle: async (ctx) => {
        await deps.mfa.verify(ctx.auth, ctx.body.code, changeOf(ctx))
        return okEmpty()
      },
    }),
    route({
      method: 'GET', path: '/current-identity/mfa/qr-code', apis, access: 'partial', tag, produces: 'image/png',
      summary: 'A PNG QR code of the provisioning URL while the enrollment is not verified',
      handle: async (ctx) => {
        // loaded on first use: the QR code library takes ~0.1 s to load, and most starts never draw one
        const { default: QRCode } = await import('qrcode')
        const png = await QRCode.toBuffer(deps.mfa.provisioningUrlOf(ctx.auth.identity), QR_OPTIONS)
        return new Response(png, { status: 200, headers: { 'content-type': 'image/png', 'cache-control': 'no-store' } })
      },
    }),
    route({
      method: 'GET', path: '/current-identity/mfa/recovery-codes', apis, access: 'session', tag,
      summary: `After a TOTP code (body code or header ${MFA_CODE_HEADER}): the recovery codes that can be shown, none (only their hashes are kept)`,
      body: OptionalMfaCode, response: DetailMfaRecoveryCodes,
      handle: async (ctx) => {
        const { mfa, recoveryCodes } = await deps.mfa.readRecoveryCodes(ctx.auth.identity, codeOf(ctx), changeOf(ctx))
        return ok(toMfaRecoveryCodesDetail(mfa, recoveryCodes))
      },
    }),
    route({
      method: 'POST', path: '/current-identity/mfa/recovery-codes', apis, access: 'session', tag,
      summary: 'Replace all recovery codes (after a TOTP or recovery code) and answer the new ones, the only time they are shown',
      body: MfaCode, response: NewMfaRecoveryCodes,
      handle: async (ctx) => ok(await deps.mfa.regenerateRecoveryCodes(ctx.auth.identity, ctx.body.code, changeOf(ctx))),
    }),
    route({
      method: 'POST', path: '/current-api-session/totp-token', apis, access: 'session', tag: 'Current API Session',
      summary: 'A TOTP token (a JWT of the API session, after a TOTP or recovery code): only for OIDC (bearer) sessions',
      body: MfaCode, response: TotpTokenDetail,
      handle: async (ctx) => {
        // the real controller issues these only to JWT-backed sessions: a zt-session is refused
        if (!ctx.auth.bearer) throw new ApiError('INVALID_BACKING_TOKEN_TYPE')
        await deps.mfa.acceptCode(ctx.auth.identity, ctx.body.code, changeOf(ctx))
        const { token, issuedAt } = await deps.totpToken(ctx.auth.bearer.claims)
        return ok({ token, issuedAt: new Date(issuedAt).toISOString() })
      },
    }),
    route({
      method: 'DELETE', path: '/identities/:id/mfa', apis: ['management'], access: 'admin', tag: 'Identity',
      summary: 'Remove an identity\'s MFA, verified or not, without a code',
      handle: async (ctx) => {
        await deps.mfa.removeByAdmin(ctx.params.id, changeOf(ctx))
        return okEmpty()
      },
    }),
  ]
}
