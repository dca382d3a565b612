/**
 * The digest of a node's replicated state: SHA-256 over every record of every sub-database but `meta`, in key order,
 * as the node's store reads it (sealed MFA records opened: their nonces differ per node, their content does not),
 * with the applied revision read in the same read transaction. Two nodes at the same revision have the same digest,
 * or their states differ (`GET /cluster` `digest`, the cluster tests).
 */
import { createHash } from 'node:crypto'
import { APPLIED_KEY } from '../actors/runtime/actor-runtime.ts'
import { SUB_DBS, type SubDbName } from '../store/store-catalogue.ts'
import type { Store } from '../store/store-env.ts'

export interface StateDigest {
  revision: number
  digest: string
  records: number
}

/** Synchronous on purpose: every read runs in one event turn, so in the one read transaction lmdb-js keeps for it. */
export function stateDigest(store: Store): StateDigest {
  const applied = store.db('meta').get(APPLIED_KEY) as { revision?: number } | undefined
  const hash = createHash('sha256')
  let records = 0
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
    if (name === 'meta' || !store.has(name)) continue
    hash.update(`\u0000${name}\u0000`)
    for (const { key, value } of store.db(name).getRange()) {
      hash.update(`${key}\u0001${JSON.stringify(value)}\u0002`)
      records++
    }
  }
  return { revision: applied?.revision ?? 0, digest: hash.digest('hex'), records }
}
