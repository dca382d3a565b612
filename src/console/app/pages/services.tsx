/** Services with their configs: list, create/edit (role attributes, encryption, terminator strategy, configs attached), delete. */
import { useEffect, useState } from 'preact/hooks'
import { get, patch, post } from '../api.ts'
import { ErrorLine, Field, splitList, useAction } from '../ui/common.tsx'
import { WhatIf } from '../ui/what-if.tsx'
import { CrudPage, FormButtons, listOf, otherError, serverFieldError, yesNo, type FormProps } from '../ui/crud.tsx'

export interface Service {
  id: string
  name: string
  roleAttributes?: string[]
  configs?: string[]
  encryptionRequired?: boolean
  terminatorStrategy?: string
}

interface ConfigRow {
  id: string
  name: string
  configType?: { name?: string }
  configTypeId?: string
}

const FIELDS = ['name', 'roleAttributes', 'configs', 'terminatorStrategy']

function ServiceForm(props: FormProps<Service>) {
  const e = props.entity
  const [name, setName] = useState(e?.name ?? '')
  const [attrs, setAttrs] = useState((e?.roleAttributes ?? []).join(', '))
  const [encrypted, setEncrypted] = useState(e?.encryptionRequired ?? true)
  const [strategy, setStrategy] = useState(e?.terminatorStrategy ?? 'smartrouting')
  const [configs, setConfigs] = useState<string[]>(e?.configs ?? [])
  const [all, setAll] = useState<ConfigRow[] | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  useEffect(() => {
    get<{ data: ConfigRow[] }>('/configs?limit=500&sort=name').then((r) => setAll(r.data), setLoadError)
  }, [])
  const save = useAction(async () => {
    const body = { name, roleAttributes: splitList(attrs), encryptionRequired: encrypted, terminatorStrategy: strategy, configs }
    if (e) await patch(`/services/${encodeURIComponent(e.id)}`, body)
    else await post('/services', body)
    props.onDone()
  })
  const roleAttributes = splitList(attrs)
  const change =
    e || roleAttributes.length > 0
      ? e
        ? { operation: 'patch' as const, entityType: 'services' as const, id: e.id, body: { roleAttributes } }
        : { operation: 'create' as const, entityType: 'services' as const, body: { name: name || 'new service', encryptionRequired: encrypted, roleAttributes } }
      : null
  return (
    <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label="service">
      <Field label="Name" error={serverFieldError(save.error, 'name')}>
        <input required value={name} onInput={(ev) => setName((ev.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Role attributes" hint="comma-separated, e.g. sales, web" error={serverFieldError(save.error, 'roleAttributes')}>
        <input value={attrs} onInput={(ev) => setAttrs((ev.target as HTMLInputElement).value)} />
      </Field>
      <label class="check">
        <input type="checkbox" checked={encrypted} onChange={(ev) => setEncrypted((ev.target as HTMLInputElement).checked)} /> Encryption required
      </label>
      <Field label="Terminator strategy" error={serverFieldError(save.error, 'terminatorStrategy')}>
        <select value={strategy} onChange={(ev) => setStrategy((ev.target as HTMLSelectElement).value)}>
          {['smartrouting', 'weighted', 'random', 'ha'].map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
      </Field>
      <fieldset class="configs">
        <legend>Configs</legend>
        <ErrorLine error={loadError} />
        {serverFieldError(save.error, 'configs') && <p class="field-error">{serverFieldError(save.error, 'configs')}</p>}
        {all?.length === 0 && <p>No configs yet: create one on the Configs page.</p>}
        {all?.map((c) => (
          <label class="check">
            <input
              type="checkbox"
              checked={configs.includes(c.id)}
              onChange={(ev) => setConfigs((ev.target as HTMLInputElement).checked ? [...configs, c.id] : configs.filter((x) => x !== c.id))}
            />{' '}
            {c.name} <small>({c.configType?.name ?? c.configTypeId})</small>
          </label>
        ))}
      </fieldset>
      <WhatIf change={change} title="What if (role attributes)" />
      <FormButtons busy={save.busy} onCancel={props.onDone} />
      <ErrorLine error={otherError(save.error, FIELDS)} />
    </form>
  )
}

export function ServicesPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<Service>
      openId={props.params.id}
      title="Services"
      path="/services"
      noun="service"
      form={ServiceForm}
      deleteNote="Policies that name it by @id keep the role; its terminators go with it; its configs stay."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'roleAttributes', label: 'Role attributes', render: (s) => listOf(s.roleAttributes) },
        { key: 'configs', label: 'Configs', render: (s) => String(s.configs?.length ?? 0) },
        { key: 'encryptionRequired', label: 'Encrypted', render: (s) => yesNo(s.encryptionRequired) },
      ]}
    />
  )
}
