/**
 * A config's data edited against its config type's JSON schema. The top-level properties become fields (text,
 * number, yes/no, a choice for an enum, comma-separated text for a list of strings; JSON for anything else), and the
 * schema's errors are shown at the field they concern. Validation runs in the browser with @cfworker/json-schema: it
 * interprets the schema rather than compiling it to code, so it runs under the console's CSP (no eval), has no
 * dependencies and is small. The API's own refusal (`cause.field` = `data.<property>`) is shown at the field too.
 */
import { useState } from 'preact/hooks'
import { ApiFailure } from '../api.ts'
import { Field, splitList } from './common.tsx'
import type { SchemaErrors } from './schema-errors.ts'

export { validateData, type SchemaErrors } from './schema-errors.ts'

type Json = Record<string, unknown>

/** The API's refusal of config data as errors by property (`data.port` -> port; `data` -> the whole). */
export function serverDataErrors(error: unknown): SchemaErrors {
  if (!(error instanceof ApiFailure)) return {}
  const field = String(error.error.cause?.field ?? '')
  if (field !== 'data' && !field.startsWith('data.')) return {}
  const key = field === 'data' ? '' : field.slice(5).split('.')[0]
  return { [key]: `refused by the controller: ${error.error.cause?.reason ?? error.error.message}` }
}

function resolve(root: Json, s: unknown): Json {
  let cur = (s ?? {}) as Json
  for (let i = 0; i < 8 && typeof cur.$ref === 'string'; i++) {
    const ref = cur.$ref as string
    if (!ref.startsWith('#/')) break
    let at: unknown = root
    for (const seg of ref.slice(2).split('/')) at = (at as Json | undefined)?.[seg.replace(/~1/g, '/').replace(/~0/g, '~')]
    cur = (at ?? {}) as Json
  }
  return cur
}

type Kind = 'enum' | 'string' | 'number' | 'boolean' | 'strings' | 'json'

function kindOf(root: Json, s: Json): Kind {
  const t = Array.isArray(s.type) ? s.type.filter((x) => x !== 'null')[0] : s.type
  if (Array.isArray(s.enum) && s.enum.every((x) => typeof x === 'string')) return 'enum'
  if (t === 'string') return 'string'
  if (t === 'integer' || t === 'number') return 'number'
  if (t === 'boolean') return 'boolean'
  if (t === 'array') {
    const items = resolve(root, s.items)
    if (items.type === 'string' || (Array.isArray(items.enum) && items.enum.every((x) => typeof x === 'string'))) return 'strings'
  }
  return 'json'
}

export function SchemaForm(props: { schema: Json; value: Json; onChange: (v: Json) => void; errors: SchemaErrors }) {
  const props_ = (props.schema.properties ?? {}) as Record<string, unknown>
  const names = Object.keys(props_)
  const [asJson, setAsJson] = useState(names.length === 0)
  const [raw, setRaw] = useState<Record<string, string>>({})
  const [parseErrors, setParseErrors] = useState<Record<string, string>>({})
  const required = new Set(Array.isArray(props.schema.required) ? (props.schema.required as string[]) : [])
  const set = (k: string, v: unknown) => {
    const next = { ...props.value }
    if (v === undefined) delete next[k]
    else next[k] = v
    props.onChange(next)
  }
  const jsonInput = (k: string, label: string, current: unknown, apply: (v: unknown) => void, hint?: string) => (
    <Field label={label} error={parseErrors[k] ?? props.errors[k]} hint={hint}>
      <textarea
        spellcheck={false}
        aria-invalid={parseErrors[k] || props.errors[k] ? 'true' : undefined}
        value={raw[k] ?? (current === undefined ? '' : JSON.stringify(current, null, 2))}
        onInput={(e) => {
          const text = (e.target as HTMLTextAreaElement).value
          setRaw((r) => ({ ...r, [k]: text }))
          try {
            apply(text.trim() === '' ? undefined : JSON.parse(text))
            setParseErrors((p) => ({ ...p, [k]: undefined as unknown as string }))
          } catch (err) {
            setParseErrors((p) => ({ ...p, [k]: `not valid JSON: ${(err as Error).message}` }))
          }
        }}
      />
    </Field>
  )
  const others = Object.entries(props.errors).filter(([k]) => k === '' || !names.includes(k))
  return (
    <fieldset class="schema-form">
      <legend>Data</legend>
      {names.length > 0 && (
        <label class="check">
          <input type="checkbox" checked={asJson} onChange={(e) => (setAsJson((e.target as HTMLInputElement).checked), setRaw({}))} /> Edit the data as JSON
        </label>
      )}
      {others.length > 0 && (
        <ul class="field-error" role="alert" aria-label="data errors">
          {others.map(([k, m]) => (
            <li>{k ? `${k}: ${m}` : m}</li>
          ))}
        </ul>
      )}
      {asJson
        ? jsonInput('', 'Data (JSON)', props.value, (v) => props.onChange((v ?? {}) as Json), 'The whole of the config data, checked against the schema.')
        : names.map((k) => {
            const s = resolve(props.schema, props_[k])
            const hint = [typeof s.description === 'string' ? s.description : '', required.has(k) ? 'required' : ''].filter(Boolean).join(' · ') || undefined
            const v = props.value[k]
            const err = props.errors[k]
            const invalid = err ? 'true' : undefined
            switch (kindOf(props.schema, s)) {
              case 'enum':
                return (
                  <Field label={k} error={err} hint={hint}>
                    <select aria-invalid={invalid} value={v === undefined ? '' : String(v)} onChange={(e) => set(k, (e.target as HTMLSelectElement).value || undefined)}>
                      <option value="">(none)</option>
                      {(s.enum as string[]).map((o) => (
                        <option value={o}>{o}</option>
                      ))}
                    </select>
                  </Field>
                )
              case 'string':
                return (
                  <Field label={k} error={err} hint={hint}>
                    <input aria-invalid={invalid} value={typeof v === 'string' ? v : v === undefined ? '' : String(v)} onInput={(e) => set(k, (e.target as HTMLInputElement).value === '' ? undefined : (e.target as HTMLInputElement).value)} />
                  </Field>
                )
              case 'number':
                return (
                  <Field label={k} error={err} hint={hint}>
                    <input
                      aria-invalid={invalid}
                      inputMode="decimal"
                      value={raw[k] ?? (v === undefined ? '' : String(v))}
                      onInput={(e) => {
                        const text = (e.target as HTMLInputElement).value
                        setRaw((r) => ({ ...r, [k]: text }))
                        const t = text.trim()
                        set(k, t === '' ? undefined : Number.isNaN(Number(t)) ? t : Number(t))
                      }}
                    />
                  </Field>
                )
              case 'boolean':
                return (
                  <Field label={k} error={err} hint={hint}>
                    <select aria-invalid={invalid} value={v === undefined ? '' : String(v)} onChange={(e) => {
                      const t = (e.target as HTMLSelectElement).value
                      set(k, t === '' ? undefined : t === 'true')
                    }}>
                      <option value="">(not set)</option>
                      <option value="true">yes</option>
                      <option value="false">no</option>
                    </select>
                  </Field>
                )
              case 'strings':
                return (
                  <Field label={k} error={err} hint={[hint, 'comma-separated'].filter(Boolean).join(' · ')}>
                    <input aria-invalid={invalid} value={raw[k] ?? (Array.isArray(v) ? v.join(', ') : v === undefined ? '' : String(v))} onInput={(e) => {
                      const t = (e.target as HTMLInputElement).value
                      setRaw((r) => ({ ...r, [k]: t }))
                      set(k, t.trim() === '' ? undefined : splitList(t))
                    }} />
                  </Field>
                )
              default:
                return jsonInput(k, k, v, (x) => set(k, x), [hint, 'JSON'].filter(Boolean).join(' · '))
            }
          })}
    </fieldset>
  )
}
