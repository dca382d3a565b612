/**
 * Refreshes the console screenshots committed in test/screenshots/console/ (docs/api-users/console.md links to them):
 * runs the browser tests (test/browser/) with EDGEPLANE_SCREENSHOTS pointing there. `bun run test` writes the same
 * screenshots into the ignored test/output/screenshots/console/ instead, so a test run never changes the tree.
 *
 *   bun run screenshots
 *
 * Needs chromium (`apt-get install chromium`, or EDGEPLANE_CHROMIUM=/path/to/chrome); without it the browser tests
 * skip and this fails. Fails too when a test fails, and names each committed screenshot that no test wrote this time
 * (a renamed or removed one: delete it, and its link).
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const COMMITTED = join(ROOT, 'test', 'screenshots', 'console')

const started = Date.now()
const run = Bun.spawnSync(['bun', 'test', '--timeout', '30000', 'test/browser'], {
  cwd: ROOT,
  env: { ...process.env, EDGEPLANE_SCREENSHOTS: COMMITTED },
  stdio: ['ignore', 'inherit', 'inherit'],
})

const pngs = readdirSync(COMMITTED).filter((f) => f.endsWith('.png')).sort()
// a file's mtime has a coarser clock than Date.now() on some file systems: a second of slack
const written = pngs.filter((f) => statSync(join(COMMITTED, f)).mtimeMs >= started - 1000)
const stale = pngs.filter((f) => !written.includes(f))

let failed = run.exitCode !== 0
if (failed) console.error(`\nthe browser tests failed (exit code ${run.exitCode}): the screenshots are not all refreshed`)
if (written.length === 0) {
  console.error('no screenshot was written: is chromium installed? (apt-get install chromium, or set EDGEPLANE_CHROMIUM)')
  failed = true
} else {
  console.log(`\n${written.length} screenshots refreshed in test/screenshots/console/`)
}
if (stale.length > 0 && written.length > 0) {
  console.error(`not written by any test this time (remove them and their links if no test takes them any more):\n  ${stale.join('\n  ')}`)
  failed = true
}
process.exit(failed ? 1 : 0)
