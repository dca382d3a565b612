/**
 * Identities: the list (the API's filter, paging, sorting), the create form (enrollment method and role attributes),
 * and the detail page with the outstanding enrollment (JWT to copy or download, QR code), re-enroll, disable/enable,
 * reset MFA and delete (with a confirmation naming what goes with the identity).
 */
import { useEffect, useMemo, useState } from 'preact/hooks'
import { ApiFailure, del, get, patch, post } from '../api.ts'
import { navigate } from '../router.ts'
import { serverNow } from '../server-time.ts'
import { AttributePicker } from '../ui/attributes.tsx'
import { roleAttributesChange, WhatIf } from '../ui/what-if.tsx'
import { ErrorLine, Field, Page, useAction } from '../ui/common.tsx'
import { EntityList, type Column } from '../ui/list.tsx'
import { QrCode } from '../ui/qr.tsx'

interface Identity {
  id: string
  name: string
  typeId: string
  isAdmin: boolean
  isDefaultAdmin?: boolean
  roleAttributes: string[] | null
  disabled: boolean
  disabledUntil?: string | null
  isMfaEnabled: boolean
  hasApiSession: boolean
  authenticators: { cert?: { id: string; fingerprint: string }; updb?: { id: string; username: string } }
  enrollment: Partial<Record<'ott' | 'ottca' | 'updb', { id: string; jwt: string; expiresAt: string; caId?: string; username?: string }>>
  createdAt: string
}

const isEnrolled = (i: Identity) => Object.keys(i.authenticators ?? {}).length > 0
const enrollmentState = (i: Identity) => (isEnrolled(i) ? 'yes' : Object.keys(i.enrollment ?? {}).length > 0 ? 'pending' : 'no')

const COLUMNS: Column<Identity>[] = [
  { key: 'name', label: 'Name', sortable: true },
  { key: 'type', label: 'Type', sortable: true, render: (i) => i.typeId },
  { key: 'roleAttributes', label: 'Role attributes', render: (i) => (i.roleAttributes ?? []).map((a) => `#${a}`).join(' ') },
  { key: 'enrolled', label: 'Enrolled', render: enrollmentState },
  { key: 'disabled', label: 'Disabled', render: (i) => (i.disabled ? 'yes' : 'no') },
]

export function IdentitiesPage() {
  return (
    <Page
      title="Identities"
      actions={
        <a class="button primary" href="#/identities/new">
          New identity
        </a>
      }
    >
      <EntityList<Identity> path="/identities" columns={COLUMNS} label="identities" onOpen={(i) => navigate(`/identities/${encodeURIComponent(i.id)}`)} />
    </Page>
  )
}

type Method = 'ott' | 'ottca' | 'updb' | 'none'

export function IdentityCreatePage() {
  const [name, setName] = useState('')
  const [type, setType] = useState('Device')
  const [isAdmin, setIsAdmin] = useState(false)
  const [method, setMethod] = useState<Method>('ott')
  const [caId, setCaId] = useState('')
  const [username, setUsername] = useState('')
  const [attributes, setAttributes] = useState<string[]>([])
  const [cas, setCas] = useState<Array<{ id: string; name: string }>>([])
  useEffect(() => {
    get('/cas?limit=500').then(
      (r) => setCas(r.data),
      () => setCas([]),
    )
  }, [])
  const create = useAction(async () => {
    const enrollment = method === 'ott' ? { ott: true } : method === 'ottca' ? { ottca: caId } : method === 'updb' ? { updb: username } : undefined
    const r = await post('/identities', { name, type, isAdmin, roleAttributes: attributes, ...(enrollment ? { enrollment } : {}) })
    navigate(`/identities/${encodeURIComponent(r.data.id)}`)
  })
  const fieldError = (f: string) => (create.error instanceof ApiFailure && create.error.error.cause?.field === f ? String(create.error.error.cause.reason ?? create.error.error.message) : undefined)
  return (
    <Page title="New identity">
      <form class="form" aria-label="new identity" onSubmit={(e) => (e.preventDefault(), void create.run())}>
        <Field label="Name" error={fieldError('name')}>
          <input name="name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Type">
          <select name="type" value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
            <option value="Device">Device</option>
            <option value="User">User</option>
            <option value="Service">Service</option>
            <option value="Default">Default</option>
          </select>
        </Field>
        <label class="check">
          <input type="checkbox" checked={isAdmin} onChange={(e) => setIsAdmin((e.target as HTMLInputElement).checked)} />
          <span>Administrator</span>
        </label>
        <Field label="Enrollment method" hint="ott: a one-time token for a device; ottca: a certificate from a third-party CA; updb: a username and password.">
          <select name="method" value={method} onChange={(e) => setMethod((e.target as HTMLSelectElement).value as Method)}>
            <option value="ott">One-time token (ott)</option>
            <option value="ottca">Third-party CA (ottca)</option>
            <option value="updb">Username and password (updb)</option>
            <option value="none">None</option>
          </select>
        </Field>
        {method === 'ottca' && (
          <Field label="Certificate authority" error={fieldError('enrollment.ottca') ?? fieldError('ottca')} hint={cas.length === 0 ? 'No CA yet: add one on the CAs page.' : undefined}>
            <select name="ca" required value={caId} onChange={(e) => setCaId((e.target as HTMLSelectElement).value)}>
              <option value="">Choose a CA</option>
              {cas.map((c) => (
                <option value={c.id}>{c.name}</option>
              ))}
            </select>
          </Field>
        )}
        {method === 'updb' && (
          <Field label="Username" error={fieldError('username') ?? fieldError('enrollment.updb')}>
            <input name="username" required value={username} onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
          </Field>
        )}
        <AttributePicker label="Role attributes" source="/identity-role-attributes" value={attributes} onChange={setAttributes} />
        <WhatIf
          change={attributes.length > 0 && name.trim() !== '' ? { operation: 'create', entityType: 'identities', body: { name: name.trim(), type, isAdmin, roleAttributes: attributes } } : null}
        />
        <div class="buttons">
          <button type="submit" disabled={create.busy}>
            Create
          </button>
          <a href="#/identities">Cancel</a>
        </div>
        <ErrorLine error={create.error} />
      </form>
    </Page>
  )
}

/** The outstanding enrollment: its JWT to copy or download, and a QR code of it. */
function EnrollmentCard(props: { identity: Identity; method: 'ott' | 'ottca' | 'updb' }) {
  const e = props.identity.enrollment[props.method]!
  const [copied, setCopied] = useState<string | undefined>(undefined)
  const url = useMemo(() => URL.createObjectURL(new Blob([e.jwt], { type: 'application/jwt' })), [e.jwt])
  useEffect(() => () => URL.revokeObjectURL(url), [url])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(e.jwt)
      setCopied('Copied to the clipboard.')
    } catch {
      // no clipboard (an insecure context or a refusal): select the text so the admin can copy it by hand
      const pre = document.getElementById(`jwt-${e.id}`)
      const sel = getSelection()
      if (pre && sel) {
        const range = document.createRange()
        range.selectNodeContents(pre)
        sel.removeAllRanges()
        sel.addRange(range)
      }
      setCopied('The browser gave no clipboard: the token is selected, press Ctrl+C (⌘C) to copy it.')
    }
  }
  return (
    <section class="card enrollment" aria-labelledby={`enr-${e.id}`}>
      <h2 id={`enr-${e.id}`}>Enrollment ({props.method})</h2>
      <p>
        Expires {new Date(e.expiresAt).toLocaleString()}
        {e.username ? ` · username ${e.username}` : ''}. Give this token to the device or person, or scan the QR code.
      </p>
      <div class="enrollment-body">
        <div>
          <pre class="jwt" id={`jwt-${e.id}`} aria-label="enrollment token">
            {e.jwt}
          </pre>
          <div class="buttons">
            <button type="button" onClick={() => void copy()}>
              Copy
            </button>
            <a class="button" href={url} download={`${props.identity.name}.jwt`}>
              Download {props.identity.name}.jwt
            </a>
          </div>
          {copied && <p role="status">{copied}</p>}
        </div>
        <QrCode text={e.jwt} label={`QR code of the enrollment token of ${props.identity.name}`} />
      </div>
    </section>
  )
}

interface DeleteImpact {
  authenticators: string[]
  enrollments: string[]
  apiSessions: number
  policies: Array<{ kind: string; id: string; name: string }>
}

async function impactOf(i: Identity): Promise<DeleteImpact> {
  const byId = encodeURIComponent(`anyOf(identityRoles) = "@${i.id}"`)
  const [auths, enrollments, sessions, sp, erp] = await Promise.all([
    get(`/identities/${encodeURIComponent(i.id)}/authenticators?limit=500`).catch(() => ({ data: [] })),
    get(`/identities/${encodeURIComponent(i.id)}/enrollments?limit=500`).catch(() => ({ data: [] })),
    get(`/api-sessions?limit=1&filter=${encodeURIComponent(`identityId = "${i.id}"`)}`).catch(() => ({ meta: { pagination: { totalCount: 0 } } })),
    get(`/service-policies?limit=500&filter=${byId}`).catch(() => ({ data: [] })),
    get(`/edge-router-policies?limit=500&filter=${byId}`).catch(() => ({ data: [] })),
  ])
  return {
    authenticators: auths.data.map((a: any) => a.method + (a.username ? ` (${a.username})` : '')),
    enrollments: enrollments.data.map((e: any) => e.method),
    apiSessions: sessions.meta?.pagination?.totalCount ?? 0,
    policies: [...sp.data.map((p: any) => ({ kind: 'service policy', id: p.id, name: p.name })), ...erp.data.map((p: any) => ({ kind: 'edge router policy', id: p.id, name: p.name }))],
  }
}

function DeleteConfirm(props: { identity: Identity; onCancel: () => void }) {
  const [impact, setImpact] = useState<DeleteImpact | undefined>(undefined)
  const remove = useAction(async () => {
    await del(`/identities/${encodeURIComponent(props.identity.id)}`)
    navigate('/identities')
  })
  useEffect(() => {
    impactOf(props.identity).then(setImpact, remove.setError)
    document.getElementById('delete-title')?.focus()
  }, [props.identity.id])
  return (
    <section class="card danger" role="alertdialog" aria-labelledby="delete-title" aria-describedby="delete-what">
      <h2 id="delete-title" tabIndex={-1}>
        Delete {props.identity.name}?
      </h2>
      <div id="delete-what">
        {!impact ? (
          <p>Looking up what goes with it…</p>
        ) : (
          <ul>
            <li>
              Authenticators: {impact.authenticators.length === 0 ? 'none' : impact.authenticators.join(', ')}
            </li>
            <li>Enrollments: {impact.enrollments.length === 0 ? 'none' : impact.enrollments.join(', ')}</li>
            <li>API sessions: {impact.apiSessions} (they end now)</li>
            <li>
              Policies that name it with @{props.identity.id}:{' '}
              {impact.policies.length === 0
                ? 'none'
                : impact.policies.map((p, n) => (
                    <span>
                      {n > 0 ? ', ' : ''}
                      {p.kind} {p.name}
                    </span>
                  ))}
              {impact.policies.length > 0 ? ' (it stops being one of their identities)' : ''}
            </li>
          </ul>
        )}
      </div>
      <div class="buttons">
        <button type="button" class="danger" disabled={remove.busy || !impact} onClick={() => void remove.run()}>
          Delete for good
        </button>
        <button type="button" onClick={props.onCancel}>
          Keep it
        </button>
      </div>
      <ErrorLine error={remove.error} />
    </section>
  )
}

/** Three hours from the controller's now: the real controller's default enrollment lifetime. */
const inThreeHours = async () => new Date((await serverNow()) + 3 * 3600_000).toISOString()

export function IdentityDetailPage(props: { params: Record<string, string> }) {
  const id = props.params.id
  const [identity, setIdentity] = useState<Identity | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [version, setVersion] = useState(0)
  const [confirming, setConfirming] = useState(false)
  const [minutes, setMinutes] = useState('60')
  const [attributes, setAttributes] = useState<string[] | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const reload = () => setVersion((v) => v + 1)
  useEffect(() => {
    // another identity's page (the component is kept across routes): nothing of the last one's stays open
    setConfirming(false)
    setDone(undefined)
  }, [id])
  useEffect(() => {
    // the identity's enrollments list adds what its `enrollment` map leaves out (an updb enrollment's username)
    Promise.all([get(`/identities/${encodeURIComponent(id)}`), get(`/identities/${encodeURIComponent(id)}/enrollments?limit=50`).catch(() => ({ data: [] }))]).then(
      ([r, enrollments]) => {
        for (const e of Object.values(r.data.enrollment ?? {}) as Array<{ id: string; username?: string }>) {
          e.username ??= enrollments.data.find((x: { id: string }) => x.id === e.id)?.username ?? undefined
        }
        setIdentity(r.data)
        setAttributes(r.data.roleAttributes ?? [])
        setLoadError(undefined)
      },
      setLoadError,
    )
  }, [id, version])
  const act = useAction(async (what: string, f: () => Promise<unknown>) => {
    setDone(undefined)
    await f()
    setDone(what)
    reload()
  })
  if (!identity) {
    return (
      <Page title="Identity">
        <ErrorLine error={loadError} />
        {!loadError && <p>Loading…</p>}
      </Page>
    )
  }
  const path = `/identities/${encodeURIComponent(identity.id)}`
  const reEnroll = async () => {
    const auths = await get(`${path}/authenticators?limit=500`)
    if (auths.data.length === 0) throw new Error('This identity has no authenticator to re-enroll.')
    for (const a of auths.data) await post(`/authenticators/${encodeURIComponent(a.id)}/re-enroll`, { expiresAt: await inThreeHours() })
  }
  const refresh = async () => {
    for (const e of Object.values(identity.enrollment)) if (e) await post(`/enrollments/${encodeURIComponent(e.id)}/refresh`, { expiresAt: await inThreeHours() })
  }
  const methods = (['ott', 'ottca', 'updb'] as const).filter((m) => identity.enrollment?.[m])
  const changedAttributes = attributes !== undefined && JSON.stringify(attributes) !== JSON.stringify(identity.roleAttributes ?? [])
  return (
    <Page
      title={`Identity ${identity.name}`}
      actions={
        <a href="#/identities" class="button">
          All identities
        </a>
      }
    >
      <dl class="facts">
        <dt>Id</dt>
        <dd>{identity.id}</dd>
        <dt>Type</dt>
        <dd>{identity.typeId}</dd>
        <dt>Administrator</dt>
        <dd>{identity.isAdmin ? 'yes' : 'no'}</dd>
        <dt>Enrolled</dt>
        <dd>
          {isEnrolled(identity)
            ? `enrolled (${Object.entries(identity.authenticators)
                .map(([k, v]) => (k === 'updb' && v && 'username' in v ? `updb: ${v.username}` : k))
                .join(', ')})`
            : methods.length > 0
              ? `not yet: enrollment outstanding (${methods.join(', ')})`
              : 'not enrolled, no enrollment'}
        </dd>
        <dt>Disabled</dt>
        <dd>{identity.disabled ? `yes${identity.disabledUntil ? `, until ${new Date(identity.disabledUntil).toLocaleString()}` : ', until enabled'}` : 'no'}</dd>
        <dt>MFA</dt>
        <dd>{identity.isMfaEnabled ? 'TOTP enabled' : 'none'}</dd>
        <dt>Signed in now</dt>
        <dd>{identity.hasApiSession ? 'yes (has an API session)' : 'no'}</dd>
        <dt>Created</dt>
        <dd>{new Date(identity.createdAt).toLocaleString()}</dd>
      </dl>
      {methods.map((m) => (
        <EnrollmentCard identity={identity} method={m} />
      ))}
      <section class="card" aria-label="role attributes">
        <AttributePicker label="Role attributes" source="/identity-role-attributes" value={attributes ?? []} onChange={setAttributes} />
        <button type="button" disabled={!changedAttributes || act.busy} onClick={() => void act.run('Role attributes saved.', () => patch(path, { roleAttributes: attributes }))}>
          Save role attributes
        </button>
        {/* what the change would do, before it is saved */}
        <WhatIf change={changedAttributes ? roleAttributesChange(identity.id, attributes ?? []) : null} />
      </section>
      <section class="card" aria-labelledby="actions-title">
        <h2 id="actions-title">Actions</h2>
        <div class="buttons">
          {isEnrolled(identity) && (
            <button type="button" disabled={act.busy} onClick={() => void act.run('A new enrollment replaces its authenticators.', reEnroll)}>
              Re-enroll
            </button>
          )}
          {methods.length > 0 && (
            <button type="button" disabled={act.busy} onClick={() => void act.run('The enrollment was renewed for three hours.', refresh)}>
              Renew enrollment
            </button>
          )}
          {identity.isMfaEnabled && (
            <button type="button" disabled={act.busy} onClick={() => void act.run('MFA was reset.', () => del(`${path}/mfa`))}>
              Reset MFA
            </button>
          )}
          {identity.disabled ? (
            <button type="button" disabled={act.busy} onClick={() => void act.run('Enabled.', () => post(`${path}/enable`, {}))}>
              Enable
            </button>
          ) : (
            <span class="inline">
              <label class="field">
                <span>Disable for minutes (0: until enabled)</span>
                <input name="minutes" inputMode="numeric" value={minutes} onInput={(e) => setMinutes((e.target as HTMLInputElement).value)} />
              </label>
              <button type="button" disabled={act.busy} onClick={() => void act.run('Disabled.', () => post(`${path}/disable`, { durationMinutes: Number(minutes) || 0 }))}>
                Disable
              </button>
            </span>
          )}
          {!identity.isDefaultAdmin && (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              Delete
            </button>
          )}
        </div>
        {done && <p role="status">{done}</p>}
        <ErrorLine error={act.error} />
      </section>
      {confirming && <DeleteConfirm identity={identity} onCancel={() => setConfirming(false)} />}
    </Page>
  )
}
