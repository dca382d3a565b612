/**
 * `edgeplane explain` and `edgeplane preview`: the policy insight answers of a running controller
 * (GET /identities/{id}/access/..., POST /policy-previews), printed for a person: tables, missing roles and lost
 * access highlighted (bold red on a terminal unless NO_COLOR is set; always in their own column).
 * Exit codes: 0 answered, 1 the controller refused, 2 usage error or unreadable file.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { ConfigError } from '../config/config.ts'
import { CliError, idByName, openSession, SESSION_HELP, SESSION_OPTIONS, type CliIo } from './cli-session.ts'

export const INSIGHT_HELP = `Flags of 'explain':
  --identity NAME         the identity (name or id)
  --service NAME          the service (name or id), or
  --edge-router NAME      the edge router (name or id)
Flags of 'preview':
  --file FILE             the change as JSON ('-' reads stdin): {"operation": "create"|"update"|"patch"|"delete",
                          "entityType": "service-policies"|"edge-router-policies"|"service-edge-router-policies"|
                          "identities"|"services"|"edge-routers", "id": "...", "body": {...the operation's body}}
  --summary               counts per service and per identity role attribute instead of the changes
  --limit N, --offset N   page of the changes (default 100 from 0)
Both take:
${SESSION_HELP}Exit codes of 'explain' and 'preview': 0 answered, 1 refused by the controller, 2 usage error.
`

type Ref = { id: string; name: string }
type Fix = { description: string }
type Verdict = { policy: Ref; semantic: string; identityRoles: string[]; matches: boolean; matchedBy: string | null; missingRoles: string[] }
type Gate = { postureCheck: Ref; typeId: string; apiSessions: { apiSessionId: string; isPassing: boolean }[] }
type Permission = { allowed: boolean; policies: (Verdict & { postureChecks: Gate[] })[]; fixes: Fix[] }

/** Column-aligned rows; the first is the header. Cells may carry colour codes (not counted in the width). */
export function table(rows: readonly (readonly string[])[]): string {
  const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => visible(r[c] ?? ''))))
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell + ' '.repeat(widths[c]! - visible(cell)))).join('  ').trimEnd()).join('\n') + '\n'
}

function painter(io: CliIo) {
  const on = io.isTty && !io.env.NO_COLOR
  return {
    bad: (s: string) => (on && s ? `\x1b[1;31m${s}\x1b[0m` : s),
    good: (s: string) => (on && s ? `\x1b[32m${s}\x1b[0m` : s),
    head: (s: string) => (on ? `\x1b[1m${s}\x1b[0m` : s),
  }
}

function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>): Record<string, unknown> {
  try {
    return parseArgs({ args: argv, options: { ...SESSION_OPTIONS, ...options }, strict: true, allowPositionals: false }).values
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
}

class UsageError extends Error {}

/** Runs a command body, mapping usage errors to 2 and controller refusals to 1. */
async function guarded(name: string, io: CliIo, body: () => Promise<void>): Promise<number> {
  try {
    await body()
    return 0
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`edgeplane ${name}: ${e.message}\n\n${INSIGHT_HELP}`)
      return 2
    }
    if (e instanceof CliError || e instanceof ConfigError) {
      io.stderr(`edgeplane ${name}: ${(e as Error).message}\n`)
      return 1
    }
    throw e
  }
}

function verdictRows(policies: readonly Verdict[], p: ReturnType<typeof painter>): string[][] {
  return [
    ['POLICY', 'SEMANTIC', 'IDENTITY ROLES', 'SELECTS', 'MISSING'],
    ...policies.map((v) => [v.policy.name, v.semantic, v.identityRoles.join(' '), v.matches ? p.good(`yes (${v.matchedBy})`) : p.bad('no'), p.bad(v.missingRoles.join(v.semantic === 'AllOf' ? ' + ' : ' or '))]),
  ]
}

function fixLines(fixes: readonly Fix[], indent: string): string {
  return fixes.length === 0 ? '' : `${indent}Smallest fixes:\n${fixes.map((f) => `${indent}  - ${f.description}\n`).join('')}`
}

export async function runExplain(argv: string[], io: CliIo): Promise<number> {
  return guarded('explain', io, async () => {
    const v = parse(argv, { identity: { type: 'string' }, service: { type: 'string' }, 'edge-router': { type: 'string' } })
    if (!v.identity || (!v.service === !v['edge-router'])) throw new UsageError('give --identity and one of --service or --edge-router')
    const session = await openSession(v, io.env)
    const p = painter(io)
    const identity = await idByName(session, '/identities', 'identity', v.identity as string)
    let out = ''
    if (v.service) {
      const service = await idByName(session, '/services', 'service', v.service as string)
      const e = (await session.get(`/identities/${identity.id}/access/${service.id}`)) as {
        dial: Permission
        bind: Permission
        edgeRouters: { identityEdgeRouterPolicies: Ref[]; serviceEdgeRouterPolicies: Ref[]; commonRouters: (Ref & { isOnline: boolean })[]; fixes: Fix[] }
      }
      out += p.head(`Identity ${identity.name} → service ${service.name}\n`)
      for (const [type, x] of [['Dial', e.dial], ['Bind', e.bind]] as const) {
        out += `\n${p.head(type.toUpperCase())}: ${x.allowed ? p.good('allowed') : p.bad('denied')}\n`
        if (x.policies.length === 0) out += `  no ${type} service policy names this service\n`
        else out += table(verdictRows(x.policies, p)).replace(/^(?=.)/gm, '  ')
        for (const pol of x.policies) {
          for (const g of pol.postureChecks) {
            const states = g.apiSessions.length === 0 ? 'not evaluated (no API session, or the policy grants nothing)' : g.apiSessions.map((s) => `${s.apiSessionId} ${s.isPassing ? p.good('passing') : p.bad('failing')}`).join(', ')
            out += `  posture ${pol.policy.name}: ${g.postureCheck.name} (${g.typeId}): ${states}\n`
          }
        }
        out += fixLines(x.fixes, '  ')
      }
      const r = e.edgeRouters
      out += `\n${p.head('EDGE ROUTERS')}\n`
      out += `  identity's edge router policies: ${r.identityEdgeRouterPolicies.map((x) => x.name).join(', ') || p.bad('none')}\n`
      out += `  service's edge router policies:  ${r.serviceEdgeRouterPolicies.map((x) => x.name).join(', ') || p.bad('none')}\n`
      out += `  routers in common: ${r.commonRouters.map((x) => `${x.name} (${x.isOnline ? 'online' : 'offline'})`).join(', ') || p.bad('none')}\n`
      out += fixLines(r.fixes, '  ')
    } else {
      const router = await idByName(session, '/edge-routers', 'edge router', v['edge-router'] as string)
      const e = (await session.get(`/identities/${identity.id}/access/edge-routers/${router.id}`)) as { allowed: boolean; policies: Verdict[]; fixes: Fix[]; serviceCount: number }
      out += p.head(`Identity ${identity.name} → edge router ${router.name}: `) + (e.allowed ? p.good('allowed') : p.bad('denied')) + '\n'
      if (e.policies.length === 0) out += '  no edge router policy names this router\n'
      else out += table(verdictRows(e.policies, p)).replace(/^(?=.)/gm, '  ')
      if (e.allowed) out += `  services of the identity this router may carry: ${e.serviceCount}\n`
      out += fixLines(e.fixes, '  ')
    }
    io.stdout(out)
  })
}

type Counts = { dialGained: number; dialLost: number; bindGained: number; bindLost: number; routersLost: number }
type Preview = {
  totals: Counts & { identities: number; services: number }
  changes: { identity: Ref; service: Ref; change: string; permission: string | null }[]
  pagination: { limit: number; offset: number; totalCount: number }
  summary: { services: (Counts & { service: Ref })[]; identityRoleAttributes: { attribute: string; gaining: number; losing: number; losingRouters: number }[] } | null
}

function readChange(file: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new UsageError(`${file}: not JSON (${(e as Error).message})`)
  }
}

export async function runPreview(argv: string[], io: CliIo): Promise<number> {
  return guarded('preview', io, async () => {
    const v = parse(argv, { file: { type: 'string' }, summary: { type: 'boolean' }, limit: { type: 'string' }, offset: { type: 'string' } })
    const file = v.file as string | undefined
    if (!file) throw new UsageError('give --file with the change (JSON)')
    let text: string
    try {
      text = file === '-' ? await io.readStdin() : readFileSync(file, 'utf8')
    } catch (e) {
      throw new UsageError(`${file}: ${(e as Error).message}`)
    }
    const change = readChange(file, text)
    const session = await openSession(v, io.env)
    const q = new URLSearchParams()
    if (v.summary) q.set('summary', 'true')
    if (v.limit) q.set('limit', v.limit as string)
    if (v.offset) q.set('offset', v.offset as string)
    const r = (await session.post(`/policy-previews${q.size > 0 ? `?${q}` : ''}`, change)) as Preview
    const p = painter(io)
    const t = r.totals
    const n = (x: number, bad: boolean) => (bad && x > 0 ? p.bad(String(x)) : String(x))
    let out = p.head('Preview (nothing was changed)\n')
    out += table([
      ['DIAL GAINED', 'DIAL LOST', 'BIND GAINED', 'BIND LOST', 'ROUTERS LOST', 'IDENTITIES', 'SERVICES'],
      [String(t.dialGained), n(t.dialLost, true), String(t.bindGained), n(t.bindLost, true), n(t.routersLost, true), String(t.identities), String(t.services)],
    ])
    if (r.summary) {
      if (r.summary.services.length > 0) {
        out += `\n${p.head('Per service')}\n`
        out += table([['SERVICE', 'DIAL +', 'DIAL -', 'BIND +', 'BIND -', 'ROUTERS LOST'], ...r.summary.services.map((s) => [s.service.name, String(s.dialGained), n(s.dialLost, true), String(s.bindGained), n(s.bindLost, true), n(s.routersLost, true)])])
      }
      if (r.summary.identityRoleAttributes.length > 0) {
        out += `\n${p.head('Per identity role attribute (identities)')}\n`
        out += table([['ATTRIBUTE', 'GAINING', 'LOSING', 'LOSING ROUTERS'], ...r.summary.identityRoleAttributes.map((a) => [`#${a.attribute}`, String(a.gaining), n(a.losing, true), n(a.losingRouters, true)])])
      }
    } else if (r.changes.length > 0) {
      out += '\n' + table([
        ['CHANGE', 'PERMISSION', 'IDENTITY', 'SERVICE'],
        ...r.changes.map((c) => [c.change === 'gained' ? p.good(c.change) : p.bad(c.change), c.permission ?? '', c.identity.name, c.service.name]),
      ])
      const { offset, totalCount } = r.pagination
      if (offset > 0 || r.changes.length < totalCount) out += `(changes ${offset + 1}-${offset + r.changes.length} of ${totalCount}; --limit and --offset page)\n`
    } else out += 'no identity gains or loses access\n'
    io.stdout(out)
  })
}
