/**
 * A page for one Management API collection: its list (EntityList), a create/edit form, and delete behind a
 * confirmation that names the entity and what goes with it. The form owns what it shows after a save (an edge router
 * shows its enrollment JWT, a CA its verification steps) and calls `onDone` to return to the list.
 */
import type { ComponentChildren, FunctionComponent } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, del, get } from '../api.ts'
import { navigate } from '../router.ts'
import { ErrorLine, Field, Page, useAction } from './common.tsx'
import { EntityList, type Column } from './list.tsx'

export interface FormProps<T> {
  /** The entity to edit; absent: a new one. */
  entity?: T
  onDone: () => void
}

export function CrudPage<T extends { id: string; name?: string }>(props: {
  title: string
  /** The collection's path, e.g. `/services`. */
  path: string
  /** "service", for "New service" and the delete confirmation. */
  noun: string
  columns: Column<T>[]
  form: FunctionComponent<FormProps<T>>
  /** What is removed with the entity, or what stays (named in the delete confirmation). */
  deleteNote?: string
  intro?: ComponentChildren
  /** The id of the route `<path>/:id`: that entity's form is open (a link to it, the browser's back button). */
  openId?: string
}) {
  const [editing, setEditing] = useState<T | 'new' | undefined>(undefined)
  const [openError, setOpenError] = useState<unknown>(undefined)
  useEffect(() => {
    setOpenError(undefined)
    if (props.openId)
      get<{ data: T }>(`${props.path}/${encodeURIComponent(props.openId)}`).then(
        (r) => setEditing(r.data),
        (e) => (setEditing(undefined), setOpenError(e)),
      )
    else setEditing((cur) => (cur === 'new' ? cur : undefined))
  }, [props.openId])
  const open = (row: T) => navigate(`${props.path}/${encodeURIComponent(row.id)}`)
  const [deleting, setDeleting] = useState<T | undefined>(undefined)
  const [version, setVersion] = useState(0)
  useEffect(() => {
    // opening a form or returning to the list moves the focus to the title, as a new page does
    document.getElementById('page-title')?.focus()
  }, [editing === undefined, editing === 'new'])
  useEffect(() => {
    // the confirmation takes the focus, so a keyboard user answers it next
    if (deleting) document.getElementById('confirm-delete')?.focus()
  }, [deleting])
  const remove = useAction(async (row: T) => {
    await del(`${props.path}/${encodeURIComponent(row.id)}`)
    setDeleting(undefined)
    setVersion((v) => v + 1)
  })
  const Form = props.form
  if (editing !== undefined) {
    const done = () => {
      setEditing(undefined)
      setVersion((v) => v + 1)
      if (props.openId) navigate(props.path)
    }
    return (
      <Page title={editing === 'new' ? `New ${props.noun}` : `Edit ${props.noun} ${editing.name ?? editing.id}`}>
        <Form key={editing === 'new' ? 'new' : editing.id} entity={editing === 'new' ? undefined : editing} onDone={done} />
      </Page>
    )
  }
  const columns: Column<T>[] = [
    ...props.columns,
    {
      key: '_actions',
      label: 'Actions',
      render: (row) => (
        <span class="row-actions">
          <button type="button" aria-label={`Edit ${row.name ?? row.id}`} onClick={() => open(row)}>
            Edit
          </button>
          <button type="button" class="danger" aria-label={`Delete ${row.name ?? row.id}`} onClick={() => (remove.setError(undefined), setDeleting(row))}>
            Delete
          </button>
        </span>
      ),
    },
  ]
  return (
    <Page
      title={props.title}
      actions={
        <button type="button" class="primary" onClick={() => setEditing('new')}>
          New {props.noun}
        </button>
      }
    >
      {props.intro}
      <ErrorLine error={openError} />
      {deleting && (
        <div class="card confirm" role="alertdialog" aria-labelledby="confirm-title">
          <p id="confirm-title">
            Delete {props.noun} <strong>{deleting.name ?? deleting.id}</strong>?
          </p>
          {props.deleteNote && <p>{props.deleteNote}</p>}
          <div class="buttons">
            <button id="confirm-delete" type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run(deleting)}>
              Delete {deleting.name ?? deleting.id}
            </button>
            <button type="button" onClick={() => setDeleting(undefined)}>
              Cancel
            </button>
          </div>
          <ErrorLine error={remove.error} />
        </div>
      )}
      <EntityList<T> path={props.path} label={props.title} columns={columns} version={version} onOpen={open} />
    </Page>
  )
}

/** The API's refusal when it names `field` (its `cause.field`), to show at that field. */
export function serverFieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiFailure) || error.error.cause?.field !== field) return undefined
  return error.error.cause.reason ?? error.error.message
}

/** The API's refusal unless it names one of `fields` (those are shown at the field). */
export function otherError(error: unknown, fields: string[]): unknown {
  if (error instanceof ApiFailure && fields.includes(String(error.error.cause?.field))) return undefined
  return error
}

/** Form buttons: save (submit) and cancel. */
export function FormButtons(props: { busy: boolean; onCancel: () => void; save?: string }) {
  return (
    <div class="buttons">
      <button type="submit" disabled={props.busy}>
        {props.save ?? 'Save'}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  )
}

export const yesNo = (b: unknown) => (b ? 'yes' : 'no')
export const listOf = (a: unknown) => (Array.isArray(a) ? a.join(', ') : '')

/** A text input in a Field, with the API's refusal of `field` shown at it. */
export function TextInput(props: {
  label: string
  value: string
  set: (v: string) => void
  error?: unknown
  field?: string
  hint?: string
  required?: boolean
  multiline?: boolean
  inputMode?: 'numeric' | 'text'
}) {
  const err = props.field ? serverFieldError(props.error, props.field) : undefined
  const onInput = (e: Event) => props.set((e.target as HTMLInputElement).value)
  return (
    <Field label={props.label} hint={props.hint} error={err}>
      {props.multiline ? (
        <textarea required={props.required} spellcheck={false} aria-invalid={err ? 'true' : undefined} value={props.value} onInput={onInput} />
      ) : (
        <input required={props.required} inputMode={props.inputMode} aria-invalid={err ? 'true' : undefined} value={props.value} onInput={onInput} />
      )}
    </Field>
  )
}

/** A checkbox with its label. */
export function Check(props: { label: string; checked: boolean; set: (v: boolean) => void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={props.checked} onChange={(e) => props.set((e.target as HTMLInputElement).checked)} /> {props.label}
    </label>
  )
}

/** A select of fixed choices in a Field. */
export function Choice(props: { label: string; value: string; set: (v: string) => void; options: string[]; hint?: string; error?: unknown; field?: string; disabled?: boolean }) {
  return (
    <Field label={props.label} hint={props.hint} error={props.field ? serverFieldError(props.error, props.field) : undefined}>
      <select disabled={props.disabled} value={props.value} onChange={(e) => props.set((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </Field>
  )
}

/** A number from a text field: undefined when empty, the text itself when it is not a number (the API refuses it). */
export const numberOr = (s: string): number | undefined => (s.trim() === '' ? undefined : Number(s))
