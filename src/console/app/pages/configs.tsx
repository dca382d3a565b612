/**
 * Configs: list, create/edit, delete. A config's data is edited against its config type's JSON schema
 * (GET /config-types/{id} `schema`): the schema's errors are shown at the field before anything is sent, and the
 * API's own refusal is shown at the field it names.
 */
import { useEffect, useState } from 'preact/hooks'
import { get, post, put } from '../api.ts'
import { ErrorLine, Field, useAction } from '../ui/common.tsx'
import { CrudPage, FormButtons, otherError, serverFieldError, type FormProps } from '../ui/crud.tsx'
import { SchemaForm, serverDataErrors, validateData, type SchemaErrors } from '../ui/schema-form.tsx'

interface Config {
  id: string
  name: string
  configTypeId: string
  configType?: { id: string; name: string }
  data: Record<string, unknown>
}

interface ConfigType {
  id: string
  name: string
  schema: Record<string, unknown>
}

function ConfigForm(props: FormProps<Config>) {
  const e = props.entity
  const [name, setName] = useState(e?.name ?? '')
  const [typeId, setTypeId] = useState(e?.configTypeId ?? '')
  const [types, setTypes] = useState<ConfigType[]>([])
  const [type, setType] = useState<ConfigType | undefined>(undefined)
  const [data, setData] = useState<Record<string, unknown>>(e?.data ?? {})
  const [checked, setChecked] = useState(false)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  useEffect(() => {
    get<{ data: ConfigType[] }>('/config-types?limit=500&sort=name').then((r) => setTypes(r.data), setLoadError)
  }, [])
  useEffect(() => {
    setType(undefined)
    if (typeId) get<{ data: ConfigType }>(`/config-types/${encodeURIComponent(typeId)}`).then((r) => setType(r.data), setLoadError)
  }, [typeId])
  const save = useAction(async () => {
    setChecked(true)
    if (!type) throw new Error('Choose a config type first.')
    if (Object.keys(validateData(type.schema, data)).length > 0) return
    if (e) await put(`/configs/${encodeURIComponent(e.id)}`, { name, data })
    else await post('/configs', { name, configTypeId: typeId, data })
    props.onDone()
  })
  const errors: SchemaErrors = { ...(type && checked ? validateData(type.schema, data) : {}) }
  for (const [k, m] of Object.entries(serverDataErrors(save.error))) errors[k] ??= m
  return (
    <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label="config" noValidate>
      <Field label="Name" error={serverFieldError(save.error, 'name')}>
        <input required value={name} onInput={(ev) => setName((ev.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Config type" error={serverFieldError(save.error, 'configTypeId')} hint={e ? 'A config keeps its type.' : undefined}>
        <select required disabled={!!e} value={typeId} onChange={(ev) => (setTypeId((ev.target as HTMLSelectElement).value), setChecked(false))}>
          <option value="">(choose)</option>
          {types.map((t) => (
            <option value={t.id}>{t.name}</option>
          ))}
        </select>
      </Field>
      <ErrorLine error={loadError} />
      {type && <SchemaForm key={type.id} schema={type.schema} value={data} onChange={setData} errors={errors} />}
      <FormButtons busy={save.busy} onCancel={props.onDone} />
      <ErrorLine error={otherError(save.error, ['name', 'configTypeId', ...(Object.keys(serverDataErrors(save.error)).length ? [String((save.error as any).error.cause.field)] : [])])} />
    </form>
  )
}

export function ConfigsPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<Config>
      openId={props.params.id}
      title="Configs"
      path="/configs"
      noun="config"
      form={ConfigForm}
      deleteNote="A config still attached to a service cannot be deleted: the controller refuses, and says which."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'configType', label: 'Type', render: (c) => c.configType?.name ?? c.configTypeId },
        { key: 'data', label: 'Data', render: (c) => <code>{JSON.stringify(c.data).slice(0, 120)}</code> },
      ]}
    />
  )
}
