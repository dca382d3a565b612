/**
 * The commands that speak to a running controller: where it is (`--url`, default the configured advertise address),
 * which CA to trust (`--ca FILE`, default the data directory's root CA when it exists), and an admin session from
 * `--username`/`--password` or EDGEPLANE_USERNAME/EDGEPLANE_PASSWORD (then EDGEPLANE_ADMIN_USERNAME/_PASSWORD).
 * Rules: HTTPS only; the password is never printed; a refused call prints the controller's error code and message.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defaultAdvertise, formatHostPort, resolveConfig, type ConfigFlags } from '../config/config.ts'
import { callJson } from '../lib/json-call.ts'

/** The flags every controller command takes. */
export const SESSION_OPTIONS = {
  url: { type: 'string' },
  ca: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  config: { type: 'string' },
  data: { type: 'string' },
} as const

export const SESSION_HELP = `  --url URL               controller address (default: https://<advertise address> of the configuration)
  --ca FILE               CA certificate to trust (default: <data>/pki/root-ca.cert.pem when it exists)
  --username NAME         admin username   EDGEPLANE_USERNAME, then EDGEPLANE_ADMIN_USERNAME (default admin)
  --password PASS         admin password   EDGEPLANE_PASSWORD, then EDGEPLANE_ADMIN_PASSWORD
  --config FILE, --data DIR   where to read the default address and CA from (as for 'run')
`

export class CliError extends Error {}

export interface CliIo {
  stdout(s: string): void
  stderr(s: string): void
  readStdin(): Promise<string>
  env: Record<string, string | undefined>
  /** Whether stdout is a terminal (colours). */
  isTty: boolean
}

export interface ManagementSession {
  get(path: string): Promise<unknown>
  post(path: string, body: unknown): Promise<unknown>
}

/** Logs in as an admin on the Management API and answers a client of it. */
export async function openSession(values: Record<string, unknown>, env: CliIo['env']): Promise<ManagementSession> {
  const flags: ConfigFlags = { config: (values.config as string | undefined) ?? env.EDGEPLANE_CONFIG, data: values.data as string | undefined }
  const config = resolveConfig(flags, env)
  const url = ((values.url as string | undefined) ?? `https://${formatHostPort(config.advertise ?? defaultAdvertise({ host: config.listenHost, port: config.listenPort }))}`).replace(/\/+$/, '')
  const caFile = (values.ca as string | undefined) ?? join(config.dataDir, 'pki', 'root-ca.cert.pem')
  if (values.ca !== undefined && !existsSync(caFile)) throw new CliError(`--ca ${caFile}: no such file`)
  const tls = existsSync(caFile) ? { ca: readFileSync(caFile, 'utf8') } : undefined
  const username = (values.username as string | undefined) ?? env.EDGEPLANE_USERNAME ?? env.EDGEPLANE_ADMIN_USERNAME ?? 'admin'
  const password = (values.password as string | undefined) ?? env.EDGEPLANE_PASSWORD ?? env.EDGEPLANE_ADMIN_PASSWORD
  if (!password) throw new CliError('an admin password is needed: --password or EDGEPLANE_PASSWORD')
  const api = `${url}/edge/management/v1`
  const call = async (method: string, path: string, body?: unknown, token?: string): Promise<unknown> => {
    let answer: Awaited<ReturnType<typeof callJson>>
    try {
      answer = await callJson(`${api}${path}`, method, { token, body, tls })
    } catch (e) {
      throw new CliError(`cannot reach ${url}: ${(e as Error).message}`)
    }
    if (answer.status < 200 || answer.status > 299) {
      const err = answer.envelope?.error
      const cause = err?.cause ? ` (${JSON.stringify(err.cause)})` : ''
      throw new CliError(`${method} ${path}: ${answer.status} ${err?.code ?? ''} ${err?.message ?? ''}${cause}`.trim())
    }
    return answer.envelope?.data
  }
  const login = (await call('POST', '/authenticate?method=password', { username, password })) as { token: string }
  return {
    get: (path) => call('GET', path, undefined, login.token),
    post: (path, body) => call('POST', path, body, login.token),
  }
}

/** The id of the one entity of a list named `name` (an id is accepted too). */
export async function idByName(session: ManagementSession, list: string, noun: string, name: string): Promise<{ id: string; name: string }> {
  const byName = (await session.get(`${list}?filter=${encodeURIComponent(`name="${name.replace(/"/g, '\\"')}"`)}&limit=2`)) as { id: string; name: string }[]
  if (byName.length === 1) return byName[0]!
  const byId = (await session.get(`${list}?filter=${encodeURIComponent(`id="${name.replace(/"/g, '\\"')}"`)}&limit=2`)) as { id: string; name: string }[]
  if (byId.length === 1) return byId[0]!
  throw new CliError(`no ${noun} named '${name}'`)
}
