/**
 * The what-if panel: any policy or role-attribute form embeds it with the change the form would make, and it shows
 * `POST /policy-previews` (README "Policy insight": who gains, who loses, who keeps a permission but loses every usable
 * edge router) before the admin saves. The preview is asked again, debounced, while the form changes; a stale answer
 * never replaces a newer one; a refusal (the same 4xx the real write would get) is shown as the API words it.
 *
 * Use:
 *   <WhatIf change={{ operation: 'update', entityType: 'service-policies', id, body: formBody }} />
 *   <WhatIf change={roleAttributesChange(identity.id, attrs)} />
 * `change` null or undefined: nothing to preview yet (the panel says so).
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { post } from '../api.ts'
import { ErrorLine } from './common.tsx'

/** The entity types `POST /policy-previews` accepts. */
export type PreviewEntityType =
  | 'service-policies'
  | 'edge-router-policies'
  | 'service-edge-router-policies'
  | 'identities'
  | 'services'
  | 'edge-routers'

/** The change a form would make: the very body the real operation takes (create: POST, update: PUT, patch: PATCH). */
export interface WhatIfChange {
  operation: 'create' | 'update' | 'patch' | 'delete'
  entityType: PreviewEntityType
  /** The entity's id, for update, patch and delete. */
  id?: string
  body?: Record<string, unknown>
}

export interface WhatIfProps {
  /** The change to preview; null or undefined while the form has nothing to preview. */
  change: WhatIfChange | null | undefined
  /** Wait this long after the last change of the form before asking (default 400 ms). */
  delayMs?: number
  /** Rows of changes to show at most (default 100; the totals always count them all). */
  limit?: number
  /** The panel's heading (default "What if"). */
  title?: string
}

/** The change of an identity's role attributes (a PATCH of `roleAttributes`), for `WhatIf`'s `change`. */
export function roleAttributesChange(identityId: string, roleAttributes: string[]): WhatIfChange {
  return { operation: 'patch', entityType: 'identities', id: identityId, body: { roleAttributes } }
}

interface Ref {
  id: string
  name: string
}
interface PreviewRow {
  identity: Ref
  service: Ref
  change: 'gained' | 'lost' | 'routers-lost'
  permission: 'Dial' | 'Bind' | null
}
interface Preview {
  totals: { dialGained: number; dialLost: number; bindGained: number; bindLost: number; routersLost: number; identities: number; services: number }
  changes: PreviewRow[]
  pagination: { limit: number; offset: number; totalCount: number }
}

type State = { kind: 'idle' } | { kind: 'waiting'; last?: Preview } | { kind: 'ready'; preview: Preview } | { kind: 'failed'; error: unknown }

const names = (rows: PreviewRow[], pick: (r: PreviewRow) => Ref) => {
  const seen = new Map<string, string>()
  for (const r of rows) seen.set(pick(r).id, pick(r).name)
  return [...seen.entries()].map(([id, name]) => ({ id, name }))
}

function Rows(props: { label: string; rows: PreviewRow[]; verb: (r: PreviewRow) => string }) {
  if (props.rows.length === 0) return null
  const identities = names(props.rows, (r) => r.identity)
  return (
    <div class="whatif-group">
      <h3>{props.label}</h3>
      <p>
        Identities:{' '}
        {identities.map((i, k) => (
          <span>
            {k > 0 && ', '}
            <a href={`#/identities/${encodeURIComponent(i.id)}`}>{i.name}</a>
          </span>
        ))}
      </p>
      <ul aria-label={props.label}>
        {props.rows.map((r) => (
          <li>
            <a href={`#/identities/${encodeURIComponent(r.identity.id)}`}>{r.identity.name}</a> {props.verb(r)}{' '}
            <a href={`#/services/${encodeURIComponent(r.service.id)}`}>{r.service.name}</a>
          </li>
        ))}
      </ul>
    </div>
  )
}

export function WhatIf(props: WhatIfProps) {
  const [state, setState] = useState<State>({ kind: 'idle' })
  const asked = useRef(0)
  const key = props.change ? JSON.stringify(props.change) : ''
  const limit = props.limit ?? 100
  useEffect(() => {
    const n = ++asked.current
    if (!key) {
      setState({ kind: 'idle' })
      return
    }
    // the last answer stays up (marked busy) until the new one comes, so the panel does not flicker while typing
    setState((s) => ({ kind: 'waiting', last: s.kind === 'ready' ? s.preview : s.kind === 'waiting' ? s.last : undefined }))
    const timer = setTimeout(() => {
      post<{ data: Preview }>(`/policy-previews?limit=${limit}`, JSON.parse(key)).then(
        (r) => n === asked.current && setState({ kind: 'ready', preview: r.data }),
        (e) => n === asked.current && setState({ kind: 'failed', error: e }),
      )
    }, props.delayMs ?? 400)
    return () => clearTimeout(timer)
  }, [key, limit])

  const title = props.title ?? 'What if'
  return (
    <section class="card whatif" aria-label={title} aria-live="polite" aria-busy={state.kind === 'waiting'}>
      <h2>{title}</h2>
      {state.kind === 'idle' && <p class="muted">Change the form to see who would gain or lose access.</p>}
      {state.kind === 'waiting' && <p class="muted">Working out what this change would do…</p>}
      {state.kind === 'waiting' && state.last && (
        <div class="stale">
          <Outcome preview={state.last} />
        </div>
      )}
      {state.kind === 'failed' && (
        <>
          <p>The controller would refuse this change:</p>
          <ErrorLine error={state.error} />
        </>
      )}
      {state.kind === 'ready' && <Outcome preview={state.preview} />}
    </section>
  )
}

function Outcome({ preview }: { preview: Preview }) {
  const t = preview.totals
  const total = preview.pagination.totalCount
  if (total === 0) return <p>Nobody would gain or lose access: this change does not change who can reach what.</p>
  const gained = preview.changes.filter((r) => r.change === 'gained')
  const lost = preview.changes.filter((r) => r.change === 'lost')
  const routers = preview.changes.filter((r) => r.change === 'routers-lost')
  return (
    <>
      <p>
        {t.identities} {t.identities === 1 ? 'identity' : 'identities'} and {t.services} {t.services === 1 ? 'service' : 'services'} concerned: Dial +{t.dialGained} −{t.dialLost}, Bind +
        {t.bindGained} −{t.bindLost}
        {t.routersLost > 0 && `, ${t.routersLost} left without an edge router`}.
      </p>
      <Rows label="Would gain access" rows={gained} verb={(r) => `could ${r.permission}`} />
      <Rows label="Would lose access" rows={lost} verb={(r) => `could no longer ${r.permission}`} />
      <Rows label="Would lose every edge router" rows={routers} verb={() => 'keeps its permission but no edge router carries'} />
      {preview.changes.length < total && (
        <p class="muted">
          Showing {preview.changes.length} of {total} changes.
        </p>
      )}
    </>
  )
}
