// The committed TypeScript of src/control/pb/*.proto is what `bun run proto` makes of them now: regenerated into a
// temporary directory with the same buf and protoc-gen-es, it must match byte for byte (a .proto edited without
// regenerating, or generated code edited by hand, fails here).
import { describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..', '..', '..')
const PB = 'src/control/pb'

describe('src/control/pb', () => {
  it('holds the code `bun run proto` generates from the .proto files', () => {
    const out = mkdtempSync(join(tmpdir(), 'edgeplane-proto-'))
    try {
      const run = Bun.spawnSync(['buf', 'generate', '--template', `${PB}/buf.gen.yaml`, '-o', out], {
        cwd: ROOT,
        env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` },
      })
      expect(run.exitCode, new TextDecoder().decode(run.stderr)).toBe(0)
      for (const file of ['ctrl_pb.ts', 'edge_ctrl_pb.ts', 'metrics_pb.ts']) {
        expect(readFileSync(join(out, PB, file), 'utf8'), `${file} is stale: run bun run proto`).toBe(readFileSync(join(ROOT, PB, file), 'utf8'))
      }
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
