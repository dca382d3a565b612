/**
 * Operands of ZitiQL operations: literals read from tokens, which literal kinds each subject type accepts,
 * and the type-mismatch message.
 * @see openziti/ziti controller/storage/ast/node_convert.go (getTypedExpr, invalidOpTypes)
 */
import { invalidAt, type Token, type TokenPosition } from './query-lexer.ts'
import type { ScalarType, Subject } from './query-types.ts'

/** A literal as the parser read it; datetimes are epoch ms. `text` is how messages print it (strings unquoted, as the real controller prints them). */
export type Literal =
  | { readonly type: 'string'; readonly value: string; readonly text: string }
  | { readonly type: 'number'; readonly value: number; readonly text: string }
  | { readonly type: 'datetime'; readonly value: number; readonly text: string }
  | { readonly type: 'boolean'; readonly value: boolean; readonly text: string }

/** The real controller's name for a type in messages. */
function typeName(t: ScalarType | 'any'): string {
  if (t === 'boolean') return 'bool'
  if (t === 'datetime') return 'date'
  return t
}

function subjectType(s: Subject): ScalarType | 'any' {
  if (s.kind === 'element') return 'string'
  if (s.kind === 'count') return 'number'
  return s.type
}

/** The real controller's name for a subject's type in messages. */
export function subjectTypeName(s: Subject): string {
  return typeName(subjectType(s))
}

/** The literal a token stands for, or undefined when the token is not a literal. */
export function toLiteral(t: Token): Literal | undefined {
  switch (t.kind) {
    case 'string':
      return { type: 'string', value: t.value, text: t.value }
    case 'number':
      return { type: 'number', value: t.value, text: t.text }
    case 'datetime':
      return { type: 'datetime', value: t.value, text: new Date(t.value).toISOString() }
    case 'keyword':
      if (t.keyword === 'true' || t.keyword === 'false') return { type: 'boolean', value: t.keyword === 'true', text: t.keyword }
      return undefined
    default:
      return undefined
  }
}

/**
 * Checks that `subject <op> literals` is a supported combination.
 *
 * - `contains`/`icontains` (and negations): string or number subjects (numbers compare through their text).
 * - Everything else: the literal type must equal the subject type; map entries (`any`) take any literal.
 * @throws ApiError INVALID_FILTER `operation <lhs> <op> <rhs> is not supported with operands types <l>, <r>`.
 */
export function checkOperands(
  subject: Subject,
  lhsText: string,
  opText: string,
  first: Literal,
  all: readonly Literal[],
  at: TokenPosition,
): void {
  const lhs = subjectType(subject)
  const isContains = opText.endsWith('contains')
  const ok = isContains ? lhs === 'string' || lhs === 'number' || lhs === 'any' : lhs === 'any' || lhs === first.type
  if (ok) return
  let rhs: string
  if (opText.endsWith('in')) rhs = `[${all.map((l) => l.text).join(', ')}]`
  else if (opText.endsWith('between')) rhs = `${all[0].text} and ${all[1]?.text ?? ''}`
  else rhs = first.text
  throw invalidAt(`operation ${lhsText} ${opText} ${rhs} is not supported with operands types ${typeName(lhs)}, ${typeName(first.type)}`, at)
}
