/**
 * Role attributes as a list the admin edits: the chosen ones as removable chips, a box that suggests the attributes
 * already in use (a `<datalist>` from `GET <source>`, e.g. /identity-role-attributes) and takes any new one.
 */
import { useEffect, useState } from 'preact/hooks'
import { get } from '../api.ts'

export function AttributePicker(props: { label: string; source: string; value: string[]; onChange: (v: string[]) => void }) {
  const [known, setKnown] = useState<string[]>([])
  const [entry, setEntry] = useState('')
  useEffect(() => {
    get<{ data: string[] }>(`${props.source}?limit=500`).then(
      (r) => setKnown(r.data),
      () => setKnown([]),
    )
  }, [props.source])
  const listId = `attrs-${props.source.replace(/\W/g, '')}`
  const add = () => {
    const names = entry
      .split(',')
      .map((s) => s.trim().replace(/^#/, ''))
      .filter(Boolean)
    if (names.length) props.onChange([...props.value, ...names.filter((n) => !props.value.includes(n))])
    setEntry('')
  }
  return (
    <fieldset class="attributes">
      <legend>{props.label}</legend>
      <ul class="chips" aria-label={`chosen ${props.label.toLowerCase()}`}>
        {props.value.map((a) => (
          <li>
            <span>{a}</span>
            <button type="button" aria-label={`Remove ${a}`} onClick={() => props.onChange(props.value.filter((x) => x !== a))}>
              ×
            </button>
          </li>
        ))}
        {props.value.length === 0 && <li class="muted">none</li>}
      </ul>
      <label class="field">
        <span>Add attribute</span>
        <input
          list={listId}
          value={entry}
          onInput={(e) => setEntry((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault()
              add()
            }
          }}
        />
      </label>
      <datalist id={listId}>
        {known
          .filter((k) => !props.value.includes(k))
          .map((k) => (
            <option value={k} />
          ))}
      </datalist>
      <button type="button" onClick={add} disabled={!entry.trim()}>
        Add
      </button>
    </fieldset>
  )
}
