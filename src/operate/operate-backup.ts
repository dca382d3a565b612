/**
 * `edgeplane backup`: one archive of a data directory, taken while a controller runs on it or not.
 * Rules:
 * - the store is opened read-only and copied in one LMDB read transaction (compacted): a consistent state even under
 *   writes; the controller is never paused;
 * - the PKI files are copied into a private staging directory first, so the manifest's checksums describe exactly
 *   the bytes packed even if a file is replaced meanwhile;
 * - schema version and counts are read from the copy, not the live store;
 * - an existing output file is never overwritten; the archive is 0600 (it holds the CA keys, and the sealing key of the
 *   MFA secrets, `pki/secrets.key`, which the PKI files carry: a restored store is read with it).
 */
import { copyFile, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { pathExists } from '../lib/path-exists.ts'
import { copyStore } from '../store/store-copy.ts'
import { openStore, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, storePathOf } from '../store/store-env.ts'
import { readStoreFacts } from '../store/store-stats.ts'
import { REVISION, VERSION } from '../version.ts'
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, hashFile, modeText, writeArchive, type BackupManifest } from './operate-archive.ts'

/** The PKI directory inside a data directory (as server.ts opens it). */
export const PKI_DIR_NAME = 'pki'
/** Half-written files of the PKI bootstrap: never part of a backup. */
const TEMP_FILE = /\.tmp$/

export interface BackupOptions {
  dataDir: string
  outFile: string
  /** The time written into the manifest. */
  now: Date
}

/** Writes the archive and answers its manifest. */
export async function backupDataDir(opts: BackupOptions): Promise<BackupManifest> {
  const dataDir = resolve(opts.dataDir)
  const outFile = resolve(opts.outFile)
  if (await pathExists(outFile)) throw new Error(`${outFile} exists already; choose a new file name (a backup never overwrites)`)
  if (!(await pathExists(storePathOf(dataDir)))) throw new Error(`${dataDir} holds no edgeplane data (no ${storePathOf(dataDir)})`)
  await mkdir(dirname(outFile), { recursive: true, mode: PRIVATE_DIR_MODE })
  // beside the output: same filesystem, and never inside the data directory being copied
  const staging = await mkdtemp(join(dirname(outFile), '.edgeplane-backup-'))
  try {
    const live = await openStore(dataDir, { readOnly: true })
    try {
      await copyStore(live, storePathOf(staging))
    } finally {
      await live.close()
    }
    // a cluster member's id and applied revision are in meta, so the copy carries them; the manifest tells them
    const { schemaVersion, counts, cluster } = await readStoreFacts(staging)
    const paths = ['edgeplane.mdb', ...(await copyPkiFiles(join(dataDir, PKI_DIR_NAME), join(staging, PKI_DIR_NAME)))]
    const files = []
    for (const path of paths) {
      const { size, sha256 } = await hashFile(join(staging, path))
      // the owner's bits as they are (0600, or 0400 for a key made read-only); never group or others
      const mode = (await lstat(join(staging, path))).mode & PRIVATE_FILE_MODE
      files.push({ path, size, sha256, mode: modeText(mode) })
    }
    const manifest: BackupManifest = {
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      edgeplaneVersion: VERSION,
      revision: REVISION,
      createdAt: opts.now.toISOString(),
      schemaVersion,
      counts,
      files,
      ...(cluster ? { cluster } : {}),
    }
    await writeArchive(outFile, manifest, staging)
    return manifest
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** Copies the regular files of the PKI directory (not its temporaries); answers their archive paths. */
async function copyPkiFiles(from: string, to: string): Promise<string[]> {
  if (!(await pathExists(from))) return []
  await mkdir(to, { mode: PRIVATE_DIR_MODE })
  const paths: string[] = []
  for (const name of (await readdir(from)).sort()) {
    if (TEMP_FILE.test(name) || !(await lstat(join(from, name))).isFile()) continue
    await copyFile(join(from, name), join(to, name))
    paths.push(`${PKI_DIR_NAME}/${name}`)
  }
  return paths
}
