// The import DAG of STYLE.md "Layout": lib → errors → {domain, pki → auth} → store → actors → flows → http → boot → server → main;
// control/ (the routers' control channels) sits beside http/: on actors' snapshots and events, used by server;
// cluster/ (the replicated log in etcd) sits beside flows/: on actors, used by server and main (`edgeplane cluster`);
// cli/ (commands that speak HTTPS to a running controller) sits beside main and uses only lib/ and config/.
// Every relative import of a file in src/ must go to a layer its own layer may use.
import { describe, expect, it } from 'bun:test'
import { dirname, join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '..', '..', 'src')

/** Layer of a file: its first folder under src/, or its basename for top-level files; `schemas` is outside src/. */
function layerOf(file: string): string {
  const rel = relative(SRC, file)
  if (rel.startsWith('..')) return rel.includes('schemas') ? 'schemas' : 'outside'
  const parts = rel.split('/')
  return parts.length === 1 ? parts[0].replace(/\.ts$/, '') : parts[0]
}

const ALLOWED: Record<string, readonly string[]> = {
  lib: [],
  version: [],
  errors: ['lib'],
  domain: ['lib', 'errors'],
  pki: ['lib', 'errors'],
  auth: ['lib', 'errors', 'pki'],
  config: ['lib'],
  store: ['lib', 'domain'],
  actors: ['lib', 'errors', 'domain', 'pki', 'store'],
  flows: ['lib', 'errors', 'domain', 'pki', 'auth', 'actors'],
  http: ['lib', 'errors', 'domain', 'actors', 'flows', 'schemas'],
  // the routers' control plane: beside http, on the policy graph's snapshots and events; never http/ or store/
  control: ['lib', 'errors', 'domain', 'pki', 'actors', 'flows'],
  'router-config': ['lib', 'errors', 'pki', 'schemas'], // pki: --check-files parses and verifies certificates and keys
  // a cluster node: the log in etcd, membership, the state digest; config: `edgeplane cluster` reads the cluster: section
  cluster: ['lib', 'errors', 'domain', 'store', 'actors', 'config'],
  console: [], // the web console: the browser app (src/console/app) and its build; on nothing of the server's
  // the stages of startServer (src/boot/), each wiring one concern; server.ts lists them in dependency order
  boot: ['lib', 'errors', 'domain', 'pki', 'auth', 'store', 'actors', 'flows', 'http', 'control', 'config', 'version', 'schemas', 'cluster', 'console'],
  server: ['lib', 'errors', 'domain', 'pki', 'auth', 'store', 'actors', 'flows', 'http', 'control', 'config', 'version', 'schemas', 'cluster', 'console', 'boot'],
  operate: ['lib', 'pki', 'store', 'version', 'domain', 'flows'], // backup, restore, status: offline on a data directory, or a client; restore runs the integrity check's record checks
  cli: ['lib', 'config'],
  main: ['lib', 'config', 'server', 'version', 'router-config', 'operate', 'cli', 'cluster'],
}

describe('architecture', () => {
  it('keeps every import of src/ inside the allowed layers', async () => {
    const violations: string[] = []
    for await (const rel of new Bun.Glob('**/*.ts').scan(SRC)) {
      const file = join(SRC, rel)
      const from = layerOf(file)
      const allowed = ALLOWED[from]
      if (!allowed) {
        violations.push(`${rel}: layer '${from}' is not in the table`)
        continue
      }
      const text = await Bun.file(file).text()
      for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
        const spec = m[1] ?? m[2]
        const to = layerOf(resolve(dirname(file), spec))
        if (to !== from && !allowed.includes(to)) violations.push(`${rel} imports ${spec} (${from} → ${to})`)
      }
    }
    expect(violations).toEqual([])
  })
})
