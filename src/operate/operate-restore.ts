/**
 * `edgeplane restore`: a backup archive into a new data directory, checked before anything is trusted.
 * Rules:
 * - the target is absent or an empty directory; anything else is refused before a byte is written;
 * - the archive must carry the whole controller PKI, and from schema 4 on the sealing key (store/store-seal.ts); a store of a newer schema than this binary's is refused from the
 *   manifest, before any file is written; an older one is migrated by opening it (the numbered migrations);
 * - every file is checked against the manifest's size and SHA-256, then the restored data is checked
 *   (`checkRestoredData`); on any failure everything written is removed again and nothing is left half-restored;
 * - the restored directory is 0700, its files 0600.
 */
import { hostname } from 'node:os'
import { chmod, mkdir, readdir, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { systemClock } from '../lib/clock.ts'
import { pathExists } from '../lib/path-exists.ts'
import { CONTROLLER_PKI_FILES, ensureControllerPki } from '../pki/pki-bootstrap.ts'
import { SUB_DBS, type SubDbName } from '../store/store-catalogue.ts'
import { makePrivate, openStore, PRIVATE_DIR_MODE, type Store } from '../store/store-env.ts'
import { SCHEMA_VERSION, SEALED_SCHEMA_VERSION } from '../store/store-migrations.ts'
import { SEAL_KEY_FILE } from '../store/store-seal.ts'
import { countRecords, schemaVersionOf } from '../store/store-stats.ts'
import type { StoredRecords } from '../domain/integrity/integrity-records.ts'
import { checkStoredRecords } from '../flows/integrity/integrity-checks.ts'
import { ArchiveError, extractArchive, type BackupManifest } from './operate-archive.ts'
import { PKI_DIR_NAME } from './operate-backup.ts'

export interface RestoreReport {
  manifest: BackupManifest
  /** Schema version after the migrations (this binary's). */
  schemaVersion: number
  /** Records per sub-database as restored (after migrations). */
  counts: Record<string, number>
  /** Lines about what the checks found worth telling (never a failure: failures throw). */
  notes: string[]
}

/** Refuses a manifest this binary cannot restore. */
export function decideRestorable(manifest: BackupManifest): void {
  if (manifest.schemaVersion > SCHEMA_VERSION) {
    throw new ArchiveError(
      `the backup has store schema version ${manifest.schemaVersion} (made by edgeplane ${manifest.edgeplaneVersion}); ` +
        `this edgeplane understands up to ${SCHEMA_VERSION}: restore it with edgeplane ${manifest.edgeplaneVersion} or newer`,
    )
  }
  const paths = new Set(manifest.files.map((f) => f.path))
  // from schema 4 on the store's MFA secrets are sealed with the key beside the PKI: without it they cannot be read
  // (an older backup has none: restoring it makes one, and the migration seals its secrets)
  const sealKey = manifest.schemaVersion >= SEALED_SCHEMA_VERSION ? [`${PKI_DIR_NAME}/${SEAL_KEY_FILE}`] : []
  const required = ['edgeplane.mdb', ...Object.values(CONTROLLER_PKI_FILES).map((f) => `${PKI_DIR_NAME}/${f}`), ...sealKey]
  const missing = required.filter((p) => !paths.has(p))
  if (missing.length > 0) throw new ArchiveError(`the backup lacks ${missing.join(', ')}: it cannot start a controller`)
}

export async function restoreDataDir(archiveFile: string, dataDir: string): Promise<RestoreReport> {
  const target = resolve(dataDir)
  const archive = resolve(archiveFile)
  if (!(await pathExists(archive))) throw new Error(`${archive} does not exist`)
  const created = !(await pathExists(target))
  if (!created && (await readdir(target).catch(() => null))?.length !== 0) {
    throw new Error(`${target} is not an empty directory; restore only into a new or empty one`)
  }
  await mkdir(target, { recursive: true, mode: PRIVATE_DIR_MODE })
  try {
    await chmod(target, PRIVATE_DIR_MODE)
    const manifest = await extractArchive(archive, target, decideRestorable)
    makePrivate(target)
    const notes: string[] = []
    const store = await openStore(target, { warn: (line) => notes.push(line) })
    try {
      const schemaVersion = schemaVersionOf(store)
      if (manifest.schemaVersion < schemaVersion) notes.push(`migrated the store from schema version ${manifest.schemaVersion} to ${schemaVersion}`)
      notes.push(...(await checkRestoredData(store, join(target, PKI_DIR_NAME))))
      return { manifest, schemaVersion, counts: countRecords(store), notes }
    } finally {
      await store.close()
    }
  } catch (e) {
    if (created) await rm(target, { recursive: true, force: true })
    else for (const name of await readdir(target)) await rm(join(target, name), { recursive: true, force: true })
    throw e
  }
}

/** At most this many findings of the integrity check are named in a refused restore's message. */
const FINDINGS_SHOWN = 5

/**
 * The consistency check of a restored directory: every record of every sub-database is read and decoded, the stored
 * records pass the data-integrity check's record checks (references between records, unique names and values: what
 * POST /database/check-data-integrity finds in the store; the derived in-memory indexes are rebuilt at start), and the
 * controller PKI loads (each certificate parses, each key matches its certificate, the chain verifies). Any finding
 * refuses the restore rather than start a controller on damaged data.
 */
export async function checkRestoredData(store: Store, pkiDir: string): Promise<string[]> {
  const records = {} as Record<SubDbName, Map<string, unknown>>
  for (const name of Object.keys(SUB_DBS) as SubDbName[]) {
    const table = new Map<string, unknown>()
    for (const { key, value } of store.db(name).getRange()) {
      if (value === undefined || value === null) throw new Error(`sub-db ${name}: record ${String(key)} is empty`)
      table.set(String(key), value)
    }
    records[name] = table
  }
  const findings = checkStoredRecords(records as StoredRecords)
  if (findings.length > 0) {
    const shown = findings.slice(0, FINDINGS_SHOWN).map((f) => f.description).join('; ')
    const more = findings.length > FINDINGS_SHOWN ? ` and ${findings.length - FINDINGS_SHOWN} more` : ''
    throw new Error(`the backup's data fails the integrity check (${findings.length} finding${findings.length === 1 ? '' : 's'}): ${shown}${more}`)
  }
  const pki = await ensureControllerPki(pkiDir, { hostname: hostname(), extraSans: [], clock: systemClock })
  if (pki.created.length > 0) throw new Error(`the backup's PKI was incomplete (${pki.created.join(', ')} missing)`)
  return []
}
