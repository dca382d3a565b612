/**
 * What the fabric API's writes may ask of edgeplane beyond the Management API's rules, each refused as 400
 * COULD_NOT_VALIDATE naming the field:
 * - a router's `fingerprint` stays its own: a fabric PUT or PATCH may repeat it ("" for a router without a
 *   certificate, or null in a patch) but not change it; a router's certificate changes by enrollment only (the real
 *   controller writes whatever fingerprint it is given);
 * - a terminator's `hostId` is empty: the identity hosting a terminator is the one whose Bind an edge router relayed,
 *   never an admin's choice;
 * - a snapshot's `path` is empty: snapshots go where the controller writes them (its data directory or the
 *   configured snapshot directory), never to a path a client names.
 * @see ziti controller/internal/routes/fabric_router_api_model.go, fabric_terminator_api_model.go, database_router.go
 */
import { ApiError } from '../../errors/api-error.ts'

export function decideRouterFingerprint(stored: string | null, given: string | null | undefined): void {
  if (given === undefined || given === null || given === (stored ?? '')) return
  throw ApiError.invalidField('fingerprint', "a router's fingerprint changes only when it enrolls (or re-enrolls) with a new certificate", given)
}

export function decideNoHostId(hostId: string | undefined): void {
  if (hostId === undefined || hostId === '') return
  throw ApiError.invalidField('hostId', 'the hosting identity of a terminator is set by its edge router from the Bind it relays, not by an admin', hostId)
}

export function decideSnapshotPath(path: string | undefined): void {
  if (path === undefined || path === '') return
  throw ApiError.invalidField('path', 'snapshots are written to the data directory or the configured snapshot directory; a path cannot be chosen', path)
}
