/**
 * Guards of the listener's event listeners: no exception leaves one (an exception thrown from a socket, server or
 * timer callback would otherwise end the process); it is reported once and ends at most the connection it was about.
 */
import { describeThrown } from '../lib/describe-thrown.ts'

/**
 * `fn` as an event listener that no exception leaves: one is reported (`error: listener: <what> failed: <stack>`) and the
 * connection it was about (`socketOf` its arguments), if any, destroyed. `report` must not throw (the listener's own
 * swallows a failing log sink).
 */
export function guard<A extends unknown[]>(
  report: (line: string) => void,
  what: string,
  fn: (...args: A) => void,
  socketOf?: (...args: A) => { destroy(): unknown } | undefined,
) {
  return (...args: A): void => {
    try {
      fn(...args)
    } catch (e) {
      report(`error: listener: ${what} failed: ${describeThrown(e)}`)
      try {
        socketOf?.(...args)?.destroy()
      } catch {
        // a socket that cannot even be destroyed is gone already
      }
    }
  }
}
