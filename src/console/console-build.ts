/**
 * Builds the console for the binary. Imported as a macro (`with { type: 'macro' }`), so it runs when edgeplane's code
 * is transpiled (`bun run`, `bun test`) or bundled (`bun build --compile`): `bun build` bundles and minifies the
 * browser app (`app/main.tsx`, Preact), and its output, the stylesheet and the page are inlined into the importing
 * module as strings. Nothing is read from disk at run time, and the binary serves the console offline.
 * Each asset's name carries a hash of its content, so it can be cached for good; the page is not cached.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface ConsoleAsset {
  /** The path under `/console/`. */
  name: string
  contentType: string
  body: string
}

export interface ConsoleBuild {
  index: string
  assets: ConsoleAsset[]
  /** Bytes of script in all (the budget is 200 KiB). */
  scriptBytes: number
}

const hashOf = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12)

export function buildConsole(): ConsoleBuild {
  const dir = join(import.meta.dir, 'app')
  const r = Bun.spawnSync(
    [process.execPath, 'build', join(dir, 'main.tsx'), '--minify', '--target=browser', '--format=esm', '--tsconfig-override', join(dir, 'tsconfig.json')],
    { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } },
  )
  if (r.exitCode !== 0) throw new Error(`the console did not build: ${r.stderr.toString()}`)
  const js = r.stdout.toString()
  const css = readFileSync(join(dir, 'style.css'), 'utf8')
  const script = `app-${hashOf(js)}.js`
  const style = `style-${hashOf(css)}.css`
  const index = readFileSync(join(dir, 'index.html'), 'utf8').replace('__SCRIPT__', `/console/${script}`).replace('__STYLE__', `/console/${style}`)
  return {
    index,
    assets: [
      { name: script, contentType: 'text/javascript; charset=utf-8', body: js },
      { name: style, contentType: 'text/css; charset=utf-8', body: css },
    ],
    scriptBytes: Buffer.byteLength(js),
  }
}
