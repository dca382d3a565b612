/**
 * The bounded queue of model writes (the real controller's command rate limiter, queue 100): at most `queueSize`
 * write requests are admitted at once; one more is answered 429 SERVER_TOO_MANY_REQUESTS before its body is read.
 *
 * Admission happens at the entry of a request, not in an actor's mailbox: a request once admitted has all its writes
 * accepted, so a flow that writes to two actors is never cut in half by a full mailbox, and a write the mailbox holds
 * is never dropped. The actors' mailboxes still serialise the writes; the queue bounds how many wait there.
 */
export interface WriteQueueSettings {
  enabled: boolean
  queueSize: number
}

export const WRITE_QUEUE_DEFAULTS: WriteQueueSettings = { enabled: true, queueSize: 100 }

export interface WriteQueue {
  /** Admits one write request; false when the queue is full. */
  tryEnter(): boolean
  leave(): void
  /** Write requests admitted and not yet answered. */
  readonly depth: number
}

export function createWriteQueue(settings: WriteQueueSettings): WriteQueue {
  let depth = 0
  return {
    tryEnter() {
      if (settings.enabled && depth >= settings.queueSize) return false
      depth++
      return true
    },
    leave() {
      depth--
    },
    get depth() {
      return depth
    },
  }
}
