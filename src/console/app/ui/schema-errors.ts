/**
 * Config data checked against its config type's JSON schema in the browser, with @cfworker/json-schema: it interprets
 * the schema rather than compiling it to code, so it runs under the console's CSP (no eval), has no dependencies and is
 * small (~23 KiB minified). Its errors are grouped by the top-level property they concern, so a form shows each at its
 * field: a missing required property at that property, a nested error at its top-level property with the rest of
 * its path, an error of the whole data (or of a property the form does not show) under ''.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema'

type Json = Record<string, unknown>

/** Errors by top-level property ('' for the data as a whole). */
export type SchemaErrors = Record<string, string>

const CONTAINERS = new Set(['properties', '$ref', 'items', 'allOf', 'false', 'prefixItems', 'dependentSchemas', 'then', 'else', 'if'])

function draftOf(schema: Json): '4' | '7' | '2019-09' | '2020-12' {
  const s = String(schema.$schema ?? '')
  if (s.includes('draft-04')) return '4'
  if (s.includes('2019-09')) return '2019-09'
  if (s.includes('2020-12')) return '2020-12'
  return '7'
}

/** Checks `data` against `schema`; answers the errors by top-level property (empty when valid). */
export function validateData(schema: Json, data: unknown): SchemaErrors {
  let units: OutputUnit[]
  try {
    units = new Validator(schema as Schema, draftOf(schema), false).validate(data).errors
  } catch (e) {
    return { '': `the config type's schema cannot be used here: ${(e as Error).message}` }
  }
  // `additionalProperties: false` also reports the extra property as a `false` schema: one message is enough
  const extra = new Set(units.filter((u) => u.keyword === 'additionalProperties').map((u) => /"(.+)"/.exec(u.error)?.[1]))
  const out: SchemaErrors = {}
  const weak: SchemaErrors = {}
  for (const u of units) {
    const path = u.instanceLocation.replace(/^#\/?/, '').split('/').filter(Boolean).map((p) => decodeURIComponent(p.replace(/~1/g, '/').replace(/~0/g, '~')))
    let key = path[0] ?? ''
    let message = u.error
    if (key === '' && u.keyword === 'required') key = /"(.+)"/.exec(u.error)?.[1] ?? ''
    else if (key === '' && u.keyword === 'properties') continue
    if (u.keyword === 'false' && path.length === 1 && extra.has(key)) continue
    if (path.length > 1) message = `${path.slice(1).join('/')}: ${message}`
    const into = CONTAINERS.has(u.keyword) ? weak : out
    if (into[key] === undefined) into[key] = message
  }
  for (const [k, v] of Object.entries(weak)) if (out[k] === undefined) out[k] = v
  return out
}
