// `edgeplane cluster`'s argument handling (no etcd needed): subcommands, the node name of `remove`, where the etcd
// endpoints and the prefix come from (flag, then environment, then the config file's cluster: section) and the usage
// errors (exit 2 with the help). Also: the meta key names offline tools read are the ones the cluster code writes.
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseClusterArgs, runClusterCommand } from '../../../src/cluster/cluster-command.ts'
import { CLUSTER_ID_KEY } from '../../../src/cluster/cluster-node.ts'
import { APPLIED_KEY } from '../../../src/actors/runtime/actor-runtime.ts'
import { CLUSTER_APPLIED_META_KEY, CLUSTER_ID_META_KEY } from '../../../src/lib/cluster-names.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeplane-cluster-args-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runClusterCommand(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), env })
  return { code, stdout, stderr }
}

describe('edgeplane cluster: arguments', () => {
  it('case=help: no subcommand, help, --help and -h print the help (exit 0)', async () => {
    for (const argv of [[], ['help'], ['--help'], ['status', '--help'], ['remove', '-h']]) {
      const r = await run(argv)
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('edgeplane cluster status')
      expect(r.stdout).toContain('edgeplane cluster remove NAME')
    }
  })

  it('case=status: endpoints from the flag (comma separated or repeated), default prefix, --json', () => {
    expect(parseClusterArgs(['status', '--cluster-endpoints', 'http://a:2379,http://b:2379', '--cluster-endpoints', 'http://c:2379', '--json'], {})).toEqual({
      sub: 'status',
      endpoints: ['http://a:2379', 'http://b:2379', 'http://c:2379'],
      prefix: '/edgeplane',
      dataDir: resolve('./data'),
      json: true,
      force: false,
      name: undefined,
    })
  })

  it('case=precedence: flag, then EDGEPLANE_CLUSTER_* variables, then the config file (also named by EDGEPLANE_CONFIG)', () => {
    const cfg = file('c.yml', 'cluster:\n  endpoints: [http://file:2379]\n  prefix: /file\n')
    const fromFile = parseClusterArgs(['status', '--config', cfg], {})
    expect(fromFile).toMatchObject({ endpoints: ['http://file:2379'], prefix: '/file' })
    expect(parseClusterArgs(['status'], { EDGEPLANE_CONFIG: cfg })).toMatchObject({ endpoints: ['http://file:2379'], prefix: '/file' })
    const env = { EDGEPLANE_CONFIG: cfg, EDGEPLANE_CLUSTER_ENDPOINTS: 'http://env:2379', EDGEPLANE_CLUSTER_PREFIX: '/env' }
    expect(parseClusterArgs(['status'], env)).toMatchObject({ endpoints: ['http://env:2379'], prefix: '/env' })
    expect(parseClusterArgs(['status', '--cluster-endpoints', 'https://flag:2379', '--prefix', '/flag/'], env)).toMatchObject({
      endpoints: ['https://flag:2379'],
      prefix: '/flag',
    })
  })

  it('case=remove: one node name, --force, the member data directory from --data, EDGEPLANE_DATA or the file', () => {
    expect(parseClusterArgs(['remove', 'ctrl-3', '--force', '--cluster-endpoints', 'http://a:2379', '--data', '/srv/ep'], {})).toMatchObject({
      sub: 'remove',
      name: 'ctrl-3',
      force: true,
      dataDir: '/srv/ep',
    })
    expect(parseClusterArgs(['remove', 'ctrl-3', '--cluster-endpoints', 'http://a:2379'], { EDGEPLANE_DATA: '/var/lib/edgeplane' })).toMatchObject({ dataDir: '/var/lib/edgeplane' })
    const cfg = file('d.yml', 'data: /from/file\ncluster:\n  endpoints: [http://file:2379]\n')
    expect(parseClusterArgs(['remove', 'ctrl-3', '--config', cfg], {})).toMatchObject({ dataDir: '/from/file' })
    expect(parseClusterArgs(['remove', '--cluster-endpoints', 'http://a:2379', 'ctrl-3'], {})).toMatchObject({ name: 'ctrl-3', force: false })
  })

  for (const [what, argv, env, message] of [
    ['an unknown subcommand', ['list'], {}, /unknown subcommand 'list'/],
    ['no endpoints anywhere', ['status'], {}, /no etcd endpoints: give --cluster-endpoints/],
    ['an endpoint that is no http URL', ['status', '--cluster-endpoints', 'etcd:2379'], {}, /not an http or https URL|not a URL/],
    ['a bad prefix', ['status', '--cluster-endpoints', 'http://a:2379', '--prefix', 'edgeplane'], {}, /cluster prefix 'edgeplane' is not valid/],
    ['an unknown flag', ['status', '--cluster-endpoints', 'http://a:2379', '--verbose'], {}, /verbose/],
    ['--force on status', ['status', '--cluster-endpoints', 'http://a:2379', '--force'], {}, /force/],
    ['a name on status', ['status', 'ctrl-1', '--cluster-endpoints', 'http://a:2379'], {}, /ctrl-1/],
    ['remove without a name', ['remove', '--cluster-endpoints', 'http://a:2379'], {}, /takes one node name/],
    ['remove with two names', ['remove', 'a', 'b', '--cluster-endpoints', 'http://a:2379'], {}, /takes one node name/],
    ['remove of a name that is no node name', ['remove', 'a/b', '--cluster-endpoints', 'http://a:2379'], {}, /node name 'a\/b' is not valid/],
    ['an unreadable config file', ['status', '--config', join(dir, 'missing.yml')], {}, /cannot read config file/],
  ] as const) {
    it(`case=refuses ${what} (exit 2, the message and the help on stderr)`, async () => {
      const r = await run([...argv], env)
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stderr).toContain('edgeplane cluster status')
      expect(r.stdout).toBe('')
    })
  }

  it('case=meta keys: offline tools read the keys the cluster code writes', () => {
    expect(CLUSTER_ID_META_KEY).toBe(CLUSTER_ID_KEY)
    expect(CLUSTER_APPLIED_META_KEY).toBe(APPLIED_KEY)
  })
})
