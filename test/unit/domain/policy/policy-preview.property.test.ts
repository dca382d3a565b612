/**
 * Policy previews, checked as the issue states: random change → preview → apply → the difference between the index
 * before and after (every identity × service, brute force over the reads) equals the preview, row for row; and the
 * previewed index is left as it was.
 */
import { describe, expect, test } from 'bun:test'
import { PolicyIndex } from '../../../../src/domain/policy/policy-index.ts'
import { previewIndexChange, type IndexPreview } from '../../../../src/domain/policy/policy-preview.ts'
import { applyToIndex, applyToModel, Model, randomOp, rng } from './policy-model.ts'

/** Every row a preview stands for, as sorted strings. */
function previewRows(p: IndexPreview): string[] {
  const rows: string[] = []
  for (const d of p.access) for (const i of d.identities.ids()) for (const s of d.services.ids()) rows.push(`${i} ${s} ${d.permission} ${d.change}`)
  for (const l of p.routerLosses) for (const i of l.identities.ids()) for (const s of l.services.ids()) rows.push(`${i} ${s} routers lost`)
  return rows.sort()
}

type Snapshot = Map<string, { perms: readonly string[]; routers: number }>

function snapshot(ix: PolicyIndex, identities: readonly string[], services: readonly string[]): Snapshot {
  const out: Snapshot = new Map()
  for (const i of identities) for (const s of services) out.set(`${i} ${s}`, { perms: [...ix.permissionsOf(i, s)], routers: ix.routersFor(i, s).length })
  return out
}

function difference(b: Snapshot, a: Snapshot): string[] {
  const rows: string[] = []
  for (const key of new Set([...b.keys(), ...a.keys()])) {
    const x = b.get(key) ?? { perms: [], routers: 0 }
    const y = a.get(key) ?? { perms: [], routers: 0 }
    for (const p of ['Dial', 'Bind']) {
      if (x.perms.includes(p) && !y.perms.includes(p)) rows.push(`${key} ${p} lost`)
      if (!x.perms.includes(p) && y.perms.includes(p)) rows.push(`${key} ${p} gained`)
    }
    if (x.perms.length > 0 && y.perms.length > 0 && x.routers > 0 && y.routers === 0) rows.push(`${key} routers lost`)
  }
  return rows.sort()
}

describe('policy preview', () => {
  for (const seed of [11, 12, 13, 14, 15, 16]) {
    test(`case=seed ${seed}: a preview equals the difference its change makes when applied`, () => {
      const [r, m, ix] = [rng(seed), new Model(), new PolicyIndex()]
      const keys = (kind: 'identity' | 'service') => [...m.entities.get(kind)!.keys()]
      for (let step = 0; step < 200; step++) {
        const o = randomOp(m, r)
        const dumpBefore = JSON.stringify(ix.dump())
        const preview = previewIndexChange(ix, o)
        expect(JSON.stringify(ix.dump())).toBe(dumpBefore)
        // a preview shares member sets with the index: read it before the index changes
        const rows = previewRows(preview)
        const [idsBefore, svcsBefore] = [keys('identity'), keys('service')]
        applyToModel(m, o)
        const allIds = [...new Set([...idsBefore, ...keys('identity')])]
        const allSvcs = [...new Set([...svcsBefore, ...keys('service')])]
        const before = snapshot(ix, allIds, allSvcs)
        applyToIndex(ix, o, 1_000 + step)
        const where = `seed ${seed} step ${step} ${JSON.stringify(o)}`
        const expected = difference(before, snapshot(ix, allIds, allSvcs))
        expect({ where, rows }).toEqual({ where, rows: expected })
        const t = preview.totals
        expect(t.dialGained + t.dialLost + t.bindGained + t.bindLost + t.routersLost).toBe(expected.length)
      }
    }, 60_000)
  }
})
