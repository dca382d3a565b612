/**
 * The names a cluster's settings are made of, checked where they are read (config, `edgeplane cluster`) and where
 * they are used (src/cluster/cluster-node.ts): etcd endpoints, node names and the key prefix in etcd.
 */

/** A node name: what `--node-name` may be (it is a key part in etcd and a controller id). */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

/** The key prefix in etcd when none is set: several clusters can share one etcd under different prefixes. */
export const DEFAULT_CLUSTER_PREFIX = '/edgeplane'

/** A key prefix: `/` then path segments of letters, digits, `.`, `_` and `-` (a trailing `/` is dropped). */
const PREFIX_PATTERN = /^(?:\/[A-Za-z0-9._-]+)+$/

/** Why `name` is not a node name, or undefined when it is one. */
export function nodeNameProblem(name: string): string | undefined {
  return NODE_NAME_PATTERN.test(name) ? undefined : `node name '${name}' is not valid: 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit`
}

/** Why `prefix` is not a key prefix, or undefined when it is one. */
export function clusterPrefixProblem(prefix: string): string | undefined {
  return PREFIX_PATTERN.test(prefix.replace(/\/+$/, ''))
    ? undefined
    : `cluster prefix '${prefix}' is not valid: '/' then segments of letters, digits, '.', '_' or '-' (e.g. /edgeplane)`
}

/** The prefix as used in keys: without a trailing `/`. */
export function normalizeClusterPrefix(prefix: string): string {
  return prefix.replace(/\/+$/, '')
}

/**
 * Parses etcd client URLs (a list, or one comma-separated text): each an http(s) URL of a host and port with no path,
 * query or credentials. Returns them without a trailing `/`, or the first problem.
 */
export function parseClusterEndpoints(input: string | readonly string[]): { endpoints: string[] } | { problem: string } {
  const items = (typeof input === 'string' ? input.split(',') : input.flatMap((s) => s.split(','))).map((s) => s.trim()).filter(Boolean)
  if (items.length === 0) return { problem: 'cluster endpoints are empty: give one or more etcd client URLs such as http://10.0.0.1:2379' }
  const endpoints: string[] = []
  for (const item of items) {
    let url: URL
    try {
      url = new URL(item)
    } catch {
      return { problem: `cluster endpoint '${item}' is not a URL such as http://10.0.0.1:2379` }
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `cluster endpoint '${item}' is not an http or https URL` }
    if (url.username || url.password) return { problem: `cluster endpoint '${item}' must not carry credentials` }
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
      return { problem: `cluster endpoint '${item}' must be scheme://host:port with no path, query or fragment` }
    }
    const text = `${url.protocol}//${url.host}`
    if (!endpoints.includes(text)) endpoints.push(text)
  }
  return { endpoints }
}

/**
 * The `meta` keys of a cluster member's store: the cluster's id, and the applied revision written with every applied
 * command ({revision, ...}). Defined here so that offline tools (`edgeplane status`, `backup`) read them without the
 * cluster code; src/cluster/cluster-node.ts and src/actors/runtime/actor-runtime.ts use the same names (a unit test
 * holds them equal).
 */
export const CLUSTER_ID_META_KEY = 'clusterId'
export const CLUSTER_APPLIED_META_KEY = 'clusterApplied'
