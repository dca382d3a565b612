/** Synchronous in-process event bus: subscribers run before the publishing actor's reply resolves, so keep them cheap. */
export type DomainEvent = { type: string }

export class EventBus {
  private readonly subs = new Map<string, Array<(e: DomainEvent) => void>>()

  subscribe<E extends DomainEvent>(type: E['type'], fn: (e: E) => void): () => void {
    const list = this.subs.get(type) ?? []
    list.push(fn as (e: DomainEvent) => void)
    this.subs.set(type, list)
    return () => {
      const l = this.subs.get(type)
      if (l) this.subs.set(type, l.filter((f) => f !== fn))
    }
  }

  publish(e: unknown): void {
    const ev = e as DomainEvent
    for (const fn of this.subs.get(ev.type) ?? []) {
      try {
        fn(ev)
      } catch (err) {
        console.error(`event subscriber for ${ev.type} failed:`, err)
      }
    }
  }
}
