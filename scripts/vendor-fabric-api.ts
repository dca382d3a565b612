/**
 * Vendors the official fabric API swagger 2.0 document (controller/specs/swagger.yml of openziti/ziti, basePath
 * /fabric/v1) into test/fixtures/fabric-api/fabric.json, in the same compact form as the edge-api documents
 * (scripts/vendor-edge-api.ts `renderCompactSpec`: the contract without the prose, shared `parameters` and
 * `responses` kept and named by `$ref` as upstream has them). The spec check of the tests (test/support/spec-check.ts)
 * reads it. The commit and license are in SOURCE beside it.
 *
 *   bun run scripts/vendor-fabric-api.ts DIR           rewrite fabric.json from DIR's swagger.yml
 *   bun run scripts/vendor-fabric-api.ts --check DIR   compare only: exit 1 when the vendored file differs
 *
 * DIR is a checkout of openziti/ziti at the commit SOURCE names (the document is its controller/specs/swagger.yml), or
 * any folder holding swagger.yml. Nothing is read from outside the repository unless DIR says so.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderCompactSpec } from './vendor-edge-api.ts'

/** Where the vendored file is committed. */
export const FABRIC_VENDORED_DIR = join(import.meta.dir, '..', 'test', 'fixtures', 'fabric-api')
export const FABRIC_VENDORED_FILE = join(FABRIC_VENDORED_DIR, 'fabric.json')

/** The upstream document in DIR: a checkout of openziti/ziti, or a folder holding swagger.yml; undefined when neither. */
export function fabricUpstreamIn(dir: string): string | undefined {
  return [join(dir, 'controller', 'specs', 'swagger.yml'), join(dir, 'swagger.yml')].find((p) => existsSync(p))
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const check = args[0] === '--check'
  const dir = check ? args[1] : args[0]
  if (!dir || args.length !== (check ? 2 : 1)) {
    console.error('usage: bun run scripts/vendor-fabric-api.ts [--check] DIR   (DIR: a checkout of openziti/ziti, or a folder holding swagger.yml)')
    process.exit(2)
  }
  const from = fabricUpstreamIn(dir)
  if (!from) {
    console.error(`no controller/specs/swagger.yml or swagger.yml in ${dir}`)
    process.exit(2)
  }
  const text = renderCompactSpec(readFileSync(from, 'utf8'))
  const same = existsSync(FABRIC_VENDORED_FILE) && readFileSync(FABRIC_VENDORED_FILE, 'utf8') === text
  if (check) {
    console.log(`${FABRIC_VENDORED_FILE}: ${same ? 'up to date' : 'differs from what ' + from + ' gives'}`)
    if (!same) process.exit(1)
  } else {
    await Bun.write(FABRIC_VENDORED_FILE, text)
    console.log(`${same ? 'unchanged' : 'wrote'} ${FABRIC_VENDORED_FILE} (${text.length} bytes, from ${from})`)
  }
}
