/** Small building blocks every page uses. Values from the API are always rendered as text (JSX escapes them). */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { describeError } from '../api.ts'

export function ErrorLine({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null
  return (
    <p class="error" role="alert">
      {describeError(error)}
    </p>
  )
}

export function Field(props: { label: string; children: ComponentChildren; error?: string; hint?: string }) {
  return (
    <label class={props.error ? 'field invalid' : 'field'}>
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small>{props.hint}</small>}
      {props.error && (
        <small class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </label>
  )
}

/** Runs an async action with a busy flag and its error kept for display. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const run = async (...args: A) => {
    setBusy(true)
    setError(undefined)
    try {
      await fn(...args)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, setError }
}

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        <div class="actions">{props.actions}</div>
      </header>
      {props.children}
    </section>
  )
}

/** Splits "a, b ,c" into role attributes (or any list of names). */
export const splitList = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
