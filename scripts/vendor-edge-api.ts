/**
 * Vendors the official edge-api swagger 2.0 documents (client.yml and management.yml of openziti/edge-api) into
 * test/fixtures/edge-api/ as client.json and management.json: the contract without the prose, which is what the
 * spec check of the tests (test/support/spec-check.ts) reads. The commit and license are in SOURCE beside them.
 *
 *   bun run scripts/vendor-edge-api.ts DIR           rewrite the vendored files from DIR/client.yml and DIR/management.yml
 *   bun run scripts/vendor-edge-api.ts --check DIR   compare only: exit 1 when a vendored file differs
 *
 * DIR is a checkout of openziti/edge-api at the commit SOURCE names (the documents sit at its top), or any folder
 * holding those two files. Nothing is read from outside the repository unless DIR says so.
 *
 * What is kept: the paths in their upstream order, each operation's operationId, consumes, produces, security and
 * parameters, each response's schema by status (a response without a schema stays, as `{}`: it still documents the
 * status; one that is a `$ref` to the document's shared `responses` stays that `$ref`), every definition, the shared
 * `parameters` and `responses` (the same way), and every schema keyword (type, format, enum, required, properties,
 * items, additionalProperties, allOf, $ref, discriminator, bounds, `x-` extensions such as x-nullable). What is
 * dropped: description, summary, title, example and examples wherever they stand, operation tags, response headers
 * (each response declares the same WWW-Authenticate), and the host and contact of `info`. Keys keep the upstream
 * order, so the same documents always give the same bytes. The same compact form serves the fabric document
 * (scripts/vendor-fabric-api.ts).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const SPEC_NAMES = ['client', 'management'] as const
export type VendoredSpecName = (typeof SPEC_NAMES)[number]

/** Where the vendored files are committed. */
export const VENDORED_DIR = join(import.meta.dir, '..', 'test', 'fixtures', 'edge-api')

type Json = unknown
type Obj = Record<string, Json>

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options'])
/** Prose, wherever it stands in a schema, parameter or operation. */
const PROSE = new Set(['description', 'summary', 'title', 'example', 'examples'])

const isObj = (v: Json): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Copies `o` without the keys `drop` names, mapping the value of each kept key through `f`. */
function keep(o: Obj, drop: (k: string) => boolean, f: (k: string, v: Json) => Json = (_k, v) => v): Obj {
  const out: Obj = {}
  for (const [k, v] of Object.entries(o)) if (!drop(k)) out[k] = f(k, v)
  return out
}

/** A schema: prose dropped at every level; the names in `properties` are data, never keywords. */
function schema(s: Json): Json {
  if (Array.isArray(s)) return s.map(schema)
  if (!isObj(s)) return s
  return keep(s, (k) => PROSE.has(k), (k, v) => {
    if (k === 'properties' && isObj(v)) return keep(v, () => false, (_name, p) => schema(p))
    if (k === 'items' || k === 'additionalProperties' || k === 'not' || k === 'allOf' || k === 'anyOf' || k === 'oneOf') return schema(v)
    return v
  })
}

/** A parameter: its `schema` (body) and `items` (arrays in the query or path) are schemas. */
function parameter(p: Json): Json {
  if (!isObj(p)) return p
  return keep(p, (k) => PROSE.has(k), (k, v) => (k === 'schema' || k === 'items' ? schema(v) : v))
}

/**
 * A response: its schema (none: `{}`, which still documents the status), or the `$ref` to a shared one of the
 * document's `responses` (the fabric document names most of its responses that way).
 */
function response(r: Json): Json {
  if (isObj(r) && typeof r.$ref === 'string') return { $ref: r.$ref }
  return isObj(r) && r.schema !== undefined ? { schema: schema(r.schema) } : {}
}

function operation(op: Obj): Obj {
  return keep(op, (k) => PROSE.has(k) || k === 'tags', (k, v) => {
    if (k === 'parameters' && Array.isArray(v)) return v.map(parameter)
    if (k === 'responses' && isObj(v)) return keep(v, () => false, (_status, r) => response(r))
    return v
  })
}

/** The compact form of one swagger 2.0 document (see the head of this file). */
export function compactSpec(doc: Obj): Obj {
  return keep(doc, (k) => k === 'host', (k, v) => {
    if (k === 'info' && isObj(v)) return keep(v, (ik) => PROSE.has(ik) || ik === 'contact')
    if (k === 'paths' && isObj(v)) {
      return keep(v, () => false, (_template, item) =>
        isObj(item) ? keep(item, () => false, (m, o) => (m === 'parameters' && Array.isArray(o) ? o.map(parameter) : HTTP_METHODS.has(m) && isObj(o) ? operation(o) : o)) : item,
      )
    }
    if (k === 'definitions' && isObj(v)) return keep(v, () => false, (_name, d) => schema(d))
    // the shared parameters and responses that operations name by `$ref` (the fabric document has them)
    if (k === 'parameters' && isObj(v)) return keep(v, () => false, (_name, p) => parameter(p))
    if (k === 'responses' && isObj(v)) return keep(v, () => false, (_name, r) => response(r))
    if (k === 'securityDefinitions' && isObj(v)) return keep(v, () => false, (_name, d) => (isObj(d) ? keep(d, (dk) => PROSE.has(dk)) : d))
    return v
  })
}

/** The vendored file's exact text for an upstream document's YAML text. */
export function renderCompactSpec(yamlText: string): string {
  // Bun's YAML parser resolves the documents' `!!float` tags to numbers; the documents hold nothing JSON cannot.
  const doc = Bun.YAML.parse(yamlText) as Obj
  return `${JSON.stringify(compactSpec(doc), null, 1)}\n`
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const check = args[0] === '--check'
  const dir = check ? args[1] : args[0]
  if (!dir || args.length !== (check ? 2 : 1)) {
    console.error('usage: bun run scripts/vendor-edge-api.ts [--check] DIR   (DIR holds client.yml and management.yml of openziti/edge-api)')
    process.exit(2)
  }
  let stale = 0
  for (const name of SPEC_NAMES) {
    const from = join(dir, `${name}.yml`)
    const to = join(VENDORED_DIR, `${name}.json`)
    if (!existsSync(from)) {
      console.error(`no ${from}`)
      process.exit(2)
    }
    const text = renderCompactSpec(readFileSync(from, 'utf8'))
    const same = existsSync(to) && readFileSync(to, 'utf8') === text
    if (check) {
      console.log(`${to}: ${same ? 'up to date' : 'differs from what ' + from + ' gives'}`)
      if (!same) stale++
    } else {
      await Bun.write(to, text)
      console.log(`${same ? 'unchanged' : 'wrote'} ${to} (${text.length} bytes, from ${from})`)
    }
  }
  if (stale > 0) process.exit(1)
}
