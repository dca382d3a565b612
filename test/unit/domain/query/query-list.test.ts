// Paging and sorting of lists: controller/models/base_model.go checkLimits, controller/storage/boltz/query_scanners.go
// and query_sort.go (openziti/ziti); reference: shared/reference/controller-behaviour.md §2 "Paging".
import { describe, expect, it } from 'bun:test'
import {
  parseListQuery,
  recordsOf,
  resolvePaging,
  runList,
  toPaginationJson,
  UNLIMITED_LIMIT,
  type ListQuery,
  type Paging,
} from '../../../../src/domain/query/index.ts'
import { TopK } from '../../../../src/domain/query/query-top-k.ts'
import { SYMBOLS, apiErrorOf, seededRandom } from './query-fixtures.ts'

interface Item {
  id: string
  name: string | null
  cost: number | null
  isAdmin: boolean | null
  createdAt: string | number | null
}

const asRow = (i: Item): Record<string, unknown> => ({ ...i })
const noFilter = parseListQuery(undefined, SYMBOLS)
const idOf = (i: Item) => i.id

/** n items with ids item-000.. in id order, names cycling a, b, c. */
function items(n: number): Item[] {
  return Array.from({ length: n }, (_, k) => ({
    id: `item-${String(k).padStart(3, '0')}`,
    name: 'abc'[k % 3],
    cost: k,
    isAdmin: k % 2 === 0,
    createdAt: Date.UTC(2021, 0, 1 + k),
  }))
}

const paging = (p: Paging, q: Pick<ListQuery, 'skip' | 'limit'> = {}) => resolvePaging(q, p)

describe('resolvePaging', () => {
  it('defaults to limit 10 and offset 0', () => {
    expect(paging({})).toEqual({ limit: 10, offset: 0 })
    expect(paging({ limit: '', offset: '' })).toEqual({ limit: 10, offset: 0 })
  })

  it('clamps limit: 0 and below -1 become 10, above 500 becomes 500, -1 means unlimited', () => {
    expect(paging({ limit: '0' }).limit).toBe(10)
    expect(paging({ limit: -2 }).limit).toBe(10)
    expect(paging({ limit: '-100' }).limit).toBe(10)
    expect(paging({ limit: '500' }).limit).toBe(500)
    expect(paging({ limit: 501 }).limit).toBe(500)
    expect(paging({ limit: '9223372036854775807' }).limit).toBe(500)
    expect(paging({ limit: '-1' }).limit).toBe(UNLIMITED_LIMIT)
    expect(paging({ limit: '+7' }).limit).toBe(7)
  })

  it('clamps offset to 0..100000', () => {
    expect(paging({ offset: '-5' }).offset).toBe(0)
    expect(paging({ offset: 100_000 }).offset).toBe(100_000)
    expect(paging({ offset: '100001' }).offset).toBe(100_000)
    expect(paging({ offset: '42' }).offset).toBe(42)
  })

  it('lets skip and limit written in the filter win over the parameters, then clamps them', () => {
    expect(paging({ limit: '5', offset: '5' }, { skip: 2, limit: 3 })).toEqual({ limit: 3, offset: 2 })
    expect(paging({ limit: '5' }, parseListQuery('limit none', SYMBOLS))).toEqual({ limit: UNLIMITED_LIMIT, offset: 0 })
    expect(paging({}, parseListQuery('skip 200000 limit 1000', SYMBOLS))).toEqual({ limit: 500, offset: 100_000 })
    expect(paging({ limit: '5' }, parseListQuery('limit 0', SYMBOLS)).limit).toBe(10)
  })

  it('rejects a limit or offset that is not an int64 with COULD_NOT_VALIDATE naming the field', () => {
    for (const [p, field, value] of [
      [{ limit: 'ten' }, 'limit', 'ten'],
      [{ limit: '1.5' }, 'limit', '1.5'],
      [{ limit: ' 5' }, 'limit', ' 5'],
      [{ offset: '9223372036854775808' }, 'offset', '9223372036854775808'],
      [{ offset: 2.5 }, 'offset', 2.5],
      [{ limit: Number.NaN }, 'limit', Number.NaN],
    ] as const) {
      const e = apiErrorOf(() => paging(p))
      expect(e.code).toBe('COULD_NOT_VALIDATE')
      expect(e.status).toBe(400)
      expect(e.apiCause).toMatchObject({ kind: 'field', field, value })
    }
  })
})

describe('runList', () => {
  it('returns the first 10 in id order and counts every match', () => {
    const all = items(25).reverse()
    const r = runList(all, asRow, noFilter, {})
    expect(r.items.map(idOf)).toEqual(items(10).map(idOf))
    expect(r).toMatchObject({ totalCount: 25, limit: 10, offset: 0 })
  })

  it('filters before paging and reports the applied limit and offset', () => {
    const q = parseListQuery('name = "a"', SYMBOLS)
    const r = runList(items(30), asRow, q, { limit: '3', offset: '2' })
    expect(r.items.map((i) => i.cost)).toEqual([6, 9, 12])
    expect(r).toMatchObject({ totalCount: 10, limit: 3, offset: 2 })
  })

  it('returns no items but the full count when the offset is past the end', () => {
    const r = runList(items(5), asRow, noFilter, { offset: '50' })
    expect(r.items).toEqual([])
    expect(r.totalCount).toBe(5)
  })

  it('returns every match in order for limit -1 and reports the unlimited limit', () => {
    const all = items(700)
    const r = runList([...all].reverse(), asRow, noFilter, { limit: '-1', offset: '1' })
    expect(r.items.length).toBe(699)
    expect(r.items[0].id).toBe('item-001')
    expect(r.limit).toBe(UNLIMITED_LIMIT)
  })

  it('sorts descending and breaks ties by id ascending', () => {
    const q = parseListQuery('sort by name desc', SYMBOLS)
    const r = runList(items(9), asRow, q, {})
    expect(r.items.map((i) => `${i.name}${i.cost}`)).toEqual(['c2', 'c5', 'c8', 'b1', 'b4', 'b7', 'a0', 'a3', 'a6'])
  })

  it('sorts by several keys in turn', () => {
    const q = parseListQuery('sort by isAdmin desc, name asc, cost desc', SYMBOLS)
    const r = runList(items(6), asRow, q, {})
    expect(r.items.map((i) => i.cost)).toEqual([0, 4, 2, 3, 1, 5])
  })

  it('puts missing values first when ascending and last when descending', () => {
    const data: Item[] = [
      { id: 'a', name: 'x', cost: 2, isAdmin: null, createdAt: null },
      { id: 'b', name: null, cost: null, isAdmin: true, createdAt: '2021-01-01T00:00:00Z' },
      { id: 'c', name: 'w', cost: 1, isAdmin: false, createdAt: Date.UTC(2020, 0, 1) },
    ]
    const order = (filter: string) => runList(data, asRow, parseListQuery(filter, SYMBOLS), {}).items.map(idOf).join('')
    expect(order('sort by name')).toBe('bca')
    expect(order('sort by name desc')).toBe('acb')
    expect(order('sort by cost')).toBe('bca')
    expect(order('sort by isAdmin')).toBe('acb')
    expect(order('sort by createdAt')).toBe('acb')
    expect(order('sort by createdAt desc')).toBe('bca')
  })

  it('compares datetimes as instants whether ISO strings or epoch milliseconds', () => {
    const data: Item[] = [
      { id: 'a', name: null, cost: null, isAdmin: null, createdAt: '2021-01-01T02:00:00+03:00' },
      { id: 'b', name: null, cost: null, isAdmin: null, createdAt: Date.UTC(2020, 11, 31, 22, 30) },
      { id: 'c', name: null, cost: null, isAdmin: null, createdAt: '2020-12-31T22:00:00Z' },
    ]
    const r = runList(data, asRow, parseListQuery('sort by createdAt', SYMBOLS), {})
    expect(r.items.map(idOf)).toEqual(['c', 'b', 'a']) // 22:00Z, 22:30Z, 23:00Z
  })

  it('uses the sort parameter when the filter has no sort by', () => {
    const r = runList(items(5), asRow, parseListQuery(undefined, SYMBOLS, { sort: 'cost desc' }), { limit: 2 })
    expect(r.items.map((i) => i.cost)).toEqual([4, 3])
  })

  it('lets skip and limit in the filter win over the parameters', () => {
    const r = runList(items(20), asRow, parseListQuery('cost >= 5 skip 2 limit 3', SYMBOLS), { limit: '10', offset: '0' })
    expect(r.items.map((i) => i.cost)).toEqual([7, 8, 9])
    expect(r).toMatchObject({ totalCount: 15, limit: 3, offset: 2 })
  })

  it('reverses id order for sort by id desc', () => {
    const r = runList(items(12), asRow, parseListQuery('sort by id desc', SYMBOLS), { limit: 3 })
    expect(r.items.map((i) => i.cost)).toEqual([11, 10, 9])
  })

  it('returns the same pages as a full sort on random data', () => {
    const random = seededRandom(20_260_101)
    const data: Item[] = Array.from({ length: 2_000 }, (_, k) => ({
      id: `id-${Math.floor(random() * 1e9).toString(36)}-${k}`,
      name: random() < 0.1 ? null : `n${Math.floor(random() * 20)}`,
      cost: random() < 0.1 ? null : Math.floor(random() * 50),
      isAdmin: random() < 0.5,
      createdAt: random() < 0.5 ? Date.UTC(2021, 0, 1 + Math.floor(random() * 30)) : new Date(Date.UTC(2021, 0, 1 + Math.floor(random() * 30))).toISOString(),
    }))
    const cmpNullFirst = (x: unknown, y: unknown): number => (x === y ? 0 : x === null ? -1 : y === null ? 1 : (x as number) < (y as number) ? -1 : 1)
    const instant = (v: Item['createdAt']) => (v === null ? null : typeof v === 'number' ? v : Date.parse(v))
    const reference: Record<string, (a: Item, b: Item) => number> = {
      'sort by name': (a, b) => cmpNullFirst(a.name, b.name),
      'sort by cost desc, name': (a, b) => -cmpNullFirst(a.cost, b.cost) || cmpNullFirst(a.name, b.name),
      'sort by isAdmin, createdAt desc': (a, b) => cmpNullFirst(a.isAdmin ? 1 : 0, b.isAdmin ? 1 : 0) || -cmpNullFirst(instant(a.createdAt), instant(b.createdAt)),
    }
    for (const [sortBy, cmp] of Object.entries(reference)) {
      const filter = `cost != 7 ${sortBy}`
      const expected = data.filter((i) => i.cost !== 7).sort((a, b) => cmp(a, b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      for (const [offset, limit] of [[0, 10], [0, 500], [137, 25], [1_700, 500], [5_000, 10]]) {
        const r = runList(data, asRow, parseListQuery(filter, SYMBOLS), { offset, limit })
        expect(r.totalCount).toBe(expected.length)
        expect(r.items.map(idOf)).toEqual(expected.slice(offset, offset + limit).map(idOf))
      }
    }
  })

  it('consumes a one-shot iterable of candidates', () => {
    function* gen() {
      yield* items(4)
    }
    const r = runList(gen(), asRow, noFilter, {})
    expect(r.items.length).toBe(4)
  })
})

describe('runList with presorted candidates', () => {
  it('keeps arrival order for the default order and stops collecting after the page while counting on', () => {
    const seen: string[] = []
    const toRow = (i: Item) => {
      seen.push(i.id)
      return asRow(i)
    }
    const data = items(50)
    const r = runList(data, toRow, parseListQuery('isAdmin', SYMBOLS), { limit: '3', offset: '1' }, { presortedById: true })
    expect(r.items.map((i) => i.cost)).toEqual([2, 4, 6])
    expect(r.totalCount).toBe(25)
    expect(seen.length).toBe(50)
  })

  it('trusts the arrival order, so it must really be id order', () => {
    const shuffled = [items(3)[2], items(3)[0], items(3)[1]]
    const r = runList(shuffled, asRow, noFilter, {}, { presortedById: true })
    expect(r.items.map((i) => i.cost)).toEqual([2, 0, 1])
  })

  it('sorts anyway when the query asks for another order', () => {
    const r = runList(items(5), asRow, parseListQuery('sort by cost desc', SYMBOLS), { limit: 2 }, { presortedById: true })
    expect(r.items.map((i) => i.cost)).toEqual([4, 3])
  })

  it('over ids resolved on demand, looks up only the page when nothing filters, and every id when something does', () => {
    const byId = new Map(items(40).map((i) => [i.id, i]))
    const looked: string[] = []
    const get = (id: string) => {
      looked.push(id)
      return byId.get(id)
    }
    const ids = [...byId.keys()]
    const page = runList(recordsOf(ids, get), asRow, noFilter, { limit: '5', offset: '10' }, { presortedById: true })
    expect(page.items.map((i) => i.cost)).toEqual([10, 11, 12, 13, 14])
    expect(page.totalCount).toBe(40)
    expect(looked.length).toBe(5)
    looked.length = 0
    const filtered = runList(recordsOf(ids, get), asRow, parseListQuery('cost >= 30', SYMBOLS), { limit: '3' }, { presortedById: true })
    expect(filtered.items.map((i) => i.cost)).toEqual([30, 31, 32])
    expect(filtered.totalCount).toBe(10)
    expect(looked.length).toBe(40)
  })

  it('returns every match for an unlimited page', () => {
    const r = runList(items(600), asRow, noFilter, { limit: -1 }, { presortedById: true })
    expect(r.items.length).toBe(600)
    expect(r.limit).toBe(UNLIMITED_LIMIT)
  })
})

describe('TopK', () => {
  it('never holds more than its capacity and drains the smallest in order', () => {
    const random = seededRandom(7)
    const values = Array.from({ length: 1_000 }, () => Math.floor(random() * 100))
    const top = new TopK<number>(25, (a, b) => a - b)
    let maxSize = 0
    for (const v of values) {
      top.offer(v)
      maxSize = Math.max(maxSize, top.size)
    }
    expect(maxSize).toBe(25)
    expect(top.drainSorted()).toEqual([...values].sort((a, b) => a - b).slice(0, 25))
  })

  it('keeps nothing with capacity 0 and rejects a negative capacity as a programming error', () => {
    const top = new TopK<number>(0, (a, b) => a - b)
    top.offer(1)
    expect(top.drainSorted()).toEqual([])
    expect(() => new TopK<number>(-1, (a, b) => a - b)).toThrow(TypeError)
  })
})

describe('toPaginationJson', () => {
  it('writes the unlimited limit with the exact digits the real controller sends', () => {
    expect(toPaginationJson({ limit: UNLIMITED_LIMIT, offset: 0, totalCount: 3 })).toBe('{"limit":9223372036854775807,"offset":0,"totalCount":3}')
    expect(JSON.stringify(UNLIMITED_LIMIT)).toBe('9223372036854776000')
  })

  it('writes ordinary paging as plain numbers', () => {
    expect(JSON.parse(toPaginationJson({ limit: 10, offset: 20, totalCount: 25 }))).toEqual({ limit: 10, offset: 20, totalCount: 25 })
  })
})
