// The documentation's links hold: every relative link and #anchor of README.md, docs/**/*.md and the folder READMEs
// resolves as GitHub resolves it, and every page of README.md and docs/ says in its first line whom it is for.
// The checker itself (test/support/markdown-links.ts) is proved on small pages first: it must find what is broken.
import { describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { findBrokenLinks, findPagesWithoutAudience, readPage } from '../../support/markdown-links.ts'

const ROOT = join(import.meta.dir, '..', '..', '..')

/** Every Markdown file of the repository's own tree (not node_modules, dist or data). */
function repositoryPages(): Record<string, string> {
  const pages: Record<string, string> = {}
  for (const pattern of ['README.md', 'docs/**/*.md', 'src/**/*.md', 'bench/**/*.md', 'test/**/*.md', 'packaging/**/*.md', 'scripts/**/*.md', 'schemas/**/*.md']) {
    for (const path of new Bun.Glob(pattern).scanSync({ cwd: ROOT })) pages[path.split('\\').join('/')] = readFileSync(join(ROOT, path), 'utf8')
  }
  return pages
}

const exists = (path: string) => existsSync(join(ROOT, path))

describe('the link checker', () => {
  const none = () => false

  it('makes anchors as GitHub does: lower case, punctuation and formatting dropped, repeats numbered', () => {
    const { anchors } = readPage(
      '# Set-up on a fresh machine (only Node.js and npm needed)\n\n## `edgeplane cluster status` and `remove`\n\n' +
        '## Policy insight: why not, and what if\n\n### Cluster\n\n### Cluster\n\n### Cluster\n\n## **Bold** _and_ [a link](x.md)\n',
    )
    expect([...anchors]).toEqual([
      'set-up-on-a-fresh-machine-only-nodejs-and-npm-needed',
      'edgeplane-cluster-status-and-remove',
      'policy-insight-why-not-and-what-if',
      'cluster',
      'cluster-1',
      'cluster-2',
      'bold-and-a-link',
    ])
  })

  it('finds links in text, lists, tables, images, reference definitions and HTML, and none in code', () => {
    const { targets } = readPage(
      'See [a](a.md) and `[not](code.md)`.\n\n- [b](b.md#x)\n  - ![c](c.png)\n\n| x | y |\n|---|---|\n| [d](d.md) | z |\n\n' +
        '[e][ref]\n\n[ref]: e.md#y\n\n<a href="f.md">f</a>\n\n```sh\n[g](g.md)\n```\n',
    )
    expect(targets).toEqual(['a.md', 'b.md#x', 'c.png', 'd.md', 'e.md#y', 'f.md'])
  })

  it('accepts links that resolve: files, folders, pages, anchors of this page and of another, external URLs', () => {
    const pages = {
      'README.md': '# Top\n\n[guide](docs/guide.md#second-part) [self](#top) [dir](docs/) [img](pic.png) [web](https://example.com/x#y) [mail](mailto:a@b)\n',
      'docs/guide.md': '# Guide\n\n## Second part\n\n[back](../README.md#top) [line](../src/a.ts#L10-L12) [root](/README.md)\n',
    }
    const files = new Set(['pic.png', 'src/a.ts', 'docs'])
    expect(findBrokenLinks(pages, (p) => files.has(p))).toEqual([])
  })

  it('reports a missing file, a missing anchor, a path outside the repository and a bad anchor into a source file', () => {
    const pages = {
      'README.md': '# Top\n\n[gone](docs/gone.md) [anchor](docs/guide.md#no-such-part) [here](#nowhere) [out](../shared/STYLE.md)\n',
      'docs/guide.md': '# Guide\n\n## Second part\n\n[src](../src/a.ts#intro)\n',
    }
    const problems = findBrokenLinks(pages, (p) => p === 'src/a.ts')
    expect(problems.map((p) => `${p.page} ${p.target}`)).toEqual([
      'README.md docs/gone.md',
      'README.md docs/guide.md#no-such-part',
      'README.md #nowhere',
      'README.md ../shared/STYLE.md',
      'docs/guide.md ../src/a.ts#intro',
    ])
    expect(problems[1].reason).toContain('no heading with the anchor #no-such-part')
  })

  it('numbers repeated headings: #notes-1 is the second Notes, #notes-2 does not exist', () => {
    const pages = { 'a.md': '# A\n\n## Notes\n\n## Notes\n\n[one](#notes-1) [two](#notes-2)\n' }
    expect(findBrokenLinks(pages, none).map((p) => p.target)).toEqual(['#notes-2'])
  })

  it('reports a page whose first line does not say whom it is for', () => {
    expect(findPagesWithoutAudience({ 'a.md': '**For operators:** how to run it.\n\n# A\n', 'b.md': '# B\n\nFor everyone.\n' })).toEqual(['b.md'])
  })
})

describe('the repository documentation', () => {
  const pages = repositoryPages()

  it('reads README.md, the docs pages for every reader, and the folder READMEs', () => {
    const paths = Object.keys(pages)
    expect(paths).toContain('README.md')
    expect(paths).toContain('docs/README.md')
    expect(paths).toContain('docs/differences.md')
    for (const reader of ['operators', 'api-users', 'developers']) expect(paths.some((p) => p.startsWith(`docs/${reader}/`))).toBe(true)
    expect(paths).toContain('src/store/README.md')
  })

  it('has no broken relative link or #anchor', () => {
    expect(findBrokenLinks(pages, exists)).toEqual([])
  })

  it('says in the first line of README.md and of every docs page whom it is for', () => {
    const readerPages = Object.fromEntries(Object.entries(pages).filter(([p]) => p === 'README.md' || p.startsWith('docs/')))
    expect(findPagesWithoutAudience(readerPages)).toEqual([])
  })

  it('lists every docs page in the index docs/README.md', () => {
    const { targets } = readPage(pages['docs/README.md'])
    const linked = new Set(targets.map((t) => join('docs', t.split('#')[0]).split('\\').join('/')))
    for (const path of Object.keys(pages).filter((p) => p.startsWith('docs/') && p !== 'docs/README.md')) expect(linked).toContain(path)
  })
})
