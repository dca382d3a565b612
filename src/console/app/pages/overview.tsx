/**
 * Overview: the version, counts (each list's `totalCount` at `limit=1`), the listener's health checks (`GET
 * /health-checks`, at the listener's root, with the server certificate's expiry in its `server-certificate` check),
 * and links to what needs attention: expired enrollments, disabled identities, edge routers never enrolled.
 */
import { useEffect, useState } from 'preact/hooks'
import { get, session, type Page as ListPage } from '../api.ts'
import { serverNow } from '../server-time.ts'
import { ErrorLine, Page } from '../ui/common.tsx'

interface Check {
  id: string
  healthy: boolean
  details: string
  lastCheckTime?: string
}

const COUNTED: Array<[string, string, string]> = [
  ['Identities', '/identities', '#/identities'],
  ['Services', '/services', '#/services'],
  ['Edge routers', '/edge-routers', '#/edge-routers'],
  ['Service policies', '/service-policies', '#/service-policies'],
  ['Edge router policies', '/edge-router-policies', '#/edge-router-policies'],
  ['Service edge router policies', '/service-edge-router-policies', '#/service-edge-router-policies'],
]

const q = (filter: string, limit = 10) => `limit=${limit}&filter=${encodeURIComponent(filter)}`

/** Disabled identities: the identity list has no `disabled` filter field, so its pages are read (at most 5,000). */
async function disabledIdentities(): Promise<{ rows: Array<{ id: string; name: string }>; more: boolean }> {
  const rows: Array<{ id: string; name: string }> = []
  for (let offset = 0; offset < 5000; offset += 500) {
    const page = await get<ListPage<{ id: string; name: string; disabled: boolean }>>(`/identities?limit=500&offset=${offset}&sort=${encodeURIComponent('name asc')}`)
    for (const i of page.data) if (i.disabled) rows.push({ id: i.id, name: i.name })
    if (offset + 500 >= (page.meta.pagination?.totalCount ?? 0)) return { rows, more: false }
  }
  return { rows, more: true }
}

/** The health checks at the listener's root (not under the Management API; no session needed, the console sends it). */
async function healthChecks(): Promise<{ healthy: boolean; checks: Check[] }> {
  const token = session.get()
  const res = await fetch('/health-checks', { headers: { accept: 'application/json', ...(token ? { 'zt-session': token } : {}) } })
  const body = await res.json().catch(() => undefined)
  if (!body?.data?.checks) throw new Error(`health checks: HTTP ${res.status}`)
  return body.data
}

function Attention<T extends { id: string }>(props: { title: string; rows: T[] | undefined; total?: number; empty: string; render: (row: T) => preact.ComponentChildren; more?: preact.ComponentChildren }) {
  const count = props.total ?? props.rows?.length ?? 0
  return (
    <section class="card" aria-label={props.title}>
      <h3>
        {props.title}: {props.rows === undefined ? '…' : count}
      </h3>
      {props.rows !== undefined && props.rows.length === 0 && <p class="muted">{props.empty}</p>}
      {props.rows && props.rows.length > 0 && (
        <ul>
          {props.rows.slice(0, 10).map((r) => (
            <li>{props.render(r)}</li>
          ))}
        </ul>
      )}
      {props.more}
    </section>
  )
}

export function OverviewPage() {
  const [version, setVersion] = useState<any>(undefined)
  const [counts, setCounts] = useState<Record<string, number>>({})
  const [health, setHealth] = useState<{ healthy: boolean; checks: Check[] } | undefined>(undefined)
  const [expired, setExpired] = useState<ListPage<any> | undefined>(undefined)
  const [unenrolled, setUnenrolled] = useState<ListPage<any> | undefined>(undefined)
  const [disabled, setDisabled] = useState<{ rows: Array<{ id: string; name: string }>; more: boolean } | undefined>(undefined)
  const [errors, setErrors] = useState<unknown[]>([])
  useEffect(() => {
    const fail = (e: unknown) => setErrors((xs) => [...xs, e])
    get('/version').then((v) => setVersion(v.data), fail)
    for (const [label, path] of COUNTED) {
      get<ListPage<unknown>>(`${path}?limit=1`).then((p) => setCounts((c) => ({ ...c, [label]: p.meta.pagination?.totalCount ?? p.data.length })), fail)
    }
    healthChecks().then(setHealth, fail)
    serverNow()
      .then((now) => get<ListPage<any>>(`/enrollments?${q(`expiresAt < datetime(${new Date(now).toISOString()})`)}&sort=${encodeURIComponent('expiresAt asc')}`))
      .then(setExpired, fail)
    get<ListPage<any>>(`/edge-routers?${q('isVerified = false')}`).then(setUnenrolled, fail)
    disabledIdentities().then(setDisabled, fail)
  }, [])
  const cert = health?.checks.find((c) => c.id === 'server-certificate')
  return (
    <Page title="Overview">
      {errors.map((e) => (
        <ErrorLine error={e} />
      ))}
      <dl class="facts">
        <dt>Version</dt>
        <dd>{version ? `${version.version} (${version.revision}, ${version.runtimeVersion})` : '…'}</dd>
        <dt>Server certificate</dt>
        <dd class={cert && !cert.healthy ? 'error' : undefined}>{cert ? cert.details : '…'}</dd>
        <dt>Health</dt>
        <dd class={health && !health.healthy ? 'error' : undefined}>{health ? (health.healthy ? 'healthy' : 'NOT healthy') : '…'}</dd>
      </dl>
      <h2>Counts</h2>
      <ul class="counts">
        {COUNTED.map(([label, , href]) => (
          <li>
            <a href={href}>
              <strong>{counts[label] ?? '…'}</strong> {label}
            </a>
          </li>
        ))}
      </ul>
      <h2>Health checks</h2>
      <table aria-label="health checks">
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Healthy</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {(health?.checks ?? []).map((c) => (
            <tr>
              <td>{c.id}</td>
              <td class={c.healthy ? undefined : 'error'}>{c.healthy ? 'yes' : 'NO'}</td>
              <td>{c.details}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Needs attention</h2>
      <div class="attention">
        <Attention
          title="Expired enrollments"
          rows={expired?.data}
          total={expired?.meta.pagination?.totalCount}
          empty="None: every outstanding enrollment is still valid."
          render={(e) => (
            <a href={`#/identities/${encodeURIComponent(e.identityId ?? '')}`}>
              {e.identity?.name ?? e.identityId ?? e.id} ({e.method}, expired {new Date(e.expiresAt).toLocaleString()})
            </a>
          )}
        />
        <Attention
          title="Disabled identities"
          rows={disabled?.rows}
          empty="None."
          render={(i) => <a href={`#/identities/${encodeURIComponent(i.id)}`}>{i.name}</a>}
          more={disabled?.more ? <p class="muted">Only the first 5,000 identities were read.</p> : undefined}
        />
        <Attention
          title="Edge routers never enrolled"
          rows={unenrolled?.data}
          total={unenrolled?.meta.pagination?.totalCount}
          empty="None: every edge router has enrolled."
          render={(r) => <a href={`#/edge-routers/${encodeURIComponent(r.id)}`}>{r.name}</a>}
        />
      </div>
    </Page>
  )
}
