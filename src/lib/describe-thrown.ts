/**
 * A description of anything thrown, for a log line: an Error's stack (else its name and message), anything else as a
 * string. Never throws itself (a value whose getters or toString throw is described as such).
 */
export function describeThrown(e: unknown): string {
  try {
    return e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e)
  } catch {
    return 'a thrown value that cannot be shown'
  }
}
