// The documentation cannot fall behind the code: the README keeps the two set-up commands of a fresh machine and its
// link to the differences; docs/operators/settings.md names every flag of `edgeplane run`, every environment variable
// the configuration reads and every key of the config file (nested keys as `parent.child`); every environment
// variable edgeplane reads is documented somewhere; docs/developers/dependencies.md names every package of
// package.json; docs/api-users/console.md links every screenshot the browser tests write.
import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TSchema } from '@sinclair/typebox'
import { ConfigFileSchema } from '../../../src/config/config.ts'
import { readPage } from '../../support/markdown-links.ts'

const ROOT = join(import.meta.dir, '..', '..', '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const README = read('README.md')
const SETTINGS = read('docs/operators/settings.md')
const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> }

/** Every key path of a TypeBox object schema: `data`, `oidc`, `oidc.enabled`, … */
function keyPaths(schema: TSchema, prefix = ''): string[] {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties
  if (!properties) return []
  return Object.entries(properties).flatMap(([key, sub]) => [`${prefix}${key}`, ...keyPaths(sub, `${prefix}${key}.`)])
}

/** Every page of the documentation, as one text. */
function allDocs(): string {
  let text = README
  for (const path of new Bun.Glob('docs/**/*.md').scanSync({ cwd: ROOT })) text += `\n${read(path)}`
  return text
}

describe('README.md', () => {
  it('holds the two set-up commands of a fresh machine with only Node.js and npm: start on the defaults, run the tests', () => {
    expect(README).toContain('## Set-up on a fresh machine (only Node.js and npm needed)')
    expect(README).toContain('```sh\nnpm install -g bun && bun install && EDGEPLANE_ADMIN_PASSWORD=s3cret-pass bun run src/main.ts run\n```')
    expect(README).toContain('```sh\nnpm install -g bun && bun install && bun run test\n```')
    // `bun run test` is the suite, and `run` with no flag starts on the embedded defaults
    expect(packageJson.scripts.test).toStartWith('bun test')
    expect(read('src/config/config.ts')).toContain("listen: '127.0.0.1:1280'")
  })

  it('links "Differences from the real controller" to the differences page', () => {
    expect(README).toContain('[Differences from the real controller](docs/differences.md)')
  })
})

describe('docs/operators/settings.md', () => {
  it('names every key of the config file, nested keys as parent.child', () => {
    const paths = keyPaths(ConfigFileSchema)
    expect(paths).toContain('loginThrottle.freeFailures')
    expect(paths).toContain('cluster.nodeName')
    const missing = paths.filter((path) => !SETTINGS.includes(`\`${path}\``))
    expect(missing).toEqual([])
  })

  it('names every flag of edgeplane run and every environment variable the configuration reads', () => {
    const mainSource = read('src/main.ts')
    const runOptions = mainSource.slice(mainSource.indexOf('async function run('), mainSource.indexOf('strict: true'))
    const flags = [...runOptions.matchAll(/^\s+'?([a-z][a-z-]*)'?: \{ type: '(?:string|boolean)'/gm)].map((m) => m[1]).filter((f) => f !== 'help')
    expect(flags).toContain('no-console')
    expect(flags.filter((flag) => !SETTINGS.includes(`\`--${flag}`))).toEqual([])
    const envs = new Set([...read('src/config/config.ts').matchAll(/\benv\.(EDGEPLANE_[A-Z_]+)/g)].map((m) => m[1]))
    expect(envs).toContain('EDGEPLANE_CLUSTER_PREFIX')
    expect([...envs, 'EDGEPLANE_CONFIG'].filter((env) => !SETTINGS.includes(`\`${env}`))).toEqual([])
  })
})

describe('the documentation as a whole', () => {
  it('names every environment variable that edgeplane reads anywhere', () => {
    const docs = allDocs()
    const envs = new Set<string>()
    for (const path of new Bun.Glob('src/**/*.ts').scanSync({ cwd: ROOT })) {
      for (const m of read(path).matchAll(/\benv\.(EDGEPLANE_[A-Z_]+)/g)) envs.add(m[1])
    }
    expect(envs).toContain('EDGEPLANE_USERNAME')
    expect([...envs].filter((env) => !docs.includes(env))).toEqual([])
  })
})

describe('docs/developers/dependencies.md', () => {
  it('names every dependency and dev dependency of package.json in the first column of its table', () => {
    const rows = read('docs/developers/dependencies.md')
      .split('\n')
      .filter((line) => line.startsWith('| '))
      .map((line) => line.split('|')[1])
    const named = new Set(rows.flatMap((cell) => cell.replace(/\(dev\)/g, '').split(',').map((name) => name.trim())))
    const packages = [...Object.keys(packageJson.dependencies), ...Object.keys(packageJson.devDependencies)]
    expect(packages.length).toBeGreaterThan(10)
    expect(packages.filter((name) => !named.has(name))).toEqual([])
  })
})

describe('docs/api-users/console.md', () => {
  it('links every screenshot the browser tests write', () => {
    const shots = readdirSync(join(ROOT, 'test', 'screenshots', 'console')).filter((f) => f.endsWith('.png'))
    expect(shots.length).toBeGreaterThan(10)
    const { targets } = readPage(read('docs/api-users/console.md'))
    expect(shots.filter((shot) => !targets.includes(`../../test/screenshots/console/${shot}`))).toEqual([])
  })
})
