/**
 * One JSON request to a controller's API, as the command-line tools make it (`status --url`, `explain`, `preview`):
 * JSON in and out, the session in `zt-session`, TLS trust as given. Answers the status and the parsed envelope
 * (undefined when the body is not JSON); a connection failure rejects.
 */

/** TLS options of Bun's fetch: the CA to trust, or no check at all. */
export interface JsonCallTls {
  ca?: string
  rejectUnauthorized?: boolean
}

/** The controller's envelope, as far as a client reads it. */
export interface JsonEnvelope {
  data?: unknown
  error?: { code?: string; message?: string; cause?: unknown }
}

export async function callJson(
  url: string,
  method: string,
  opts: { token?: string; body?: unknown; tls?: JsonCallTls } = {},
): Promise<{ status: number; envelope: JsonEnvelope | undefined }> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (opts.token) headers['zt-session'] = opts.token
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(url, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    ...(opts.tls ? { tls: opts.tls } : {}),
  } as RequestInit)
  const text = await res.text()
  let envelope: JsonEnvelope | undefined
  try {
    envelope = JSON.parse(text) as JsonEnvelope
  } catch {
    envelope = undefined
  }
  return { status: res.status, envelope }
}
