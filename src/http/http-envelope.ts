/** Success envelopes: `{data, meta}`, the create answer, list meta with pagination and filterable fields. */
import { toPaginationJson } from '../domain/query/index.ts'

export const JSON_HEADERS = { 'content-type': 'application/json' } as const

/** Lowest-level JSON answer. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS })
}

/** 200 `{data, meta:{}}`. */
export function ok(data: unknown, headers?: Record<string, string>): Response {
  return json(200, { data, meta: {} }, headers)
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
  data: unknown[],
  page: { limit: number; offset: number; totalCount: number },
  filterableFields: readonly string[],
): Response {
  const fields = filterableFields.length > 0 ? `,"filterableFields":${JSON.stringify(filterableFields)}` : ''
  const body = `{"data":${JSON.stringify(data)},"meta":{"pagination":${toPaginationJson(page)}${fields}}}`
  return new Response(body, { status: 200, headers: JSON_HEADERS })
}
