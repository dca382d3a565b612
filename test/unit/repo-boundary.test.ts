// A clone holds everything its code and tests read (issue 29, part 1): nothing in src/, schemas/, test/, scripts/,
// bench/ or .ci/run reads a file outside the repository, such as the reference folder beside the developers' clones,
// which once hid that the spec check read the official swagger from there. This test scans the tree; `.ci/run` proves
// the same by running the suite in a copy of the clone with nothing beside it.
//
// The rules, applied to code with its comments removed (a comment that cites `../shared/reference/x.md` reads nothing):
//  1. imports: every relative module specifier (static and type-only imports and exports, `import()`, `require`),
//     resolved from the file's folder, stays inside the repository;
//  2. paths built from the file's own location stay inside the repository: `join`/`resolve` of `import.meta.dir`,
//     `import.meta.dirname`, `__dirname`, or of a constant defined that way in the same file, with string segments;
//     `new URL('…', import.meta.url)`; and a template string that starts with `${import.meta.dir}`;
//  3. no code names the places beside a clone on the developers' machines: `../shared`, `../peers`, `shared/reference`,
//     `shared/seeds`, or an absolute path under `/work/` (no clone has them). For shell and Lua files (.ci/run,
//     bench's wrk script) this is the rule, after their `#` and `--` comments are removed.
// Strings that merely look like paths (a fuzz case's `'../../etc'`, a hostile archive entry) are data, not reads, and
// match none of the rules. System files (/proc, /usr/bin/chromium, the temp directory) are the machine, not a folder
// beside the clone, and are allowed. The one file allowed to look outside, and the tests whose examples name such
// places as data, are listed in EXCEPTIONS with their reasons.
import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, extname, join, relative, resolve, sep } from 'node:path'

const ROOT = resolve(import.meta.dir, '..', '..')
const SCANNED = ['src', 'schemas', 'test', 'scripts', 'bench']
const SCANNED_FILES = ['.ci/run']

/**
 * What the rules let pass, by file, with why: the findings listed in `only` (every finding of the file when it has no
 * such list, for this test alone). Each must still be found, so the list cannot go stale.
 */
const EXCEPTIONS: Record<string, { why: string; only?: string[] }> = {
  'test/unit/support/edge-api-vendor.test.ts': {
    why: 'compares the vendored edge-api documents with the upstream ones when they are beside the clone, and skips that comparison when they are not',
    only: ['join(import.meta.dir, "..", "..", "..", "..", "shared", "reference", "edge-api") leaves the repository (../shared/reference/edge-api)'],
  },
  'test/unit/docs/docs-links.test.ts': {
    why: 'its example of a Markdown link that leaves the repository is a page it checks, never a path it reads',
    only: ['names ../shared, a place beside the clone'],
  },
  'test/unit/repo-boundary.test.ts': { why: 'this test: its examples of what the rules find are strings it scans, never paths it reads' },
}

const NAMED_PLACES = ['../shared', '../peers', 'shared/reference', 'shared/seeds', '/work/']

const inside = (path: string): boolean => path === ROOT || path.startsWith(ROOT + sep)

/** Type-only imports and exports, rewritten as value ones so the transpiler's scan lists them too. */
const TYPE_ONLY = /\b(import|export)\s+type\s+(?=[{*]|[A-Za-z_$][\w$]*\s+from\b)/g
/** A macro import's attribute, removed: the transpiler would run the macro (the console's build) instead of reading it. */
const MACRO = /\bwith\s*\{\s*type\s*:\s*['"]macro['"]\s*\}/g
const ANCHORS = ['import.meta.dir', 'import.meta.dirname', '__dirname']
const STRING = String.raw`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`
const CALL = new RegExp(String.raw`\b(join|resolve)\(\s*(import\.meta\.dirname|import\.meta\.dir|__dirname|[A-Za-z_$][\w$]*)((?:\s*,\s*(?:${STRING}))*)\s*[,)]`, 'g')
const CONST = new RegExp(String.raw`\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:join|resolve)\(\s*(import\.meta\.dirname|import\.meta\.dir|__dirname|[A-Za-z_$][\w$]*)((?:\s*,\s*(?:${STRING}))*)\s*\)`, 'g')
const URL_OF_FILE = new RegExp(String.raw`new URL\(\s*(${STRING})\s*,\s*import\.meta\.url\s*\)`, 'g')
const TEMPLATE = /`\$\{(import\.meta\.dirname|import\.meta\.dir|__dirname)\}([^`$]*)/g

const literals = (args: string): string[] => [...args.matchAll(new RegExp(STRING, 'g'))].map((m) => JSON.parse(m[0].startsWith("'") ? `"${m[0].slice(1, -1).replace(/"/g, '\\"')}"` : m[0]) as string)

/** Module specifiers in transpiled code: rule 1 resolves them (src/http/routes/shared/ is a folder of the repository). */
const SPECIFIERS = /\bfrom\s*"(?:[^"\\]|\\.)*"|\bimport\s*"(?:[^"\\]|\\.)*"|\b(?:import|require)\(\s*"(?:[^"\\]|\\.)*"\s*\)/g

function namedPlaces(file: string, code: string): string[] {
  return NAMED_PLACES.filter((p) => code.includes(p)).map((p) => `${file}: names ${p}, a place beside the clone`)
}

/** What in one source file reads outside the repository (`file` is relative to the repository's root). */
export function scanSource(file: string, text: string): string[] {
  const ext = extname(file)
  const dir = dirname(join(ROOT, file))
  if (ext === '.lua') return namedPlaces(file, text.replace(/--.*$/gm, ''))
  if (!['.ts', '.tsx', '.js', '.mjs', '.cjs'].includes(ext)) return namedPlaces(file, stripShellComments(text))
  const loader = ext === '.tsx' ? 'tsx' : ext === '.ts' ? 'ts' : 'js'
  const transpiler = new Bun.Transpiler({ loader })
  const problems: string[] = []
  const leaves = (what: string, to: string): void => {
    if (!inside(to)) problems.push(`${file}: ${what} leaves the repository (${relative(ROOT, to)})`)
  }
  const source = text.replace(/^#!.*/, '').replace(MACRO, '') // a hashbang line is no code either
  for (const imp of transpiler.scanImports(source.replace(TYPE_ONLY, '$1 '))) {
    if (imp.path.startsWith('.')) leaves(`import ${imp.path}`, resolve(dir, imp.path))
    else if (imp.path.startsWith('/')) leaves(`import ${imp.path}`, imp.path)
  }
  const code = transpiler.transformSync(source) // comments and types removed
  const known = new Map<string, string>(ANCHORS.map((a) => [a, dir]))
  for (const m of code.matchAll(CONST)) {
    const base = known.get(m[2])
    if (base !== undefined) known.set(m[1], resolve(base, ...literals(m[3])))
  }
  for (const m of code.matchAll(CALL)) {
    const base = known.get(m[2])
    if (base !== undefined) leaves(`${m[1]}(${m[2]}${m[3]})`, resolve(base, ...literals(m[3])))
  }
  for (const m of code.matchAll(URL_OF_FILE)) leaves(`new URL(${m[1]}, import.meta.url)`, resolve(dir, literals(m[1])[0]))
  for (const m of code.matchAll(TEMPLATE)) leaves(`\`\${${m[1]}}${m[2]}\``, resolve(dir, `.${m[2]}`))
  problems.push(...namedPlaces(file, code.replace(SPECIFIERS, '')))
  return problems
}

/** A shell script without its comments: a `#` that starts a word, outside quotes, to the end of the line. */
function stripShellComments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let quote = ''
      for (let i = 0; i < line.length; i++) {
        const c = line[i]
        if (quote !== '') {
          if (c === quote) quote = ''
          else if (c === '\\' && quote === '"') i++
        } else if (c === "'" || c === '"') quote = c
        else if (c === '\\') i++
        else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i)
      }
      return line
    })
    .join('\n')
}

async function scannedFiles(): Promise<string[]> {
  const files = [...SCANNED_FILES]
  for (const top of SCANNED) {
    for await (const rel of new Bun.Glob('**/*.{ts,tsx,js,mjs,cjs,sh,lua}').scan({ cwd: join(ROOT, top), dot: true })) {
      if (!rel.split('/').includes('node_modules')) files.push(`${top}/${rel}`)
    }
  }
  return files.sort()
}

describe('the repository reads nothing outside itself', () => {
  it('in src/, schemas/, test/, scripts/, bench/ and .ci/run', async () => {
    const files = await scannedFiles()
    expect(files.length).toBeGreaterThan(400)
    const found: string[] = []
    for (const file of files) found.push(...scanSource(file, readFileSync(join(ROOT, file), 'utf8')))
    const excused = (problem: string): boolean =>
      Object.entries(EXCEPTIONS).some(([file, e]) => problem.startsWith(`${file}: `) && (e.only === undefined || e.only.some((o) => problem === `${file}: ${o}`)))
    expect(found.filter((p) => !excused(p))).toEqual([])
    // each exception is still found; otherwise take it off the list
    const unused = Object.entries(EXCEPTIONS).flatMap(([file, e]) =>
      (e.only ?? ['']).filter((o) => !found.some((p) => (o === '' ? p.startsWith(`${file}: `) : p === `${file}: ${o}`))).map((o) => `${file}: ${o}`),
    )
    expect(unused).toEqual([])
  })
})

describe('the scan', () => {
  it('finds a path built from the file\'s folder that climbs out (the spec check\'s old read of ../shared)', () => {
    const old = "export const SPEC_DIR = join(import.meta.dir, '..', '..', '..', 'shared', 'reference', 'edge-api')"
    expect(scanSource('test/support/spec-check.ts', old)).toEqual([
      'test/support/spec-check.ts: join(import.meta.dir, "..", "..", "..", "shared", "reference", "edge-api") leaves the repository (../shared/reference/edge-api)',
    ])
    expect(scanSource('test/support/spec-check.ts', "const d = join(import.meta.dir, '..', 'fixtures', 'edge-api')")).toEqual([])
  })

  it('follows a constant defined from the file\'s folder', () => {
    const text = "const ROOT = resolve(import.meta.dir, '..', '..')\nconst inRepo = join(ROOT, 'src')\nconst out = join(ROOT, '..', 'peers')"
    expect(scanSource('test/unit/x.test.ts', text)).toEqual(['test/unit/x.test.ts: join(ROOT, "..", "peers") leaves the repository (../peers)'])
  })

  it('finds imports, type-only ones too, and URLs and template strings from the file that leave', () => {
    expect(scanSource('test/unit/x.test.ts', "import { a } from '../../../elsewhere/a.ts'")).toEqual(['test/unit/x.test.ts: import ../../../elsewhere/a.ts leaves the repository (../elsewhere/a.ts)'])
    expect(scanSource('test/unit/x.test.ts', "import type { A } from '../../../elsewhere/a.ts'\nlet x: A")).toHaveLength(1)
    expect(scanSource('test/unit/x.test.ts', "export type { A } from '../../../elsewhere/a.ts'")).toHaveLength(1)
    expect(scanSource('scripts/x.ts', "const u = new URL('../../x.json', import.meta.url)")).toHaveLength(1)
    expect(scanSource('scripts/x.ts', "const u = new URL('../schemas/x.json', import.meta.url)")).toEqual([])
    expect(scanSource('bench/x.ts', 'const p = `${import.meta.dir}/../../shared/x`')).toHaveLength(2)
  })

  it('finds the places beside the clone named in code, and not in comments, data or imports that stay inside', () => {
    expect(scanSource('src/http/routes/management/x.ts', "import { updbChangeRoutes } from '../shared/updb-change-routes.ts'\nupdbChangeRoutes()")).toEqual([])
    expect(scanSource('src/x.ts', "const f = readFileSync('../shared/reference/x.yml')")).toHaveLength(2)
    expect(scanSource('src/x.ts', "const f = '/work/peers/ziti'")).toHaveLength(1)
    expect(scanSource('src/x.ts', "/** @see ../shared/reference/oidc-and-ha.md §1 */\n// shared/reference/x.md\nexport const x = 1")).toEqual([])
    expect(scanSource('test/api/x.test.ts', "const hostile = ['../../etc', '../outside.txt']")).toEqual([])
  })

  it('reads shell and Lua without their comments', () => {
    expect(scanSource('.ci/run', '# see ../shared/STYLE.md\necho "#not a comment"\n')).toEqual([])
    expect(scanSource('.ci/run', 'cp ../shared/reference/x .  # copy\n')).toEqual(['.ci/run: names ../shared, a place beside the clone', '.ci/run: names shared/reference, a place beside the clone'])
    expect(scanSource('.ci/run', "echo '# ../shared'\n")).toHaveLength(1)
    expect(scanSource('bench/x.lua', '-- ../shared\nlocal x = 1\n')).toEqual([])
  })
})
