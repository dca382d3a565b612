/**
 * One controller of `bun run bench cluster`, in a process of its own (so that its CPU can be read and it can be killed
 * with -9): startServer on 127.0.0.1, a free port, with or without `cluster:` settings. The single node of the
 * comparison runs through this same file without them, so that both sides start the same way and log the same.
 *
 *   bun bench/bench-cluster-node.ts --data DIR --admin-password P [--cluster-endpoints URL,URL --node-name NAME --prefix P]
 *
 * Prints `listening on https://…` on stdout once it answers; the server's log (start-up notes, the cluster's
 * "caught up" line, one line per request) goes to stderr as `edgeplane run` writes it. SIGTERM stops it.
 *
 * A cluster node also keeps every apply lag its log reports (ms from the proposer's clock reading to this node's apply,
 * of commands other nodes proposed: what edgeplane_cluster_apply_lag_seconds is made of, without the histogram's
 * buckets), and on SIGUSR2 prints them as one line `LAGS [..]` on stdout and forgets them. It reaches the log's hook
 * through a private member: bench code only.
 */
import { parseArgs } from 'node:util'
import { startServer } from '../src/server.ts'

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    'admin-password': { type: 'string' },
    'cluster-endpoints': { type: 'string' },
    'node-name': { type: 'string' },
    prefix: { type: 'string' },
  },
})
if (!values.data || !values['admin-password']) {
  process.stderr.write('usage: bun bench/bench-cluster-node.ts --data DIR --admin-password P [--cluster-endpoints URL,URL --node-name NAME --prefix P]\n')
  process.exit(2)
}
const endpoints = values['cluster-endpoints']?.split(',').filter(Boolean)
const server = await startServer({
  dataDir: values.data,
  host: '127.0.0.1',
  port: 0,
  adminUsername: 'admin',
  adminPassword: values['admin-password'],
  catchStrayErrors: true,
  cluster: endpoints?.length ? { endpoints, nodeName: values['node-name'] ?? 'node', prefix: values.prefix } : undefined,
})
const lags: number[] = []
const hooked = server.cluster?.log as unknown as { o?: { onRemoteApplied?: (ms: number) => void } } | undefined
if (hooked?.o) {
  const metric = hooked.o.onRemoteApplied
  hooked.o.onRemoteApplied = (ms) => {
    lags.push(ms)
    metric?.(ms)
  }
}
process.on('SIGUSR2', () => {
  process.stdout.write(`LAGS ${JSON.stringify(lags.splice(0))}\n`)
})
let stopping = false
process.on('SIGTERM', () => {
  if (stopping) return
  stopping = true
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
process.stdout.write(`listening on ${server.url}\n`)
