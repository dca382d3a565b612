/**
 * Access: why an identity can or cannot reach a service (or use an edge router). The admin picks both with searchable
 * pickers; the page asks `GET /identities/{id}/access/{serviceId}` (or `.../access/edge-routers/{edgeRouterId}`) and
 * draws the answer as the chain identity → policy → service → edge router, naming the missing link and the API's
 * smallest fixes. Below it, a role-attribute form with the what-if panel: what this identity would gain or lose with
 * other role attributes, before saving them. Other pages may link here with `#/access?identity=ID&service=ID` (or
 * `&edgeRouter=ID`).
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { get, patch } from '../api.ts'
import { useRoute } from '../router.ts'
import { ErrorLine, Field, Page, splitList, useAction } from '../ui/common.tsx'
import { roleAttributesChange, WhatIf } from '../ui/what-if.tsx'

interface Ref {
  id: string
  name: string
}
interface Verdict {
  policy: Ref
  semantic: 'AllOf' | 'AnyOf'
  identityRoles: string[]
  matches: boolean
  matchedBy: string | null
  missingRoles: string[]
  postureChecks?: Array<{ postureCheck: Ref; typeId: string; apiSessions: Array<{ apiSessionId: string; isPassing: boolean }> }>
}
interface Fix {
  action: string
  attributes: string[]
  policies: Ref[]
  description: string
}
interface Permission {
  allowed: boolean
  policies: Verdict[]
  fixes: Fix[]
}
interface ServiceAccess {
  identity: Ref
  service: Ref
  dial: Permission
  bind: Permission
  edgeRouters: {
    identityEdgeRouterPolicies: Ref[]
    serviceEdgeRouterPolicies: Ref[]
    identityRouterCount: number
    serviceRouterCount: number
    commonRouters: Ref[]
    fixes: Fix[]
  }
}
interface RouterAccess {
  identity: Ref
  edgeRouter: Ref
  allowed: boolean
  policies: Verdict[]
  fixes: Fix[]
  serviceCount: number
}

type Target = 'services' | 'edge-routers'

const href = (entity: string, id: string) => `#/${entity}/${encodeURIComponent(id)}`
const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`

function hashQuery(): URLSearchParams {
  const h = location.hash
  const i = h.indexOf('?')
  return new URLSearchParams(i < 0 ? '' : h.slice(i + 1))
}

/** A searchable picker: a search box asking the API by name (its own filter language), and the matches as buttons. */
export function Picker(props: { label: string; path: string; chosen: Ref | undefined; onPick: (r: Ref) => void }) {
  const [q, setQ] = useState('')
  const [rows, setRows] = useState<Ref[]>([])
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    const t = setTimeout(() => {
      const params = new URLSearchParams({ limit: '8', sort: 'name asc' })
      if (q.trim()) params.set('filter', `name contains ${quote(q.trim())}`)
      get<{ data: Ref[] }>(`${props.path}?${params}`).then(
        (r) => (setRows(r.data.map((x) => ({ id: x.id, name: x.name }))), setError(undefined)),
        setError,
      )
    }, 250)
    return () => clearTimeout(t)
  }, [q, props.path])
  return (
    <div class="picker">
      <Field label={props.label} hint="Type part of a name, then choose one below.">
        <input type="search" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
      </Field>
      <ErrorLine error={error} />
      <ul class="picks" aria-label={`${props.label}: matches`}>
        {rows.map((r) => (
          <li>
            <button type="button" aria-pressed={props.chosen?.id === r.id} onClick={() => props.onPick(r)}>
              {r.name}
            </button>
          </li>
        ))}
        {rows.length === 0 && !error && <li class="muted">No match.</li>}
      </ul>
      <p class="chosen">
        {props.label}: {props.chosen ? <strong>{props.chosen.name}</strong> : <span class="muted">none chosen</span>}
      </p>
    </div>
  )
}

/** One link of the chain: a box, or a dashed red box naming what is missing. */
function Link(props: { kind: string; children: ComponentChildren; missing?: boolean }) {
  return (
    <li class={props.missing ? 'link missing' : 'link'} aria-label={props.missing ? `missing ${props.kind}` : props.kind}>
      <small>{props.kind}</small>
      <div>{props.children}</div>
    </li>
  )
}

const Arrow = () => (
  <li class="arrow" aria-hidden="true">
    →
  </li>
)

const roles = (v: Verdict) => `${v.semantic} ${v.identityRoles.join(' ')}`

function Fixes({ fixes, title }: { fixes: Fix[]; title: string }) {
  if (fixes.length === 0) return null
  return (
    <div>
      <h3>{title}</h3>
      <ul aria-label={title}>
        {fixes.map((f) => (
          <li>{f.description}</li>
        ))}
      </ul>
    </div>
  )
}

/** The chain for one permission (Dial or Bind) of a service: identity → service policy → service → edge router. */
function PermissionChain({ a, type }: { a: ServiceAccess; type: 'Dial' | 'Bind' }) {
  const p = type === 'Dial' ? a.dial : a.bind
  const granting = p.policies.filter((v) => v.matches)
  const r = a.edgeRouters
  let missing: string | undefined
  if (p.policies.length === 0) missing = `no ${type} service policy names service ${a.service.name}`
  else if (granting.length === 0) missing = `no ${type} service policy names identity ${a.identity.name} and service ${a.service.name}`
  const routerMissing =
    r.commonRouters.length > 0
      ? undefined
      : r.identityRouterCount === 0
        ? `no edge router policy gives identity ${a.identity.name} an edge router`
        : r.serviceRouterCount === 0
          ? `no service edge router policy gives service ${a.service.name} an edge router`
          : `no edge router is both identity ${a.identity.name}'s and service ${a.service.name}'s`
  const verdict = p.allowed && !routerMissing ? 'can' : p.allowed ? 'may but has no edge router to' : 'cannot'
  return (
    <div class="card answer">
      <h2>
        {type}: {a.identity.name} {verdict} {type === 'Dial' ? 'dial' : 'bind (host)'} {a.service.name}
      </h2>
      <ol class="chain" aria-label={`${type} access chain`}>
        <Link kind="identity">
          <a href={href('identities', a.identity.id)}>{a.identity.name}</a>
        </Link>
        <Arrow />
        {granting.length > 0 ? (
          <Link kind={`${type} service policy`}>
            {granting.map((v, k) => (
              <span>
                {k > 0 && ', '}
                <a href={href('service-policies', v.policy.id)}>{v.policy.name}</a> <small>(by {v.matchedBy})</small>
              </span>
            ))}
          </Link>
        ) : (
          <Link kind={`${type} service policy`} missing>
            {missing}
          </Link>
        )}
        <Arrow />
        <Link kind="service">
          <a href={href('services', a.service.id)}>{a.service.name}</a>
        </Link>
        <Arrow />
        {routerMissing ? (
          <Link kind="edge router" missing>
            {routerMissing}
          </Link>
        ) : (
          <Link kind="edge router">
            {r.commonRouters.map((x, k) => (
              <span>
                {k > 0 && ', '}
                <a href={href('edge-routers', x.id)}>{x.name}</a>
              </span>
            ))}
          </Link>
        )}
      </ol>
      {missing && <p class="error">Missing: {missing}.</p>}
      {p.policies.length > 0 && (
        <table>
          <caption class="muted">{type} service policies that select the service</caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Identity roles</th>
              <th scope="col">Selects the identity</th>
              <th scope="col">Missing roles</th>
              <th scope="col">Posture checks</th>
            </tr>
          </thead>
          <tbody>
            {p.policies.map((v) => (
              <tr>
                <td>
                  <a href={href('service-policies', v.policy.id)}>{v.policy.name}</a>
                </td>
                <td>{roles(v)}</td>
                <td>{v.matches ? `yes (${v.matchedBy})` : 'no'}</td>
                <td>{v.missingRoles.join(' ')}</td>
                <td>
                  {(v.postureChecks ?? []).map((c) => (
                    <div>
                      <a href={href('posture-checks', c.postureCheck.id)}>{c.postureCheck.name}</a> ({c.typeId}:{' '}
                      {c.apiSessions.length === 0 ? 'no session' : c.apiSessions.every((s) => s.isPassing) ? 'passing' : 'failing'})
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Fixes fixes={p.fixes} title={`Smallest fixes for ${type}`} />
    </div>
  )
}

function ServiceAnswer({ a }: { a: ServiceAccess }) {
  const r = a.edgeRouters
  const refs = (entity: string, list: Ref[]) =>
    list.length === 0 ? (
      <span class="muted">none</span>
    ) : (
      list.map((x, k) => (
        <span>
          {k > 0 && ', '}
          <a href={href(entity, x.id)}>{x.name}</a>
        </span>
      ))
    )
  return (
    <section aria-label="answer">
      <PermissionChain a={a} type="Dial" />
      <PermissionChain a={a} type="Bind" />
      <div class="card answer">
        <h2>Edge routers</h2>
        <dl class="facts">
          <dt>Identity's edge router policies</dt>
          <dd>{refs('edge-router-policies', r.identityEdgeRouterPolicies)}</dd>
          <dt>Service's edge router policies</dt>
          <dd>{refs('service-edge-router-policies', r.serviceEdgeRouterPolicies)}</dd>
          <dt>Routers</dt>
          <dd>
            the identity's {r.identityRouterCount}, the service's {r.serviceRouterCount}, in common {r.commonRouters.length}
          </dd>
        </dl>
        <Fixes fixes={r.fixes} title="Smallest fixes for edge routers" />
      </div>
    </section>
  )
}

function RouterAnswer({ a }: { a: RouterAccess }) {
  const granting = a.policies.filter((v) => v.matches)
  const missing = granting.length === 0 ? `no edge router policy names identity ${a.identity.name} and edge router ${a.edgeRouter.name}` : undefined
  return (
    <section aria-label="answer" class="card answer">
      <h2>
        {a.identity.name} {a.allowed ? 'can' : 'cannot'} use edge router {a.edgeRouter.name}
      </h2>
      <ol class="chain" aria-label="edge router access chain">
        <Link kind="identity">
          <a href={href('identities', a.identity.id)}>{a.identity.name}</a>
        </Link>
        <Arrow />
        {missing ? (
          <Link kind="edge router policy" missing>
            {missing}
          </Link>
        ) : (
          <Link kind="edge router policy">
            {granting.map((v, k) => (
              <span>
                {k > 0 && ', '}
                <a href={href('edge-router-policies', v.policy.id)}>{v.policy.name}</a> <small>(by {v.matchedBy})</small>
              </span>
            ))}
          </Link>
        )}
        <Arrow />
        <Link kind="edge router">
          <a href={href('edge-routers', a.edgeRouter.id)}>{a.edgeRouter.name}</a>
        </Link>
      </ol>
      {missing && <p class="error">Missing: {missing}.</p>}
      <p>
        Of the identity's services, {a.serviceCount} may be carried by this router.
      </p>
      {a.policies.length > 0 && (
        <ul aria-label="edge router policies that select the router">
          {a.policies.map((v) => (
            <li>
              <a href={href('edge-router-policies', v.policy.id)}>{v.policy.name}</a> ({roles(v)}):{' '}
              {v.matches ? `selects the identity (${v.matchedBy})` : `does not select the identity; missing ${v.missingRoles.join(' ')}`}
            </li>
          ))}
        </ul>
      )}
      <Fixes fixes={a.fixes} title="Smallest fixes" />
    </section>
  )
}

/** "What if this identity had these role attributes": the what-if panel, and saving them. */
function RoleAttributes(props: { identity: Ref; onSaved: () => void }) {
  const [current, setCurrent] = useState<string[] | undefined>(undefined)
  const [text, setText] = useState('')
  const [loadError, setLoadError] = useState<unknown>(undefined)
  useEffect(() => {
    setCurrent(undefined)
    get<{ data: { roleAttributes: string[] | null } }>(`/identities/${encodeURIComponent(props.identity.id)}`).then((r) => {
      const attrs = r.data.roleAttributes ?? []
      setCurrent(attrs)
      setText(attrs.join(', '))
    }, setLoadError)
  }, [props.identity.id])
  const attrs = splitList(text)
  const changed = current !== undefined && (attrs.length !== current.length || attrs.some((a, i) => a !== current[i]))
  const save = useAction(async () => {
    await patch(`/identities/${encodeURIComponent(props.identity.id)}`, { roleAttributes: attrs })
    setCurrent(attrs)
    props.onSaved()
  })
  return (
    <div class="card answer">
      <h2>What if {props.identity.name} had these role attributes</h2>
      <ErrorLine error={loadError} />
      <form onSubmit={(e) => (e.preventDefault(), void save.run())} aria-label="role attributes">
        <Field label="Role attributes" hint={`Comma separated. Now: ${current === undefined ? '…' : current.length ? current.join(', ') : 'none'}`}>
          <input value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </Field>
        <button type="submit" disabled={!changed || save.busy}>
          Save role attributes
        </button>
        <ErrorLine error={save.error} />
      </form>
      <WhatIf change={changed ? roleAttributesChange(props.identity.id, attrs) : null} title="What this change would do" />
    </div>
  )
}

export function AccessPage() {
  const route = useRoute()
  const initial = hashQuery()
  const [identity, setIdentity] = useState<Ref | undefined>(undefined)
  const [target, setTarget] = useState<Target>(initial.get('edgeRouter') ? 'edge-routers' : 'services')
  const [other, setOther] = useState<Ref | undefined>(undefined)
  const [answer, setAnswer] = useState<{ service?: ServiceAccess; router?: RouterAccess } | undefined>(undefined)
  const [version, setVersion] = useState(0)

  // a link with ids (#/access?identity=..&service=..), also while the page is open: resolve the names, then explain
  const [linkError, setLinkError] = useState<unknown>(undefined)
  useEffect(() => {
    const iid = initial.get('identity')
    const sid = initial.get('service')
    const rid = initial.get('edgeRouter')
    const kind: Target = rid ? 'edge-routers' : 'services'
    const oid = rid ?? sid
    setLinkError(undefined)
    if (iid) get<{ data: Ref }>(`/identities/${encodeURIComponent(iid)}`).then((r) => setIdentity({ id: r.data.id, name: r.data.name }), setLinkError)
    if (oid) {
      if (kind !== target) setOther(undefined)
      setTarget(kind)
      get<{ data: Ref }>(`/${kind}/${encodeURIComponent(oid)}`).then((r) => setOther({ id: r.data.id, name: r.data.name }), setLinkError)
    }
  }, [route])

  const explain = useAction(async () => {
    if (!identity || !other) return
    const base = `/identities/${encodeURIComponent(identity.id)}/access`
    if (target === 'services') setAnswer({ service: (await get<{ data: ServiceAccess }>(`${base}/${encodeURIComponent(other.id)}`)).data })
    else setAnswer({ router: (await get<{ data: RouterAccess }>(`${base}/edge-routers/${encodeURIComponent(other.id)}`)).data })
  })
  useEffect(() => {
    setAnswer(undefined)
    if (identity && other) void explain.run()
  }, [identity?.id, other?.id, target, version])

  return (
    <Page title="Access">
      <p>Why can an identity reach a service or use an edge router, or why not? Pick both.</p>
      <div class="pickers">
        <Picker label="Identity" path="/identities" chosen={identity} onPick={setIdentity} />
        <div>
          <fieldset class="target">
            <legend>Reach</legend>
            <label>
              <input type="radio" name="target" checked={target === 'services'} onChange={() => (setTarget('services'), setOther(undefined))} /> a service
            </label>
            <label>
              <input type="radio" name="target" checked={target === 'edge-routers'} onChange={() => (setTarget('edge-routers'), setOther(undefined))} /> an edge
              router
            </label>
          </fieldset>
          <Picker key={target} label={target === 'services' ? 'Service' : 'Edge router'} path={`/${target}`} chosen={other} onPick={setOther} />
        </div>
      </div>
      <ErrorLine error={linkError} />
      <ErrorLine error={explain.error} />
      {explain.busy && <p class="muted">Asking the controller…</p>}
      {answer?.service && <ServiceAnswer a={answer.service} />}
      {answer?.router && <RouterAnswer a={answer.router} />}
      {identity && <RoleAttributes identity={identity} onSaved={() => setVersion((v) => v + 1)} />}
    </Page>
  )
}
