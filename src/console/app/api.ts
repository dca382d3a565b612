/**
 * The console's only way to the controller: the Management API over fetch, with the admin's own session token
 * (`zt-session`), exactly as any client. The token lives in sessionStorage (gone with the tab; never localStorage or a
 * cookie). A 401 on a request that had a session means the session ended: `onSessionLost` brings back the sign-in page,
 * keeping the page the admin was on.
 */
export const MGMT = '/edge/management/v1'
const TOKEN_KEY = 'edgeplane.console.session'

export interface ApiErrorBody {
  code: string
  message: string
  cause?: { field?: string; reason?: string; value?: unknown; message?: string; [k: string]: unknown }
  causeMessage?: string
  requestId?: string
}

/** A refused request: its HTTP status and the error envelope's `error`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: ApiErrorBody,
  ) {
    super(error.message || `HTTP ${status}`)
  }
}

export interface Page<T> {
  data: T[]
  meta: { pagination?: { limit: number; offset: number; totalCount: number } }
}

let onSessionLost: () => void = () => undefined
export function whenSessionLost(f: () => void): void {
  onSessionLost = f
}

export const session = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
}

/**
 * One request to the Management API; answers the parsed JSON (the envelope) or throws ApiFailure. The body goes as
 * JSON, or as it is when another `contentType` is given (a CA's verification certificate is text/plain).
 */
export async function api<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
  const token = session.get()
  const headers: Record<string, string> = { accept: 'application/json' }
  if (token) headers['zt-session'] = token
  if (body !== undefined) headers['content-type'] = contentType
  const payload = body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : String(body)
  const res = await fetch(`${MGMT}${path}`, { method, headers, body: payload })
  const text = await res.text()
  let json: any
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  if (res.status === 401 && token) {
    session.clear()
    onSessionLost()
  }
  if (!res.ok) throw new ApiFailure(res.status, json?.error ?? { code: `HTTP_${res.status}`, message: text.slice(0, 300) || res.statusText })
  return json as T
}

export const get = <T = any>(path: string) => api<T>('GET', path)
export const post = <T = any>(path: string, body?: unknown) => api<T>('POST', path, body ?? {})
export const put = <T = any>(path: string, body: unknown) => api<T>('PUT', path, body)
export const patch = <T = any>(path: string, body: unknown) => api<T>('PATCH', path, body)
export const del = <T = any>(path: string) => api<T>('DELETE', path)
export const postText = <T = any>(path: string, text: string) => api<T>('POST', path, text, 'text/plain')

/** A readable line for any error (an ApiFailure names its code and field). */
export function describeError(e: unknown): string {
  if (e instanceof ApiFailure) {
    const c = e.error.cause
    const where = c?.field ? ` (${c.field}${c.reason ? `: ${c.reason}` : ''})` : c?.message ? ` (${c.message})` : ''
    return `${e.error.code}: ${e.error.message}${where}`
  }
  return e instanceof Error ? e.message : String(e)
}
