/** The injectable clock. The only place that reads the wall clock. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock for tests: starts at `startMs` and moves only when told. */
export class FakeClock implements Clock {
  private ms: number
  constructor(startMs = Date.now()) {
    this.ms = startMs
  }
  now(): number {
    return this.ms
  }
  advance(ms: number): void {
    this.ms += ms
  }
  set(ms: number): void {
    this.ms = ms
  }
}
