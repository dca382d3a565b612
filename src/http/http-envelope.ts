/** Success envelopes: `{data, meta}`, the create answer, list meta with pagination and filterable fields. */
import { toPaginationJson } from '../domain/query/index.ts'
import { borrowBytes, bytesResponse, ownedBytes, ownedBytesResponse, type BodyBytes } from './http-body.ts'

export const JSON_HEADERS = { 'content-type': 'application/json' } as const

/** Lowest-level JSON answer: rendered to bytes here, which the listener writes as they are. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return jsonBytes(status, Buffer.from(JSON.stringify(body)), headers)
}

/** A JSON answer already rendered to bytes. */
export function jsonBytes(status: number, bytes: Uint8Array, headers?: Record<string, string>): Response {
  return ownedBytesResponse(bytes, { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS })
}

/** 200 `{data, meta:{}}`. */
export function ok(data: unknown, headers?: Record<string, string>): Response {
  return jsonBytes(200, envelopeBytes(data), headers)
}

/** The bytes of `{data, meta:{}}`, for a small answer rendered once and served many times (with `jsonBytes`). */
export function envelopeBytes(data: unknown): Uint8Array {
  return Buffer.from(JSON.stringify({ data, meta: {} }))
}

/** 200 `{data:{}, meta:{}}`: updates, patches, deletes and actions. */
export function okEmpty(): Response {
  return json(200, { data: {}, meta: {} })
}

/** Relative self link, as the real controller renders them. */
export function selfLink(entityPath: string, id: string): { self: { href: string } } {
  return { self: { href: `./${entityPath}/${id}` } }
}

/** 201 `{data:{_links, id}, meta:{}}`. */
export function created(entityPath: string, id: string): Response {
  return json(201, { data: { _links: selfLink(entityPath, id), id }, meta: {} })
}

/**
 * 200 list envelope. The pagination is rendered by the list engine so that an unlimited page reports the real
 * controller's limit 9223372036854775807 exactly (beyond what a JS number can print).
 */
export function list(
  rows: unknown[],
  page: { limit: number; offset: number; totalCount: number },
  filterableFields: readonly string[],
): Response {
  const data = JSON.stringify(rows)
  return new Response(`{"data":${data},"meta":{"pagination":${toPaginationJson(page)}${fieldsJson(filterableFields)}}}`, { status: 200, headers: JSON_HEADERS })
}

const fieldsJson = (fields: readonly string[]): string => (fields.length > 0 ? `,"filterableFields":${JSON.stringify(fields)}` : '')

/**
 * A JSON body assembled from UTF-8 pieces, most of them rendered once and reused: copying bytes into one buffer
 * costs a fraction of joining strings and encoding the result.
 */
export class JsonBody {
  /** The pieces so far: an array kept from an earlier body (a large list has thousands of pieces). */
  private parts: Uint8Array[] = spareParts.pop() ?? []
  private size = 0

  bytes(b: Uint8Array): this {
    this.parts.push(b)
    this.size += b.length
    return this
  }
  text(s: string): this {
    return this.bytes(utf8(s))
  }
  /**
   * The body in one buffer: a pooled one when large (see http-body.ts), or, when `owned`, a fresh one the caller may
   * keep. The JsonBody is done with after this.
   */
  finish(owned = false): BodyBytes {
    const out = owned ? ownedBytes(new Uint8Array(this.size)) : borrowBytes(this.size)
    let at = 0
    for (const p of this.parts) {
      out.bytes.set(p, at)
      at += p.length
    }
    this.parts.length = 0
    if (spareParts.length < 4) spareParts.push(this.parts)
    this.parts = []
    return out
  }
}

/** Emptied piece arrays of finished bodies, for the next ones. */
const spareParts: Uint8Array[][] = []

const encoder = new TextEncoder()
export const utf8 = (s: string): Uint8Array => encoder.encode(s)

/** 200 `{data, meta:{}}` around data written by `write`. */
export function okJson(write: (body: JsonBody) => void): Response {
  const body = new JsonBody().text('{"data":')
  write(body)
  return bytesResponse(body.text(',"meta":{}}').finish(), { status: 200, headers: JSON_HEADERS })
}

/** 200 with a JSON body rendered into a JsonBody (finished here). */
export function okBody(body: JsonBody): Response {
  return bytesResponse(body.finish(), { status: 200, headers: JSON_HEADERS })
}

/**
 * The list envelope around rows written by `writeRow`, not yet finished: answer it with okBody, or finish(true) to
 * keep the bytes (okBytes).
 */
export function listBody<T>(
  rows: readonly T[],
  writeRow: (t: T, body: JsonBody) => void,
  page: { limit: number; offset: number; totalCount: number },
  filterableFields: readonly string[],
): JsonBody {
  const body = new JsonBody().text('{"data":[')
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) body.bytes(COMMA)
    writeRow(rows[i]!, body)
  }
  return body.text(`],"meta":{"pagination":${toPaginationJson(page)}${fieldsJson(filterableFields)}}}`)
}

/** 200 with a JSON text already rendered (kept bytes: never pooled, never changed). */
export function okBytes(bytes: Uint8Array): Response {
  return bytesResponse(ownedBytes(bytes), { status: 200, headers: JSON_HEADERS })
}
const COMMA = utf8(',')
