/**
 * The three policy kinds: service policies (Dial/Bind), edge router policies and service edge router policies. Each
 * is a list, a form with role pickers (the role attributes in use, #all, and entities by @name), and delete.
 */
import { useState } from 'preact/hooks'
import { patch, post } from '../api.ts'
import { ErrorLine, Field, useAction } from '../ui/common.tsx'
import { CrudPage, FormButtons, listOf, otherError, serverFieldError, type FormProps } from '../ui/crud.tsx'
import { RolePicker, type RoleDisplay, type RoleKind } from '../ui/roles.tsx'
import { WhatIf, type PreviewEntityType } from '../ui/what-if.tsx'

type RoleField = 'identityRoles' | 'serviceRoles' | 'edgeRouterRoles' | 'postureCheckRoles'

interface Policy {
  id: string
  name: string
  type?: 'Dial' | 'Bind'
  semantic?: 'AllOf' | 'AnyOf'
  identityRoles?: string[]
  serviceRoles?: string[]
  edgeRouterRoles?: string[]
  postureCheckRoles?: string[]
  [k: string]: unknown
}

interface PolicyKind {
  title: string
  path: string
  noun: string
  roles: Array<{ field: RoleField; label: string; kind: RoleKind }>
  dialBind?: boolean
}

const ROLE = {
  identityRoles: { field: 'identityRoles', label: 'Identity roles', kind: 'identity' },
  serviceRoles: { field: 'serviceRoles', label: 'Service roles', kind: 'service' },
  edgeRouterRoles: { field: 'edgeRouterRoles', label: 'Edge router roles', kind: 'router' },
  postureCheckRoles: { field: 'postureCheckRoles', label: 'Posture check roles', kind: 'posture' },
} as const

export const POLICY_KINDS: Record<'service' | 'router' | 'serviceRouter', PolicyKind> = {
  service: {
    title: 'Service policies',
    path: '/service-policies',
    noun: 'service policy',
    dialBind: true,
    roles: [ROLE.identityRoles, ROLE.serviceRoles, ROLE.postureCheckRoles],
  },
  router: { title: 'Edge router policies', path: '/edge-router-policies', noun: 'edge router policy', roles: [ROLE.identityRoles, ROLE.edgeRouterRoles] },
  serviceRouter: {
    title: 'Service edge router policies',
    path: '/service-edge-router-policies',
    noun: 'service edge router policy',
    roles: [ROLE.serviceRoles, ROLE.edgeRouterRoles],
  },
}

function policyForm(kind: PolicyKind) {
  return function PolicyForm(props: FormProps<Policy>) {
    const e = props.entity
    const [name, setName] = useState(e?.name ?? '')
    const [type, setType] = useState(e?.type ?? 'Dial')
    const [semantic, setSemantic] = useState(e?.semantic ?? 'AnyOf')
    const initial = Object.fromEntries(kind.roles.map((r) => [r.field, (e?.[r.field] as string[]) ?? []]))
    const [roles, setRoles] = useState<Record<string, string[]>>(initial)
    // the roles added as chips (not what is still being typed): what the what-if panel previews
    const [added, setAdded] = useState<Record<string, string[]>>(initial)
    const body = () => ({ name, semantic, ...(kind.dialBind ? { type } : {}), ...roles })
    const previewed = { name: name || `new ${kind.noun}`, semantic, ...(kind.dialBind ? { type } : {}), ...added }
    const change =
      e || Object.values(added).some((r) => r.length > 0)
        ? { operation: e ? ('patch' as const) : ('create' as const), entityType: kind.path.slice(1) as PreviewEntityType, id: e?.id, body: previewed }
        : null
    const save = useAction(async () => {
      if (e) await patch(`${kind.path}/${encodeURIComponent(e.id)}`, body())
      else await post(kind.path, body())
      props.onDone()
    })
    const fields = ['name', 'semantic', 'type', ...kind.roles.map((r) => r.field)]
    return (
      <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label={kind.noun}>
        <Field label="Name" error={serverFieldError(save.error, 'name')}>
          <input required value={name} onInput={(ev) => setName((ev.target as HTMLInputElement).value)} />
        </Field>
        {kind.dialBind && (
          <Field label="Type" error={serverFieldError(save.error, 'type')} hint="Dial: the identities may use the services; Bind: they may host them.">
            <select value={type} onChange={(ev) => setType((ev.target as HTMLSelectElement).value as 'Dial' | 'Bind')}>
              <option value="Dial">Dial</option>
              <option value="Bind">Bind</option>
            </select>
          </Field>
        )}
        <Field label="Semantic" error={serverFieldError(save.error, 'semantic')} hint="How #attribute roles combine: AnyOf matches any of them, AllOf all of them.">
          <select value={semantic} onChange={(ev) => setSemantic((ev.target as HTMLSelectElement).value as 'AllOf' | 'AnyOf')}>
            <option value="AnyOf">AnyOf</option>
            <option value="AllOf">AllOf</option>
          </select>
        </Field>
        {kind.roles.map((r) => (
          <div class="role-field">
            <RolePicker
              label={r.label}
              kind={r.kind}
              value={roles[r.field]}
              display={(e?.[`${r.field}Display`] as RoleDisplay[] | undefined) ?? []}
              onChange={(v, chips) => (setRoles((cur) => ({ ...cur, [r.field]: v })), setAdded((cur) => ({ ...cur, [r.field]: chips })))}
            />
            {serverFieldError(save.error, r.field) && (
              <p class="field-error" role="alert">
                {serverFieldError(save.error, r.field)}
              </p>
            )}
          </div>
        ))}
        <WhatIf change={change} />
        <FormButtons busy={save.busy} onCancel={props.onDone} />
        <ErrorLine error={otherError(save.error, fields)} />
      </form>
    )
  }
}

function policyPage(kind: PolicyKind) {
  const form = policyForm(kind)
  return function PolicyPage(props: { params: Record<string, string> }) {
    return (
      <CrudPage<Policy>
        openId={props.params.id}
        title={kind.title}
        path={kind.path}
        noun={kind.noun}
        form={form}
        deleteNote="Only the policy goes: the identities, services and routers it names stay, and lose what it granted."
        columns={[
          { key: 'name', label: 'Name', sortable: true },
          ...(kind.dialBind ? [{ key: 'type', label: 'Type', sortable: true }] : []),
          { key: 'semantic', label: 'Semantic' },
          ...kind.roles.map((r) => ({ key: r.field, label: r.label, render: (p: Policy) => listOf(displayed(p, r.field)) })),
        ]}
      />
    )
  }
}

/** `@name` for a display name, whether or not the API already put the `@` in front. */
export const atName = (name: string) => (name.startsWith('@') ? name : `@${name}`)

/** A policy's roles with `@id` shown as `@name` where the API gave the names (`…RolesDisplay`). */
function displayed(p: Policy, field: RoleField): string[] {
  const shown = p[`${field}Display`] as RoleDisplay[] | undefined
  const names = new Map((shown ?? []).map((d) => [d.role, d.name]))
  return (p[field] ?? []).map((r) => (r.startsWith('@') && names.get(r) ? atName(names.get(r)!) : r))
}

export const ServicePoliciesPage = policyPage(POLICY_KINDS.service)
export const EdgeRouterPoliciesPage = policyPage(POLICY_KINDS.router)
export const ServiceEdgeRouterPoliciesPage = policyPage(POLICY_KINDS.serviceRouter)
