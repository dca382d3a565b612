/**
 * The operator's subcommands: `backup`, `restore`, `status`. Parses their flags and prints what happened.
 * Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 usage error.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { systemClock } from '../lib/clock.ts'
import { backupDataDir } from './operate-backup.ts'
import { OPERATE_HELP } from './operate-help.ts'
import { restoreDataDir } from './operate-restore.ts'
import { clusterLine, readDataDirStatus, readServerStatus, renderDataDirStatus, renderServerStatus } from './operate-status.ts'

export interface OperateIo {
  stdout: (s: string) => void
  stderr: (s: string) => void
  env: Record<string, string | undefined>
}


type Flags = Record<string, string | boolean | undefined>

function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>): Flags {
  return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Flags
}

class UsageError extends Error {}

function required(flags: Flags, name: string): string {
  const v = flags[name]
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`)
  return v
}

export async function runOperateCommand(cmd: 'backup' | 'restore' | 'status', argv: string[], io: OperateIo): Promise<number> {
  try {
    switch (cmd) {
      case 'backup': {
        const f = parse(argv, { data: { type: 'string' }, out: { type: 'string' } })
        const m = await backupDataDir({ dataDir: required(f, 'data'), outFile: required(f, 'out'), now: new Date(systemClock.now()) })
        const bytes = m.files.reduce((n, file) => n + file.size, 0)
        io.stdout(
          `backup written to ${f.out}: schema version ${m.schemaVersion}, ${m.files.length} files (${bytes} bytes before compression)\n` +
            (m.cluster ? `${clusterLine(m.cluster)} (a node restored from it catches up from there)\n` : '') +
            countLines(m.counts),
        )
        return 0
      }
      case 'restore': {
        const f = parse(argv, { from: { type: 'string' }, data: { type: 'string' } })
        const r = await restoreDataDir(required(f, 'from'), required(f, 'data'))
        io.stdout(
          `restored ${f.from} (made ${r.manifest.createdAt} by edgeplane ${r.manifest.edgeplaneVersion}, schema version ${r.manifest.schemaVersion}) into ${f.data}\n` +
            `${r.manifest.files.length} files verified against their SHA-256; store at schema version ${r.schemaVersion}; checks passed\n` +
            (r.manifest.cluster
              ? `${clusterLine(r.manifest.cluster)}: start it with --cluster-endpoints and a --node-name of its own to join (etcd must still hold the log after that revision)\n`
              : '') +
            r.notes.map((n) => `note: ${n}\n`).join('') +
            countLines(r.counts),
        )
        return 0
      }
      case 'status': {
        const f = parse(argv, {
          data: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' }, username: { type: 'string' },
          password: { type: 'string' }, ca: { type: 'string' }, insecure: { type: 'boolean' },
        })
        if ((f.data === undefined) === (f.url === undefined)) throw new UsageError('give exactly one of --data DIR or --url URL')
        if (typeof f.data === 'string') {
          const s = await readDataDirStatus(f.data, systemClock.now())
          io.stdout(f.json ? `${JSON.stringify(s, null, 2)}\n` : renderDataDirStatus(s))
          return s.warnings.length === 0 ? 0 : 1
        }
        const username = (f.username as string | undefined) ?? io.env.EDGEPLANE_USERNAME
        const password = (f.password as string | undefined) ?? io.env.EDGEPLANE_PASSWORD
        if (!username || !password) throw new UsageError('--url needs an admin login: --username/--password or EDGEPLANE_USERNAME/EDGEPLANE_PASSWORD')
        const s = await readServerStatus({
          url: required(f, 'url'), username, password, insecure: f.insecure === true,
          caPem: typeof f.ca === 'string' ? readFileSync(f.ca, 'utf8') : undefined,
        })
        io.stdout(f.json ? `${JSON.stringify(s, null, 2)}\n` : renderServerStatus(s))
        return s.health.healthy ? 0 : 1
      }
    }
  } catch (e) {
    const usage = e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    io.stderr(`edgeplane ${cmd}: ${(e as Error).message}\n${usage ? `\n${OPERATE_HELP}` : ''}`)
    return usage ? 2 : 1
  }
}

function countLines(counts: Record<string, number>): string {
  return `records:\n${Object.entries(counts).map(([k, n]) => `  ${k}: ${n}\n`).join('')}`
}
