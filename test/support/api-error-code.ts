/**
 * What a call refused with, as `"<status> <code>"` (and the field cause when `withCause`), or `no error`: table tests
 * compare refusals by code without try/catch in every case. Anything that is not an ApiError is rethrown.
 */
import { ApiError } from '../../src/errors/api-error.ts'

function describeRefusal(e: unknown, withCause: boolean): string {
  if (!(e instanceof ApiError)) throw e
  const cause = withCause && e.apiCause?.kind === 'field' ? ` ${e.apiCause.field}: ${e.apiCause.reason}` : ''
  return `${e.status} ${e.code}${cause}`
}

export function codeOf(fn: () => unknown, opts: { withCause?: boolean } = {}): string {
  try {
    fn()
  } catch (e) {
    return describeRefusal(e, opts.withCause === true)
  }
  return 'no error'
}

export async function codeOfAsync(p: Promise<unknown>, opts: { withCause?: boolean } = {}): Promise<string> {
  try {
    await p
  } catch (e) {
    return describeRefusal(e, opts.withCause === true)
  }
  return 'no error'
}
