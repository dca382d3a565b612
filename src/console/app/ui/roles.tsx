/**
 * A role picker for policies: a list of roles (`#attribute`, `#all`, `@id`) shown as removable chips, an input that
 * suggests the role attributes in use (GET /<kind>-role-attributes) and entities by name (`@name` -> `@id`), and
 * buttons for the suggestions. Whatever is typed but not yet added counts too (split on commas), so a form's submit
 * never loses it.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { get } from '../api.ts'
import { splitList } from './common.tsx'

export type RoleKind = 'identity' | 'service' | 'router' | 'posture'

const SOURCES: Record<RoleKind, { attributes: string; entities: string }> = {
  identity: { attributes: '/identity-role-attributes', entities: '/identities' },
  service: { attributes: '/service-role-attributes', entities: '/services' },
  router: { attributes: '/edge-router-role-attributes', entities: '/edge-routers' },
  posture: { attributes: '/posture-check-role-attributes', entities: '/posture-checks' },
}

export interface RoleDisplay {
  role: string
  name: string
}

export function RolePicker(props: {
  label: string
  kind: RoleKind
  value: string[]
  /** Names of `@id` roles (a policy's `identityRolesDisplay` etc.). */
  display?: RoleDisplay[]
  /** Every role, what is typed but not yet added included (for saving), and the added ones alone (for a preview). */
  onChange: (roles: string[], added: string[]) => void
}) {
  const [chips, setChips] = useState<string[]>(props.value)
  const [text, setText] = useState('')
  const [attributes, setAttributes] = useState<string[]>([])
  const [entities, setEntities] = useState<Array<{ id: string; name: string }>>([])
  const [names, setNames] = useState<Record<string, string>>(() =>
    Object.fromEntries((props.display ?? []).filter((d) => d.role.startsWith('@')).map((d) => [d.role, d.name.startsWith('@') ? d.name : `@${d.name}`])),
  )
  const src = SOURCES[props.kind]
  useEffect(() => {
    get<{ data: string[] }>(`${src.attributes}?limit=500`).then((r) => setAttributes(r.data), () => setAttributes([]))
  }, [props.kind])
  const typed = text.trim()
  const asked = useRef(0)
  useEffect(() => {
    // only the answer to the latest text counts: an older one arriving late never replaces it
    const n = ++asked.current
    // entities by name for `@…` (or any text that is not an attribute)
    const q = typed.replace(/^[@#]/, '')
    if (!typed.startsWith('@') || q === '') return setEntities([])
    const filter = `name contains "${q.replace(/["\\]/g, '')}"`
    get<{ data: Array<{ id: string; name: string }> }>(`${src.entities}?limit=8&filter=${encodeURIComponent(filter)}`).then(
      (r) => n === asked.current && setEntities(r.data),
      () => n === asked.current && setEntities([]),
    )
  }, [typed, props.kind])
  // `@name` typed in full becomes `@id` when an entity of that name was found
  const resolve = (r: string) => {
    const e = r.startsWith('@') ? entities.find((x) => x.name === r.slice(1)) : undefined
    if (!e) return r
    setNames((n) => ({ ...n, [`@${e.id}`]: r }))
    return `@${e.id}`
  }
  const update = (next: string[], pending: string) => {
    setChips(next)
    setText(pending)
    props.onChange([...new Set([...next, ...splitList(pending).map(resolve)])], next)
  }
  const add = (role: string, label?: string) => {
    if (label) setNames((n) => ({ ...n, [role]: label }))
    update([...new Set([...chips, role])], '')
  }
  const needle = typed.replace(/^#/, '').toLowerCase()
  const attrSuggestions = ['all', ...attributes]
    .filter((a) => !chips.includes(`#${a}`) && (needle === '' || a.toLowerCase().includes(needle)))
    .slice(0, 12)
  const id = `roles-${props.label.replace(/\W+/g, '-').toLowerCase()}`
  return (
    <div class="roles">
      <label class="field">
        <span>{props.label}</span>
        <input
          id={id}
          value={text}
          placeholder="#attribute, #all or @name"
          aria-describedby={`${id}-hint`}
          onInput={(e) => update(chips, (e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && typed) {
              e.preventDefault()
              update([...new Set([...chips, ...splitList(text).map(resolve)])], '')
            }
          }}
        />
        <small id={`${id}-hint`}>Enter adds what is typed; a role is #attribute, #all, or @ and an entity's name.</small>
      </label>
      <ul class="chips" aria-label={`${props.label} chosen`}>
        {chips.map((r) => (
          <li>
            <span>{names[r] ?? r}</span>
            <button type="button" aria-label={`Remove ${names[r] ?? r} from ${props.label}`} onClick={() => update(chips.filter((c) => c !== r), text)}>
              ×
            </button>
          </li>
        ))}
      </ul>
      <div class="suggestions" aria-label={`${props.label} suggestions`}>
        <small>Add:</small>
        {attrSuggestions.map((a) => (
          <button type="button" class="chip" onClick={() => add(`#${a}`)}>
            #{a}
          </button>
        ))}
        {entities.map((e) => (
          <button type="button" class="chip" onClick={() => add(`@${e.id}`, `@${e.name}`)}>
            @{e.name}
          </button>
        ))}
      </div>
    </div>
  )
}
