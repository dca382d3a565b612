/**
 * State snapshots between members: how a member that fell behind etcd's compaction point gets current again.
 *
 * - Every member serves `GET /cluster/v1/snapshot`: a consistent, compacted copy of its store (`copyStore`: one LMDB
 *   read transaction; the copy holds the applied revision in meta, and no private key: the PKI is outside LMDB).
 * - Only members may ask. A member proves it is one with the data directory's sealing key, which every member shares
 *   (it comes with the backup a member is made from) and nobody else has: header `x-edgeplane-peer` =
 *   `v1.<node>.<ms>.<HMAC-SHA256 of "snapshot\n<node>\n<ms>">`, under a key derived from the sealing key (the sealing key
 *   itself signs nothing). A proof older or newer than a minute is refused; the transport is TLS, checked by the asking
 *   member against the cluster's shared root CA.
 * - At start, a member whose applied revision is below etcd's compaction point (so the log can no longer replay what it
 *   missed) fetches a snapshot from a live member, checks it (the same cluster, a revision at or past the compaction
 *   point), and replaces its store file with it before any actor loads. A data directory restored from a backup that
 *   never joined is refused instead: its operator is told to take a newer backup.
 * Failure story: the snapshot is written beside the store under a temporary name and renamed over it only once
 * complete and checked; a crash before the rename leaves the old store (and the same fetch at the next start), after
 * it the new one. The store is closed during the rename.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { APPLIED_KEY } from '../actors/runtime/actor-runtime.ts'
import { ApiError } from '../errors/api-error.ts'
import { copyStore, openStoreCopy } from '../store/store-copy.ts'
import { sealKeyPathOf } from '../store/store-seal.ts'
import type { Store } from '../store/store-env.ts'

/** The path every member serves its snapshot at (outside the APIs: no session, a member's proof instead). */
export const SNAPSHOT_PATH = '/cluster/v1/snapshot'
export const PEER_HEADER = 'x-edgeplane-peer'
const PROOF_WINDOW_MS = 60_000

/** The key members prove membership with, derived from the data directory's sealing key. */
export function peerSecretOf(dataDir: string): Buffer {
  const sealKey = readFileSync(sealKeyPathOf(dataDir))
  return createHmac('sha256', sealKey).update('edgeplane cluster peer proof v1').digest()
}

const proofMac = (secret: Buffer, node: string, at: number) => createHmac('sha256', secret).update(`snapshot\n${node}\n${at}`).digest('hex')

export function peerProof(secret: Buffer, node: string, now: number): string {
  return `v1.${node}.${now}.${proofMac(secret, node, now)}`
}

/** The asking member's name when the proof is good; undefined otherwise. */
export function checkPeerProof(secret: Buffer, proof: string | null, now: number): string | undefined {
  const m = proof?.match(/^v1\.([A-Za-z0-9._-]{1,63})\.(\d{1,16})\.([0-9a-f]{64})$/)
  if (!m) return undefined
  const [, node, atText, mac] = m
  const at = Number(atText)
  if (Math.abs(now - at) > PROOF_WINDOW_MS) return undefined
  const want = Buffer.from(proofMac(secret, node, at), 'hex')
  return timingSafeEqual(want, Buffer.from(mac, 'hex')) ? node : undefined
}

/** The snapshot route: a member's proof, then the store's copy as one octet stream with its revision in a header. */
export function snapshotRoute(o: { store: Store; secret: Buffer; now: () => number; note: (line: string) => void }): (req: Request) => Promise<Response> {
  return async (req) => {
    const node = checkPeerProof(o.secret, req.headers.get(PEER_HEADER), o.now())
    // the error envelope of every refusal (rendered by the app with the request's id)
    if (!node) throw ApiError.withMessage('UNAUTHORIZED', 'only a member of this cluster may fetch its state')
    const temp = `${o.store.path}.peer-snapshot-${process.pid}-${Date.now()}.tmp`
    try {
      await copyStore(o.store, temp)
      const bytes = readFileSync(temp)
      const revision = revisionOfCopy(temp)
      o.note(`cluster: sent a state snapshot at revision ${revision} (${bytes.length} bytes) to node ${node}`)
      return new Response(bytes, { status: 200, headers: { 'content-type': 'application/octet-stream', 'x-edgeplane-revision': String(revision) } })
    } finally {
      rmSync(temp, { force: true })
      rmSync(`${temp}-lock`, { force: true })
    }
  }
}

/** The applied revision and cluster id recorded in a store file (a copy), read without changing it. */
function revisionOfCopy(path: string): number {
  return readCopyMeta(path).revision
}

function readCopyMeta(path: string): { revision: number; clusterId: string | undefined } {
  const copy = openStoreCopy(path)
  try {
    const meta = copy.db('meta')
    const applied = meta.get(APPLIED_KEY) as { revision?: number } | undefined
    return { revision: applied?.revision ?? 0, clusterId: meta.get('clusterId') as string | undefined }
  } finally {
    void copy.close()
    rmSync(`${path}-lock`, { force: true })
  }
}

/**
 * Fetches a snapshot from the first member of `peers` (API base URLs) that gives one, into a temporary file beside
 * `storePath`; checks it is of `clusterId` and at or past `atLeast`. Answers the file's path and revision.
 */
export async function fetchSnapshot(o: {
  peers: Array<{ name: string; apiUrl: string }>
  secret: Buffer
  nodeName: string
  caPem: string
  storePath: string
  clusterId: string
  atLeast: number
  now: () => number
  note: (line: string) => void
}): Promise<{ path: string; revision: number }> {
  const reasons: string[] = []
  for (const peer of o.peers) {
    const temp = `${o.storePath}.fetched-${Date.now()}.tmp`
    try {
      const res = await fetch(`${peer.apiUrl}${SNAPSHOT_PATH}`, {
        headers: { [PEER_HEADER]: peerProof(o.secret, o.nodeName, o.now()) },
        tls: { ca: o.caPem },
        signal: AbortSignal.timeout(120_000),
      } as RequestInit)
      if (res.status !== 200) throw new Error(`answered ${res.status}`)
      await Bun.write(temp, res)
      const meta = readCopyMeta(temp)
      if (meta.clusterId !== o.clusterId) throw new Error(`its snapshot is of cluster ${meta.clusterId ?? '(none)'}`)
      if (meta.revision < o.atLeast) throw new Error(`its snapshot is at revision ${meta.revision}, below ${o.atLeast}`)
      o.note(`cluster: fetched a state snapshot at revision ${meta.revision} (${statSync(temp).size} bytes) from node ${peer.name}`)
      return { path: temp, revision: meta.revision }
    } catch (e) {
      rmSync(temp, { force: true })
      reasons.push(`${peer.name} (${peer.apiUrl}): ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  throw new Error(`no member gave a usable state snapshot${reasons.length ? `: ${reasons.join('; ')}` : ' (no other member is live)'}`)
}

/** Puts a fetched snapshot in place of the store file (the store must be closed): rename, then the lock file goes. */
export function installSnapshot(snapshotPath: string, storePath: string): void {
  renameSync(snapshotPath, storePath)
  rmSync(`${storePath}-lock`, { force: true })
}
