/**
 * What the handlers of the links feature share: the registries, the routers as the policy graph holds them, the
 * peer announcements, the log and the counters.
 */
import type { Logger } from '../../lib/logger.ts'
import type { Router } from '../../domain/policy/policy-types.ts'
import type { ConnectedRouter, RouterRegistry } from '../control-routers.ts'
import type { LinkRegistry } from './link-registry.ts'
import type { PeerStates } from './peer-states.ts'

export interface LinksContext {
  registry: RouterRegistry
  links: LinkRegistry
  /** A router as the policy graph holds it. */
  router(id: string): Router | undefined
  peers: PeerStates
  logger: Logger
  counted: {
    report(outcome: 'added' | 'kept' | 'removed' | 'refused' | 'ignored', n?: number): void
    verification(result: 'verified' | 'unknown' | 'unenrolled' | 'disabled' | 'mismatch'): void
  }
}

/** Whether `router` is still its router's current connection here (a displaced one's reports are ignored). */
export const isCurrent = (ctx: Pick<LinksContext, 'registry'>, router: ConnectedRouter): boolean =>
  ctx.registry.get(router.id) === router && !router.channel.isClosed
