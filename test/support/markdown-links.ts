// Checks the relative links of Markdown pages as GitHub renders them: every link or image names a file or folder of
// the repository, and every #anchor a heading (or an HTML id) of the page it points to. Pages are read with marked's
// lexer, so links inside code blocks and code spans are not links, and tables, lists, reference links and inline HTML
// are; anchors are made by github-slugger, GitHub's own slug rules (lower case, punctuation dropped, spaces to '-', a
// repeated heading gets -1, -2, ...). Pure: the caller hands in the pages and a way to ask whether a path exists.
import GithubSlugger from 'github-slugger'
import { Lexer, type Token, type Tokens } from 'marked'
import { posix } from 'node:path'

/** What one page offers to links (its anchors) and what it links to. */
export interface PageFacts {
  anchors: Set<string>
  /** Every link and image target, in page order, as written (reference links resolved). */
  targets: string[]
}

/** One broken link, named by the page that holds it and the target as written. */
export interface LinkProblem {
  page: string
  target: string
  reason: string
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }

/** The text a heading shows (GitHub slugs the rendered text, not the Markdown). */
function plainText(tokens: Token[] | undefined): string {
  let out = ''
  for (const t of tokens ?? []) {
    switch (t.type) {
      case 'text':
      case 'escape':
      case 'codespan':
        if ('tokens' in t && t.tokens?.length) out += plainText(t.tokens)
        else out += (t as Tokens.Text).text.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e)
        break
      case 'html':
      case 'image':
      case 'br':
        break
      default:
        out += 'tokens' in t && t.tokens ? plainText(t.tokens) : ''
    }
  }
  return out
}

/** Every token below `tokens`, depth first, with table cells and list items included. */
function* walk(tokens: Token[]): Generator<Token> {
  for (const t of tokens) {
    yield t
    if (t.type === 'table') {
      const table = t as Tokens.Table
      for (const cell of [...table.header, ...table.rows.flat()]) yield* walk(cell.tokens)
    } else if (t.type === 'list') {
      yield* walk((t as Tokens.List).items)
    }
    if ('tokens' in t && t.tokens) yield* walk(t.tokens)
  }
}

/** The anchors and link targets of one Markdown page. */
export function readPage(markdown: string): PageFacts {
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  const targets: string[] = []
  for (const t of walk(new Lexer({ gfm: true }).lex(markdown))) {
    if (t.type === 'heading') anchors.add(slugger.slug(plainText((t as Tokens.Heading).tokens)))
    else if (t.type === 'link' || t.type === 'image') targets.push((t as Tokens.Link).href)
    else if (t.type === 'html') {
      const html = (t as Tokens.HTML).text
      for (const m of html.matchAll(/\b(?:id|name)\s*=\s*"([^"]+)"/g)) anchors.add(m[1])
      for (const m of html.matchAll(/\b(?:href|src)\s*=\s*"([^"]+)"/g)) targets.push(m[1])
    }
  }
  return { anchors, targets }
}

/** A target that leaves the repository's pages: a URL with a scheme (https:, mailto:) or a host (//host). */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')
}

/**
 * The broken relative links of `pages` (paths relative to the repository root, '/'-separated, mapped to their text).
 * `exists(path)` says whether a repository path names a file or folder; a page of `pages` always exists.
 * A #anchor into a Markdown page must be one of its anchors; into any other file only a GitHub line anchor (#L12,
 * #L12-L20) is accepted.
 */
export function findBrokenLinks(pages: Record<string, string>, exists: (path: string) => boolean): LinkProblem[] {
  const facts = new Map(Object.entries(pages).map(([path, text]) => [path, readPage(text)]))
  const anchorsOf = (path: string): Set<string> | undefined => facts.get(path)?.anchors
  const problems: LinkProblem[] = []
  for (const [page, { targets }] of facts) {
    for (const target of targets) {
      if (isExternal(target)) continue
      const hashAt = target.indexOf('#')
      const pathPart = (hashAt === -1 ? target : target.slice(0, hashAt)).replace(/\?.*$/, '')
      const fragment = hashAt === -1 ? undefined : target.slice(hashAt + 1)
      let path: string
      try {
        path = decodeURIComponent(pathPart)
      } catch {
        problems.push({ page, target, reason: 'the path is not valid percent-encoding' })
        continue
      }
      const resolved = path === '' ? page : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(page), path)).replace(/\/$/, '')
      if (resolved === '..' || resolved.startsWith('../')) {
        problems.push({ page, target, reason: 'it points outside the repository' })
        continue
      }
      if (!facts.has(resolved) && !exists(resolved === '' ? '.' : resolved)) {
        problems.push({ page, target, reason: `${resolved} does not exist` })
        continue
      }
      if (fragment === undefined || fragment === '') continue
      const anchors = anchorsOf(resolved)
      if (anchors) {
        if (!anchors.has(fragment)) problems.push({ page, target, reason: `${resolved} has no heading with the anchor #${fragment}` })
      } else if (resolved.endsWith('.md')) {
        problems.push({ page, target, reason: `${resolved} is not among the pages read, so #${fragment} cannot be checked` })
      } else if (!/^L\d+(?:-L\d+)?$/.test(fragment)) {
        problems.push({ page, target, reason: `#${fragment} is not a line anchor, the only kind a non-Markdown file has` })
      }
    }
  }
  return problems
}

/** The pages whose first line does not say whom the page is for (`**For <readers>…**`). */
export function findPagesWithoutAudience(pages: Record<string, string>): string[] {
  return Object.entries(pages)
    .filter(([, text]) => !/^\*\*For [^*\n]+\*\*/.test(text.split('\n', 1)[0]))
    .map(([path]) => path)
}
