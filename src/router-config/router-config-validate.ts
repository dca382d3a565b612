/**
 * Validates one router configuration: decode, parse with positions, substitute environment
 * variables, walk the schema, run the cross-field rules. Pure apart from reading the environment
 * it is given; no printing, no exit codes.
 */
import { RouterConfigSchema } from '../../schemas/router-config.ts'
import { checkRouterConfigFiles, type FileCheckOptions } from './router-config-files.ts'
import { routerEnvLookup, substituteEnv } from './router-config-env.ts'
import { FindingList, LineIndex, type Finding } from './router-config-findings.ts'
import { checkRouterConfigRules } from './router-config-rules.ts'
import { SchemaWalker, describeNode, type SchemaNode } from './router-config-walk.ts'
import { loadYaml, type MapNode } from './router-config-yaml.ts'

/** Inputs besides the text. */
export interface ValidateOptions {
  /** Environment used for `${NAME}` substitution; defaults to the process environment. */
  env?: Record<string, string | undefined>
}

/** Findings of one configuration, sorted by position, and its effective form when it was a mapping. */
export interface ValidationResult {
  findings: Finding[]
  effective?: Record<string, unknown>
}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const lossyUtf8 = new TextDecoder('utf-8')

/** Decodes bytes as UTF-8; invalid bytes become U+FFFD and the offset of the first one is returned. */
function decode(bytes: Uint8Array): { text: string; badAt?: number } {
  try {
    return { text: utf8.decode(bytes) }
  } catch {
    const text = lossyUtf8.decode(bytes)
    return { text, badAt: Math.max(0, text.indexOf('\uFFFD')) }
  }
}

interface Validated {
  findings: FindingList
  /** The substituted tree, when the file was a mapping. */
  root?: MapNode
  effective?: Record<string, unknown>
}

function validate(source: string | Uint8Array, options: ValidateOptions): Validated {
  const { text, badAt } = typeof source === 'string' ? { text: source, badAt: undefined } : decode(source)
  const findings = new FindingList(new LineIndex(text))
  if (badAt !== undefined) findings.error('(yaml)', badAt, 'the file is not valid UTF-8 text')
  const { root, wellFormed } = loadYaml(text, findings)
  if (!wellFormed) return { findings }
  if (root === undefined) {
    findings.error('(root)', 0, 'the file is empty; a router configuration needs at least v, ctrl and identity')
    return { findings }
  }
  if (root.kind !== 'map') {
    findings.error('(root)', root.offset, `the top level must be a mapping of sections (v, ctrl, identity, ...), got ${describeNode(root)}`)
    return { findings }
  }
  substituteEnv(root, routerEnvLookup(options.env ?? process.env), findings)
  const effective = new SchemaWalker(findings).walk(RouterConfigSchema as unknown as SchemaNode, root, '') as Record<string, unknown>
  checkRouterConfigRules({ root, effective, findings })
  return { findings, root, effective }
}

/** Validates a router configuration given as text or raw bytes. Never throws on any input. */
export function validateRouterConfig(source: string | Uint8Array, options: ValidateOptions = {}): ValidationResult {
  const { findings, effective } = validate(source, options)
  return { findings: findings.sorted(), effective }
}

/**
 * Validates a router configuration and then the files it names (`--check-files`): certificates,
 * keys and CA bundle, resolved against `files.base`. Findings of both are sorted together.
 */
export async function validateRouterConfigWithFiles(source: string | Uint8Array, options: ValidateOptions & { files: FileCheckOptions }): Promise<ValidationResult> {
  const { findings, root, effective } = validate(source, options)
  if (root) await checkRouterConfigFiles(root, options.files, findings)
  return { findings: findings.sorted(), effective }
}
