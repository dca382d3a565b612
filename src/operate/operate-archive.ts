/**
 * The backup archive: a gzipped tar whose first entry is `manifest.json` (format, versions, time, and each file's
 * size, SHA-256 and mode), then the files it lists, each with its mode in the tar header. Reading checks every
 * byte against the manifest and writes nothing the manifest does not name, nowhere outside the target directory.
 * Rules:
 * - the manifest comes first, is at most 1 MiB and matches its schema, or the archive is refused before any write;
 * - a file path is `edgeplane.mdb` or `pki/<name>`: no other directory, no `..`, no links, no duplicates;
 * - every listed file is present with its size and SHA-256; anything else in the archive refuses it;
 * - files are written 0600 and directories 0700, whatever the archive says (the mode is recorded, never widened).
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import tar from 'tar-stream'
import type { Header, Pack } from 'tar-stream'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../store/store-env.ts'

/** What this edgeplane writes in `manifest.format` / `formatVersion`. */
export const ARCHIVE_FORMAT = 'edgeplane-backup'
export const ARCHIVE_FORMAT_VERSION = 1
export const MANIFEST_NAME = 'manifest.json'
const MAX_MANIFEST_BYTES = 1024 * 1024
/** The only paths an archive may hold besides the manifest. */
const FILE_PATH = /^(?:edgeplane\.mdb|pki\/[A-Za-z0-9][A-Za-z0-9._-]{0,200})$/

const ManifestFile = Type.Object({
  path: Type.String({ pattern: FILE_PATH.source }),
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** Octal text, e.g. `0600`. */
  mode: Type.String({ pattern: '^0[0-7]{3}$' }),
})

/** The manifest: what the archive holds and which edgeplane made it. */
export const BackupManifestSchema = Type.Object({
  format: Type.Literal(ARCHIVE_FORMAT),
  formatVersion: Type.Integer({ minimum: 1 }),
  edgeplaneVersion: Type.String(),
  revision: Type.String(),
  /** ISO 8601. */
  createdAt: Type.String(),
  /** The store's schema version (meta `schemaVersion`) at the time of the copy. */
  schemaVersion: Type.Integer({ minimum: 0 }),
  /** Records per sub-database in the copy. */
  counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  files: Type.Array(ManifestFile),
  /** A cluster member's backup: its cluster and the log revision of the copy (a node restored from it catches up from there). */
  cluster: Type.Optional(Type.Object({ id: Type.String(), appliedRevision: Type.Integer({ minimum: 0 }) })),
})
export type BackupManifest = Static<typeof BackupManifestSchema>
export type ManifestFileEntry = Static<typeof ManifestFile>

/** A refusal of an archive (bad format, checksum, version): the message is for the operator. */
export class ArchiveError extends Error {
  override name = 'ArchiveError'
}

/** Size and SHA-256 (hex) of a file, read as a stream. */
export async function hashFile(path: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer)
    size += (chunk as Buffer).length
  }
  return { size, sha256: hash.digest('hex') }
}

/** Octal text of a mode's permission bits, as the manifest records it. */
export function modeText(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`
}

/**
 * Writes `manifest` and then each of its files, read from `sourceDir/<path>`, to `outFile` (which must not exist),
 * mode 0600. Written under a temporary name and renamed, so `outFile` is complete or absent.
 */
export async function writeArchive(outFile: string, manifest: BackupManifest, sourceDir: string): Promise<void> {
  const temp = `${outFile}.${process.pid}.partial`
  const pack = tar.pack()
  const out = createWriteStream(temp, { flags: 'wx', mode: PRIVATE_FILE_MODE })
  const written = pipeline(pack, createGzip(), out)
  try {
    const mtime = new Date(manifest.createdAt)
    await addEntry(pack, { name: MANIFEST_NAME, mode: PRIVATE_FILE_MODE, mtime }, Buffer.from(JSON.stringify(manifest, null, 2)))
    for (const f of manifest.files) {
      await addEntry(pack, { name: f.path, size: f.size, mode: Number.parseInt(f.mode, 8), mtime }, join(sourceDir, f.path))
    }
    pack.finalize()
    await written
    await rename(temp, outFile)
  } catch (e) {
    pack.destroy()
    await written.catch(() => {})
    await rm(temp, { force: true })
    throw e
  }
}

function addEntry(pack: Pack, header: Partial<Header> & Pick<Header, 'name'>, content: Buffer | string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (typeof content !== 'string') {
      pack.entry({ ...header, size: content.length }, content, (err) => (err ? reject(err) : resolve()))
      return
    }
    const entry = pack.entry(header, (err) => (err ? reject(err) : resolve()))
    pipeline(createReadStream(content), entry).catch(reject)
  })
}

/**
 * Extracts `archiveFile` into `targetDir` after `accept(manifest)` returned (it throws to refuse, e.g. a newer
 * schema). Throws ArchiveError on any mismatch; the caller removes what was written.
 */
export async function extractArchive(
  archiveFile: string,
  targetDir: string,
  accept: (manifest: BackupManifest) => void,
): Promise<BackupManifest> {
  const extract = tar.extract()
  const piping = pipeline(createReadStream(archiveFile), createGunzip(), extract)
  // a damaged stream may fail the pipeline while an entry is being written, before `await piping` below: handled
  // here so that it is not an unhandled rejection (it fails the entries too, and so the loop)
  piping.catch(() => {})
  let manifest: BackupManifest | undefined
  const expected = new Map<string, ManifestFileEntry>()
  try {
    for await (const entry of extract) {
      const { name, type } = entry.header
      if (manifest === undefined) {
        if (name !== MANIFEST_NAME || type !== 'file') throw new ArchiveError(`the archive does not start with ${MANIFEST_NAME} (found '${name}'): not an edgeplane backup`)
        manifest = parseManifest(await readSmall(entry, MAX_MANIFEST_BYTES))
        for (const f of manifest.files) {
          if (expected.has(f.path)) throw new ArchiveError(`the manifest lists ${f.path} twice`)
          expected.set(f.path, f)
        }
        accept(manifest)
        continue
      }
      const want = expected.get(name)
      if (type !== 'file' || want === undefined) throw new ArchiveError(`the archive holds '${name}' (${type ?? 'file'}), which its manifest does not list`)
      expected.delete(name)
      await writeChecked(entry, join(targetDir, name), want)
    }
    await piping
  } catch (e) {
    extract.destroy()
    await piping.catch(() => {})
    if (e instanceof ArchiveError) throw e
    throw new ArchiveError(`the archive is damaged or not a gzipped tar: ${(e as Error).message}`)
  }
  if (manifest === undefined) throw new ArchiveError('the archive is empty: not an edgeplane backup')
  if (expected.size > 0) throw new ArchiveError(`the archive is missing ${[...expected.keys()].join(', ')}, which its manifest lists`)
  return manifest
}

function parseManifest(text: string): BackupManifest {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw new ArchiveError(`${MANIFEST_NAME} is not JSON`)
  }
  if (typeof raw === 'object' && raw !== null && (raw as { format?: unknown }).format !== ARCHIVE_FORMAT) {
    throw new ArchiveError(`${MANIFEST_NAME} is not of an edgeplane backup (format '${String((raw as { format?: unknown }).format)}')`)
  }
  if (!Value.Check(BackupManifestSchema, raw)) {
    const err = [...Value.Errors(BackupManifestSchema, raw)][0]
    throw new ArchiveError(`${MANIFEST_NAME}: ${err.path || '/'}: ${err.message}`)
  }
  if (raw.formatVersion > ARCHIVE_FORMAT_VERSION) {
    throw new ArchiveError(`the archive has format version ${raw.formatVersion}, made by edgeplane ${raw.edgeplaneVersion}; this edgeplane reads up to ${ARCHIVE_FORMAT_VERSION}`)
  }
  return raw
}

async function readSmall(entry: AsyncIterable<unknown>, max: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of entry as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > max) throw new ArchiveError(`${MANIFEST_NAME} is larger than ${max} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function writeChecked(entry: AsyncIterable<unknown>, path: string, want: ManifestFileEntry): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE })
  const hash = createHash('sha256')
  let size = 0
  const out = createWriteStream(path, { flags: 'wx', mode: Number.parseInt(want.mode, 8) & PRIVATE_FILE_MODE })
  await pipeline(
    entry,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        hash.update(chunk)
        size += chunk.length
        yield chunk
      }
    },
    out,
  )
  const sha256 = hash.digest('hex')
  if (size !== want.size || sha256 !== want.sha256) {
    throw new ArchiveError(`${want.path} does not match the manifest (size ${size}, SHA-256 ${sha256}; expected size ${want.size}, SHA-256 ${want.sha256})`)
  }
}
