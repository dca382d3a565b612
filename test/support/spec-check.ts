/**
 * Checks a JSON answer against the official swagger 2.0 documents of the three APIs, as a client generated from them
 * would read it, plus what clients generated from older specs need. The harness runs it on every answer its clients
 * receive; it never changes an answer. The documents are read from their vendored form: test/fixtures/edge-api/
 * (client.json, management.json: openziti/edge-api's client.yml and management.yml without descriptions and examples,
 * written by scripts/vendor-edge-api.ts) and test/fixtures/fabric-api/ (fabric.json: openziti/ziti's
 * controller/specs/swagger.yml, written by scripts/vendor-fabric-api.ts); commit and license in SOURCE there.
 *
 * - The operation is found from method and path: the API prefix says which spec (/fabric/v1 is the fabric document),
 *   bare paths and /edge/v1 are Client API aliases, root /version is the client spec's /version. A path or method
 *   absent from the spec fails unless it is one of edgeplane's own operations (EDGEPLANE_EXTENSIONS in
 *   src/http/http-openapi.ts). Parameters and responses an operation names by `$ref` (the fabric document's shared
 *   `parameters` and `responses`) are read through the reference.
 * - The schema comes from the status, else `default`; an error status the operation does not list is checked as the
 *   spec's apiErrorEnvelope (a generated client reads it as an unknown error); an undocumented 2xx fails.
 * - ajv checks required properties, JSON types, enums and `date-time` formats strictly. Swagger 2.0 adaptations:
 *   `x-nullable: true` admits null; `discriminator` and the other `x-` keys are ignored; a bare `type: object` is any
 *   value (go-swagger's interface{}); a `required` name that no `properties` of the schema (or of its allOf siblings)
 *   declares is dropped, since generated clients have no such field and never check it (apiSessionDetail requires an
 *   undeclared `cachedUpdatedAt`); `uri`/`url` formats are not checked, since go-swagger parses them with url.Parse,
 *   which accepts the relative `_links` hrefs.
 * - Stricter than the current spec, for older generated clients: a map (`tags`, `appData`, any schema made of
 *   `additionalProperties`) is never null even where the spec marks it nullable. The rest follows from the spec: a
 *   value the spec does not mark x-nullable is never null, and baseEntity requires id, createdAt, updatedAt and _links
 *   on every stored resource.
 *
 * Each spec is parsed once per process when first needed; each definition is compiled once, for the first answer
 * that needs it. The escape for a test that deliberately leaves the spec is the harness's `offSpec: 'why'` request
 * option; specCheckTally counts every use, and the preloaded guard prints the count after the last test file.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EDGEPLANE_EXTENSIONS } from '../../src/http/http-openapi.ts'

export type SpecName = 'client' | 'management' | 'fabric'

/** The vendored edge-api documents, `<spec>.json` (see scripts/vendor-edge-api.ts). */
export const SPEC_DIR = join(import.meta.dir, '..', 'fixtures', 'edge-api')
/** The vendored fabric document, fabric.json (see scripts/vendor-fabric-api.ts). */
export const FABRIC_SPEC_DIR = join(import.meta.dir, '..', 'fixtures', 'fabric-api')

/** The file a spec is read from. */
export const specFile = (name: SpecName): string => join(name === 'fabric' ? FABRIC_SPEC_DIR : SPEC_DIR, `${name}.json`)

const PREFIXES: readonly [string, SpecName][] = [
  ['/edge/client/v1', 'client'],
  ['/edge/management/v1', 'management'],
  ['/edge/v1', 'client'],
  ['/fabric/v1', 'fabric'],
]

/** The spec and the path inside it that the listener serves at `pathname` (the real controller's aliases). */
export function specPathOf(pathname: string): { spec: SpecName; path: string } {
  for (const [prefix, spec] of PREFIXES) {
    if (pathname === prefix) return { spec, path: '/' }
    if (pathname.startsWith(prefix + '/')) return { spec, path: pathname.slice(prefix.length) }
  }
  return { spec: 'client', path: pathname }
}

type Schema = Record<string, unknown>
/** A parameter of an operation (the path item's and the operation's own), by what the checks use of it. */
export interface SpecParameter {
  name: string
  in: 'path' | 'query' | 'body' | 'header' | 'formData'
}
export interface Operation {
  template: string
  method: string
  parameters: SpecParameter[]
  responses: Record<string, { schema?: Schema } | undefined>
}
interface PathEntry {
  template: string
  re: RegExp
  literals: number
  ops: Map<string, Operation>
}
interface LoadedSpec {
  doc: {
    paths: Record<string, Record<string, unknown>>
    definitions: Record<string, Schema>
    /** Shared parameters and responses, named by `$ref` from operations (the fabric document has them). */
    parameters?: Record<string, SpecParameter>
    responses?: Record<string, { schema?: Schema }>
  }
  paths: PathEntry[]
  /** Each definition adapted to JSON schema, with `$id` `<spec>:<name>` (see defId). */
  definitions: Schema[]
}

/** A swagger 2.0 document as the checker reads it. */
export type SpecDocument = LoadedSpec['doc']

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

const specs = new Map<SpecName, LoadedSpec>()
const validators = new Map<string, ValidateFunction>()

/** The parsed swagger document of `name` (parsed once per process). */
export function specDocument(name: SpecName): LoadedSpec['doc'] {
  return loadSpec(name).doc
}

function loadSpec(name: SpecName): LoadedSpec {
  const cached = specs.get(name)
  if (cached) return cached
  const spec = buildSpec(name, JSON.parse(readFileSync(specFile(name), 'utf8')) as LoadedSpec['doc'])
  specs.set(name, spec)
  for (const a of engines.values()) addDefinitions(a, spec)
  return spec
}

/** What the checker makes of a swagger document: operations in matching order, definitions adapted to JSON schema. */
function buildSpec(name: SpecName, doc: LoadedSpec['doc']): LoadedSpec {
  const paths: PathEntry[] = []
  // a `$ref` to the document's shared parameters or responses (`#/parameters/limit`, `#/responses/listLinks`)
  const shared = <T>(section: Record<string, T> | undefined, prefix: string, v: T | { $ref?: unknown }): T => {
    const ref = (v as { $ref?: unknown }).$ref
    if (typeof ref !== 'string' || !ref.startsWith(prefix)) return v as T
    const target = section?.[ref.slice(prefix.length)]
    if (target === undefined) throw new Error(`${name} spec: ${ref} names nothing`)
    return target
  }
  const param = (p: SpecParameter): SpecParameter => {
    const r = shared(doc.parameters, '#/parameters/', p)
    return { name: r.name, in: r.in }
  }
  const responsesOf = (rs: Operation['responses'] | undefined): Operation['responses'] =>
    Object.fromEntries(Object.entries(rs ?? {}).map(([status, r]) => [status, r === undefined ? r : shared(doc.responses, '#/responses/', r)]))
  for (const [template, item] of Object.entries(doc.paths)) {
    const ops = new Map<string, Operation>()
    const common = ((item.parameters as SpecParameter[] | undefined) ?? []).map(param)
    for (const [m, o] of Object.entries(item)) {
      if (!HTTP_METHODS.includes(m)) continue
      const op = o as { responses?: Operation['responses']; parameters?: SpecParameter[] }
      ops.set(m.toUpperCase(), { template, method: m.toUpperCase(), parameters: [...common, ...(op.parameters ?? []).map(param)], responses: responsesOf(op.responses) })
    }
    paths.push({ template, re: templateRe(template), literals: template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length, ops })
  }
  // Literal segments win over templates (`/identities/roles` before `/identities/{id}`).
  paths.sort((a, b) => b.literals - a.literals)
  return { doc, paths, definitions: adaptDefinitions(name, doc.definitions) }
}

/**
 * Everything the checker takes from a swagger document, as plain data: the operations in the order they are matched
 * (each with its parameters and, by status, the response schema adapted as it is checked, or null for a response
 * without one) and the adapted definitions. Two documents with equal views pass and fail the same answers; the test
 * of the vendored documents compares the view of each with that of its upstream YAML.
 */
export function checkerView(name: SpecName, doc: SpecDocument): unknown {
  const spec = buildSpec(name, doc)
  const ctx = { spec: name, defs: doc.definitions }
  return {
    operations: spec.paths.flatMap((p) =>
      [...p.ops.values()].map((op) => ({
        template: op.template,
        method: op.method,
        parameters: op.parameters,
        responses: Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, r?.schema ? adapt(r.schema, ctx, undefined) : null])),
      })),
    ),
    definitions: spec.definitions,
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** `/identities/{id}` → a matcher of concrete paths (a trailing slash allowed). */
function templateRe(template: string): RegExp {
  return new RegExp('^' + template.split('/').map((s) => (s.startsWith('{') ? '[^/]+' : escapeRe(s))).join('/') + '/?$')
}

/**
 * Two ajv instances over the same adapted definitions: `fast` stops at the first error (less code to generate: the
 * first compile of each schema is most of the checker's cost), `report` lists every error and is built only when an
 * answer fails. Each definition is a schema of its own, referenced by id and never inlined, so ajv compiles it once
 * however many responses use it.
 */
type Engine = 'fast' | 'report'
const engines = new Map<Engine, Ajv>()

function engine(kind: Engine): Ajv {
  let a = engines.get(kind)
  if (a) return a
  a = new Ajv({ strict: false, allErrors: kind === 'report', logger: false, validateFormats: true, inlineRefs: false })
  addFormats(a, ['date-time', 'uuid', 'byte', 'int32', 'int64', 'float', 'double'])
  a.addFormat('uri', true)
  a.addFormat('url', true)
  for (const spec of specs.values()) addDefinitions(a, spec)
  engines.set(kind, a)
  return a
}

/** The operation `method` `path` of `spec`, or undefined when the spec has none. */
export function findOperation(spec: SpecName, method: string, path: string): Operation | undefined {
  const entry = loadSpec(spec).paths.find((p) => p.re.test(path))
  return entry?.ops.get(method.toUpperCase())
}

// ---- swagger 2.0 → JSON schema (draft-07) ----

interface AdaptCtx {
  spec: SpecName
  defs: Record<string, Schema>
}

function adaptDefinitions(spec: SpecName, defs: Record<string, Schema>): Schema[] {
  const ctx = { spec, defs }
  return Object.entries(defs).map(([name, def]) => ({ $id: defId(spec, name), ...(adapt(def, ctx, undefined) as Schema) }))
}

const refName = (ref: string): string => ref.slice('#/definitions/'.length)

/** The schema id of a definition: an absolute URI (`management:identityDetail`), so references never resolve relatively. */
const defId = (spec: SpecName, name: string): string => `${spec}:${name}`

function addDefinitions(a: Ajv, spec: LoadedSpec): void {
  // Not checked against ajv's meta-schema: they are our own adaptation of the spec.
  for (const d of spec.definitions) a.addSchema(d, undefined, undefined, false)
}

function deref(s: Schema, ctx: AdaptCtx): Schema {
  let cur = s
  for (let i = 0; i < 32 && typeof cur.$ref === 'string'; i++) cur = ctx.defs[refName(cur.$ref)] ?? {}
  return cur
}

/** A map: a schema made only of `additionalProperties` (directly, through a $ref or a one-element allOf). */
function isMap(s: Schema, ctx: AdaptCtx): boolean {
  const d = deref(s, ctx)
  if (Array.isArray(d.allOf) && d.allOf.length === 1) return isMap(d.allOf[0] as Schema, ctx)
  return d.additionalProperties !== undefined && d.additionalProperties !== false && d.properties === undefined
}

/** Property names a schema declares, following $ref and allOf. */
function declared(s: Schema, ctx: AdaptCtx, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 32) return out
  const d = deref(s, ctx)
  for (const k of Object.keys((d.properties as Schema | undefined) ?? {})) out.add(k)
  for (const part of (d.allOf as Schema[] | undefined) ?? []) declared(part, ctx, out, depth + 1)
  return out
}

const PROSE = new Set(['description', 'title', 'example', 'examples'])

function adapt(s: unknown, ctx: AdaptCtx, siblings: Set<string> | undefined): unknown {
  if (Array.isArray(s)) return s.map((x) => adapt(x, ctx, undefined))
  if (s === null || typeof s !== 'object') return s
  const node = s as Schema
  const out: Schema = {}
  const names = Array.isArray(node.allOf) ? declared(node, ctx) : undefined
  for (const [k, v] of Object.entries(node)) {
    // `items: null` (management.yml controllerSettingsList) is no schema: read it as "anything", as go-swagger does.
    // Prose (description, title, examples) checks nothing: dropped, as the vendored documents drop it.
    if (k.startsWith('x-') || k === 'discriminator' || PROSE.has(k) || v === null) continue
    if (k === '$ref') out.$ref = defId(ctx.spec, refName(v as string))
    else if (k === 'properties') {
      const props: Schema = {}
      for (const [p, ps] of Object.entries(v as Schema)) props[p] = adapt(ps, ctx, undefined)
      out.properties = props
    } else if (k === 'allOf') out.allOf = (v as unknown[]).map((x) => adapt(x, ctx, names))
    else if (k === 'required') {
      const known = new Set([...Object.keys((node.properties as Schema | undefined) ?? {}), ...(siblings ?? []), ...(names ?? [])])
      out.required = (v as string[]).filter((r) => known.has(r))
    } else if (k === 'items' || k === 'additionalProperties' || k === 'not') out[k] = typeof v === 'object' ? adapt(v, ctx, undefined) : v
    else out[k] = v
  }
  // go-swagger reads a bare `type: object` (no properties, no additionalProperties) as interface{}: any JSON value
  // (the values of `tags`, of a service's `config` map, a config type's `schema`).
  if (out.type === 'object' && Object.keys(out).every((k) => k === 'type')) delete out.type
  if (node['x-nullable'] !== true || isMap(node, ctx)) return out
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null']
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null]
    return out
  }
  return { anyOf: [out, { type: 'null' }] }
}

// ---- checking an answer ----

export interface Answer {
  method: string
  /** Path and query as requested (the query is ignored). */
  url: string
  status: number
  contentType: string | null
  text: string
  /** `text` parsed, when the caller already did (undefined: the checker parses it). */
  body?: unknown
}

/** What an answer was checked as: the operation and its schema, an edgeplane extension, or skipped (not JSON). */
export type CheckResult = { kind: 'checked'; operation: string } | { kind: 'extension'; operation: string } | { kind: 'skipped' }

export class SpecViolation extends Error {}

/** Checks one answer; throws a SpecViolation naming the bad field, the operation and the body. */
export function checkAnswer(a: Answer): CheckResult {
  if (a.method.toUpperCase() === 'HEAD' || a.text === '' || !(a.contentType ?? '').toLowerCase().includes('json')) return { kind: 'skipped' }
  const pathname = new URL(a.url, 'https://x').pathname
  const { spec, path } = specPathOf(pathname)
  const method = a.method.toUpperCase()
  const op = findOperation(spec, method, path)
  if (!op) {
    const ext = EDGEPLANE_EXTENSIONS.operations.find((e) => e.api === spec && e.method === method && templateRe(e.path).test(path))
    if (ext) return { kind: 'extension', operation: `${spec} ${method} ${ext.path}` }
    throw new SpecViolation(
      `${method} ${pathname}: the official ${spec} spec has no such operation (${method} ${path}) and it is not listed in ` +
        `EDGEPLANE_EXTENSIONS; answered ${a.status}: ${clip(a.text)}`,
    )
  }
  const operation = `${spec} ${method} ${op.template} → ${a.status}`
  let body = a.body
  if (body === undefined) {
    try {
      body = JSON.parse(a.text)
    } catch {
      throw new SpecViolation(`${operation}: the answer says JSON but does not parse: ${clip(a.text)}`)
    }
  }
  const validate = validatorFor('fast', spec, op, a.status)
  if (!validate) throw new SpecViolation(`${operation}: the spec documents no ${a.status} answer (nor a default) for this operation: ${clip(a.text)}`)
  if (!validate(body)) {
    const report = validatorFor('report', spec, op, a.status)!
    report(body)
    throw new SpecViolation(`${operation} does not match the spec:\n${describeErrors(report.errors ?? validate.errors ?? [], body)}\nbody: ${clip(a.text)}`)
  }
  return { kind: 'checked', operation }
}

/** The response schema of `op` for `status`, adapted; undefined for an undocumented success status. */
function responseSchema(spec: SpecName, op: Operation, status: number): unknown {
  const response = op.responses[String(status)] ?? op.responses.default
  if (response?.schema) return adapt(response.schema, { spec, defs: loadSpec(spec).doc.definitions }, undefined)
  if (status >= 400) return { $ref: defId(spec, 'apiErrorEnvelope') }
  return undefined
}

/**
 * The validator of `op`'s answer with `status` in engine `kind`, compiled on first use. Most responses are a $ref to
 * an envelope that many operations share (every error answer is apiErrorEnvelope): one validator per distinct schema.
 */
function validatorFor(kind: Engine, spec: SpecName, op: Operation, status: number): ValidateFunction | undefined {
  const key = `${kind} ${spec} ${op.method} ${op.template} ${status}`
  const cached = validators.get(key)
  if (cached) return cached
  const schema = responseSchema(spec, op, status)
  if (schema === undefined) return undefined
  const schemaKey = `${kind} ${JSON.stringify(schema)}`
  let v = validators.get(schemaKey)
  if (!v) {
    const ref = (schema as { $ref?: string }).$ref
    // A response that is only a $ref is that definition's own validator.
    v = ref !== undefined && Object.keys(schema as object).length === 1 ? engine(kind).getSchema(ref)! : engine(kind).compile(schema as object)
    validators.set(schemaKey, v)
  }
  validators.set(key, v)
  return v
}

function describeErrors(errors: readonly ErrorObject[], body: unknown): string {
  const lines: string[] = []
  for (const e of errors) {
    // The null branch of a nullable value and the anyOf that joins them repeat what the other branch says.
    if (e.keyword === 'anyOf' || (e.keyword === 'type' && (e.params as { type?: unknown }).type === 'null')) continue
    const at = e.instancePath === '' ? '(the body)' : e.instancePath
    lines.push(`  at ${at}: ${e.message}${e.keyword === 'required' ? '' : `, got ${clip(JSON.stringify(valueAt(body, e.instancePath)) ?? 'undefined', 120)}`}`)
    if (lines.length === 12) break
  }
  return [...new Set(lines)].join('\n')
}

function valueAt(body: unknown, pointer: string): unknown {
  let cur: unknown = body
  for (const raw of pointer.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined
  }
  return cur
}

const clip = (s: string, max = 2000): string => (s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s)

// ---- the escape, counted ----

/** How many answers were checked, and every use of the `offSpec` escape by reason. */
export class SpecCheckTally {
  private checked = 0
  private readonly offSpec = new Map<string, number>()

  recordChecked(): void {
    this.checked++
  }

  /** An answer a test asked not to check (`offSpec: 'why'`). */
  recordOffSpec(reason: string): void {
    this.offSpec.set(reason, (this.offSpec.get(reason) ?? 0) + 1)
  }

  /** The totals and one line per escape reason, for the end of the run (empty when nothing was recorded). */
  summary(): string {
    if (this.checked === 0 && this.offSpec.size === 0) return ''
    const uses = [...this.offSpec.values()].reduce((a, b) => a + b, 0)
    const lines = [`spec check: ${this.checked} answers checked against the official spec; ${uses} off-spec by request (${this.offSpec.size} reasons)`]
    for (const [reason, n] of [...this.offSpec].sort((a, b) => b[1] - a[1])) lines.push(`  ${n} × ${reason}`)
    return lines.join('\n')
  }
}

/** The run's tally: the harness records into it, the preloaded guard prints it after the last test file. */
export const specCheckTally = new SpecCheckTally()
