/** Exhaustiveness guard for discriminated unions. */
export function assertNever(x: never, what = 'value'): never {
  throw new TypeError(`unexpected ${what}: ${JSON.stringify(x)}`)
}
