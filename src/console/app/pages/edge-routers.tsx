/**
 * Edge routers: list, create/edit, delete; a new router's enrollment JWT to copy or download, and re-enroll (a new
 * JWT; the router's current certificate stops working).
 */
import { useEffect, useState } from 'preact/hooks'
import { get, patch, post } from '../api.ts'
import { ErrorLine, splitList, useAction } from '../ui/common.tsx'
import { WhatIf } from '../ui/what-if.tsx'
import { Check, CrudPage, FormButtons, listOf, numberOr, otherError, TextInput, yesNo, type FormProps } from '../ui/crud.tsx'

interface EdgeRouter {
  id: string
  name: string
  roleAttributes?: string[]
  isVerified?: boolean
  isOnline?: boolean
  isTunnelerEnabled?: boolean
  disabled?: boolean
  cost?: number
  enrollmentJwt?: string | null
  enrollmentExpiresAt?: string | null
  fingerprint?: string
}

/** A JWT to copy or download as `<name>.jwt`. */
export function JwtPanel(props: { title: string; jwt: string; fileName: string; expiresAt?: string | null }) {
  const [note, setNote] = useState('')
  const [url, setUrl] = useState('')
  useEffect(() => {
    const u = URL.createObjectURL(new Blob([props.jwt], { type: 'application/jwt' }))
    setUrl(u)
    return () => URL.revokeObjectURL(u)
  }, [props.jwt])
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.expiresAt && <p>Valid until {new Date(props.expiresAt).toLocaleString()}.</p>}
      <pre class="jwt" tabIndex={0}>
        {props.jwt}
      </pre>
      <div class="buttons">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(props.jwt).then(
              () => setNote('Copied.'),
              () => setNote('The browser did not allow copying: select the text above instead.'),
            )
          }
        >
          Copy JWT
        </button>
        <a class="button" href={url} download={props.fileName}>
          Download {props.fileName}
        </a>
      </div>
      <p role="status">{note}</p>
    </section>
  )
}

function EdgeRouterForm(props: FormProps<EdgeRouter>) {
  const [entity, setEntity] = useState<EdgeRouter | undefined>(props.entity)
  const [created, setCreated] = useState(false)
  const [name, setName] = useState(entity?.name ?? '')
  const [attrs, setAttrs] = useState((entity?.roleAttributes ?? []).join(', '))
  const [cost, setCost] = useState(entity?.cost === undefined ? '' : String(entity.cost))
  const [tunneler, setTunneler] = useState(entity?.isTunnelerEnabled ?? false)
  const [disabled, setDisabled] = useState(entity?.disabled ?? false)
  const [confirmReEnroll, setConfirmReEnroll] = useState(false)
  const reload = async (id: string) => setEntity((await get<{ data: EdgeRouter }>(`/edge-routers/${encodeURIComponent(id)}`)).data)
  useEffect(() => {
    if (props.entity) void reload(props.entity.id).catch(() => undefined)
  }, [])
  const save = useAction(async () => {
    const body = { name, roleAttributes: splitList(attrs), cost: numberOr(cost), isTunnelerEnabled: tunneler, disabled }
    if (entity) {
      await patch(`/edge-routers/${encodeURIComponent(entity.id)}`, body)
      props.onDone()
    } else {
      const r = await post<{ data: { id: string } }>('/edge-routers', body)
      await reload(r.data.id)
      setCreated(true)
    }
  })
  const reEnroll = useAction(async () => {
    await post(`/edge-routers/${encodeURIComponent(entity!.id)}/re-enroll`)
    setConfirmReEnroll(false)
    await reload(entity!.id)
  })
  const enrollment = entity?.enrollmentJwt ? (
    <JwtPanel title="Enrollment JWT" jwt={entity.enrollmentJwt} fileName={`${entity.name}.jwt`} expiresAt={entity.enrollmentExpiresAt} />
  ) : null
  const roleAttributes = splitList(attrs)
  const change =
    entity || roleAttributes.length > 0
      ? entity
        ? { operation: 'patch' as const, entityType: 'edge-routers' as const, id: entity.id, body: { roleAttributes } }
        : { operation: 'create' as const, entityType: 'edge-routers' as const, body: { name: name || 'new edge router', roleAttributes } }
      : null
  if (created && entity)
    return (
      <div>
        <p role="status">
          Edge router <strong>{entity.name}</strong> was created. Enroll it with this JWT (ziti router enroll).
        </p>
        {enrollment}
        <button type="button" class="primary" onClick={props.onDone}>
          Done
        </button>
      </div>
    )
  return (
    <div>
      <form onSubmit={(e) => (e.preventDefault(), void save.run())} aria-label="edge router">
        <TextInput label="Name" value={name} set={setName} error={save.error} field="name" required />
        <TextInput label="Role attributes" value={attrs} set={setAttrs} error={save.error} field="roleAttributes" hint="comma-separated, e.g. public, eu" />
        <TextInput label="Cost" value={cost} set={setCost} error={save.error} field="cost" inputMode="numeric" hint="0 to 65535; lower is preferred" />
        <Check label="Tunneler enabled" checked={tunneler} set={setTunneler} />
        <Check label="Disabled" checked={disabled} set={setDisabled} />
        <WhatIf change={change} title="What if (role attributes)" />
        <FormButtons busy={save.busy} onCancel={props.onDone} save={entity ? 'Save' : 'Create and show the enrollment JWT'} />
        <ErrorLine error={otherError(save.error, ['name', 'roleAttributes', 'cost'])} />
      </form>
      {entity && (
        <section class="card" aria-label="enrollment">
          <h2>Enrollment</h2>
          {entity.enrollmentJwt ? enrollment : <p>{entity.isVerified ? `Enrolled; certificate fingerprint ${entity.fingerprint ?? ''}.` : 'Not enrolled and no enrollment pending.'}</p>}
          {!confirmReEnroll ? (
            <button type="button" onClick={() => setConfirmReEnroll(true)}>
              Re-enroll
            </button>
          ) : (
            <div role="alertdialog" aria-label="re-enroll">
              <p>Re-enroll {entity.name}? Its current certificate stops working until it enrolls again with the new JWT.</p>
              <div class="buttons">
                <button type="button" class="danger" disabled={reEnroll.busy} onClick={() => void reEnroll.run()}>
                  Re-enroll now
                </button>
                <button type="button" onClick={() => setConfirmReEnroll(false)}>
                  Cancel
                </button>
              </div>
            </div>
          )}
          <ErrorLine error={reEnroll.error} />
        </section>
      )}
    </div>
  )
}

export function EdgeRoutersPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<EdgeRouter>
      openId={props.params.id}
      title="Edge routers"
      path="/edge-routers"
      noun="edge router"
      form={EdgeRouterForm}
      deleteNote="Its certificate stops working and its terminators go with it; policies that name it by @id keep the role."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'isVerified', label: 'Enrolled', render: (r) => (r.isVerified ? 'yes' : r.enrollmentJwt ? 'pending' : 'no') },
        { key: 'isOnline', label: 'Online', render: (r) => yesNo(r.isOnline) },
        { key: 'roleAttributes', label: 'Role attributes', render: (r) => listOf(r.roleAttributes) },
      ]}
    />
  )
}
