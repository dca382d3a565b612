/**
 * The last line of defence of `edgeplane run`: an exception no code caught (a throw in a timer or an event listener)
 * or a promise rejected with nobody waiting would end the process; with these handlers it is logged (level error,
 * once, with its stack and where it came from) and the controller goes on serving. On Bun 1.4, as on Node, having a
 * listener for `uncaughtException` and `unhandledRejection` is what keeps the process alive.
 * Every request and connection has its own guard (http-listener.ts); what reaches this is a bug to fix, not a path.
 */
import { describeThrown } from './describe-thrown.ts'

/** The part of `process` used here (a test passes an EventEmitter). */
export interface ProcessEvents {
  on(event: 'uncaughtException' | 'unhandledRejection', listener: (...args: any[]) => void): unknown
  off(event: 'uncaughtException' | 'unhandledRejection', listener: (...args: any[]) => void): unknown
}

/** What is known of a stray failure: its description (with the stack) and where it was caught. */
export interface StrayFailure {
  err: string
  origin: 'uncaughtException' | 'unhandledRejection'
}

/** Installs the handlers; answers a function that removes them. `log` failing is swallowed (it is the last resort). */
export function installLastResort(proc: ProcessEvents, log: (failure: StrayFailure, msg: string) => void): () => void {
  const tell = (failure: StrayFailure) => {
    try {
      log(failure, 'an error no code caught (logged, the controller goes on)')
    } catch {
      try {
        process.stderr.write(`edgeplane: ${failure.origin}: ${failure.err}\n`)
      } catch {
        // nowhere left to write
      }
    }
  }
  const onException = (err: unknown) => tell({ err: describeThrown(err), origin: 'uncaughtException' })
  const onRejection = (reason: unknown) => tell({ err: describeThrown(reason), origin: 'unhandledRejection' })
  proc.on('uncaughtException', onException)
  proc.on('unhandledRejection', onRejection)
  return () => {
    proc.off('uncaughtException', onException)
    proc.off('unhandledRejection', onRejection)
  }
}
