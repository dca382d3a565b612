/**
 * A list of any Management API collection: the API's own filter language in a search box (its error shown under it,
 * with a caret where the API says the error is), paging and sorting by the API (`limit`, `offset`, `sort`).
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, get, type Page } from '../api.ts'
import { ErrorLine } from './common.tsx'

export interface Column<T> {
  key: string
  label: string
  sortable?: boolean
  render?: (row: T) => ComponentChildren
}

export function EntityList<T extends { id: string }>(props: {
  path: string
  columns: Column<T>[]
  /** Bumped by the page to reload after a change. */
  version?: number
  onOpen?: (row: T) => void
  pageSize?: number
  label: string
}) {
  const size = props.pageSize ?? 25
  const [filter, setFilter] = useState('')
  const [applied, setApplied] = useState('')
  const [offset, setOffset] = useState(0)
  const [sort, setSort] = useState<{ key: string; dir: 'asc' | 'desc' }>({ key: 'name', dir: 'asc' })
  const [page, setPage] = useState<Page<T> | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    const q = new URLSearchParams({ limit: String(size), offset: String(offset), sort: `${sort.key} ${sort.dir}` })
    if (applied) q.set('filter', applied)
    const sep = props.path.includes('?') ? '&' : '?'
    get<Page<T>>(`${props.path}${sep}${q}`).then(
      (p) => {
        setPage(p)
        setError(undefined)
      },
      (e) => setError(e),
    )
  }, [props.path, applied, offset, sort.key, sort.dir, props.version])
  const total = page?.meta.pagination?.totalCount ?? 0
  const filterError = error instanceof ApiFailure && error.error.code === 'INVALID_FILTER' ? error : undefined
  const at = filterError ? positionOf(filterError) : undefined
  return (
    <div class="list">
      <form
        class="filter"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          setOffset(0)
          setApplied(filter.trim())
        }}
      >
        <label>
          <span>Filter</span>
          <input
            name="filter"
            value={filter}
            placeholder={'name contains "laptop"'}
            aria-invalid={filterError ? 'true' : undefined}
            aria-describedby={filterError ? 'filter-error' : undefined}
            onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Apply</button>
      </form>
      {filterError && (
        <div id="filter-error" class="filter-error" role="alert">
          {at !== undefined && (
            <pre class="caret" aria-hidden="true">
              {applied + '\n' + ' '.repeat(Math.max(0, Math.min(at, applied.length))) + '^'}
            </pre>
          )}
          <p class="error">{filterError.error.cause?.message ? String(filterError.error.cause.message) : filterError.error.message}</p>
        </div>
      )}
      {!filterError && <ErrorLine error={error} />}
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined}>
                {c.sortable ? (
                  <button type="button" class="sort" onClick={() => setSort({ key: c.key, dir: sort.key === c.key && sort.dir === 'asc' ? 'desc' : 'asc' })}>
                    {c.label}
                    {sort.key === c.key ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                  </button>
                ) : (
                  c.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(page?.data ?? []).map((row) => (
            <tr>
              {props.columns.map((c, i) => (
                <td>
                  {i === 0 && props.onOpen ? (
                    <a href="#" onClick={(e) => (e.preventDefault(), props.onOpen!(row))}>
                      {c.render ? c.render(row) : String((row as Record<string, unknown>)[c.key] ?? '')}
                    </a>
                  ) : c.render ? (
                    c.render(row)
                  ) : (
                    String((row as Record<string, unknown>)[c.key] ?? '')
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - size))}>
          Previous
        </button>
        <span>
          {total === 0 ? 'none' : `${offset + 1}–${Math.min(offset + size, total)} of ${total}`}
        </span>
        <button type="button" disabled={offset + size >= total} onClick={() => setOffset(offset + size)}>
          Next
        </button>
      </nav>
    </div>
  )
}

/** Where in the filter the API says its error is (a `column`/`offset`/`position` in the cause, or "at N" in a message). */
function positionOf(e: ApiFailure): number | undefined {
  const c = (e.error.cause ?? {}) as Record<string, unknown>
  for (const k of ['column', 'offset', 'position', 'pos']) if (typeof c[k] === 'number') return c[k] as number
  const m = String(c.message ?? e.error.message).match(/(?:column|position|offset):?\s*(\d+)/i)
  return m ? Number(m[1]) : undefined
}
