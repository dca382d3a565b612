// Lists: paging (limit, offset, clamps), every operator of the filter language, sorting, roleFilter/roleSemantic, and
// INVALID_FILTER errors (reference controller-behaviour.md §2), exercised through GET /identities over HTTPS.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/harness.ts'

let srv: TestServer
const ids: Record<string, string> = {}

beforeAll(async () => {
  srv = await startTestServer()
  const people: [string, string[], boolean, string | null, Record<string, string | boolean>, number][] = [
    ['ann', ['sales', 'eu'], false, 'e-ann', { team: 'red', vip: true }, 0],
    ['bob', ['sales', 'us'], true, null, { team: 'blue' }, 1],
    ['cid', ['eng', 'eu'], false, 'e-cid', { team: 'red' }, 2],
    ['dee', ['eng'], false, null, {}, 3],
    ['Eve', [], false, 'e-eve', { team: 'green' }, 4],
  ]
  for (const [name, roleAttributes, isAdmin, externalId, tags, minutes] of people) {
    srv.clock.set(Date.parse('2026-01-01T00:00:00Z') + minutes * 60_000)
    const res = await srv.mgmt.post('/identities', { name, type: 'User', isAdmin, roleAttributes, externalId, tags })
    expectStatus(res, 201)
    ids[name] = res.body.data.id
  }
})
afterAll(async () => {
  await srv.stop()
})

async function names(filter: string, extra = ''): Promise<string[]> {
  const res = await srv.mgmt.get(`/identities?limit=-1&filter=${encodeURIComponent(filter)}${extra}`)
  expectStatus(res, 200)
  return res.body.data.map((i: { name: string }) => i.name).filter((n: string) => n !== 'Default Admin').sort()
}

describe('filter operators', () => {
  const cases: [string, string[]][] = [
    ['name = "ann"', ['ann']],
    ['name != "ann"', ['Eve', 'bob', 'cid', 'dee']],
    ['name < "c"', ['Eve', 'ann', 'bob']],
    ['name <= "cid"', ['Eve', 'ann', 'bob', 'cid']],
    ['name > "cid"', ['dee']],
    ['name >= "cid"', ['cid', 'dee']],
    ['name contains "Ev"', ['Eve']],
    ['name icontains "eV"', ['Eve']],
    ['name contains "e"', ['Eve', 'dee']],
    ['name not contains "e"', ['ann', 'bob', 'cid']],
    ['name not icontains "EE"', ['Eve', 'ann', 'bob', 'cid']],
    ['name in ["ann", "bob", "zed"]', ['ann', 'bob']],
    ['name not in ["ann", "bob"]', ['Eve', 'cid', 'dee']],
    ['externalId = null and name != "Default Admin"', ['bob', 'dee']],
    ['externalId != null', ['Eve', 'ann', 'cid']],
    ['isAdmin = true and isDefaultAdmin = false', ['bob']],
    ['isAdmin and not isDefaultAdmin', ['bob']],
    ['not (isAdmin = true)', ['Eve', 'ann', 'cid', 'dee']],
    ['name = "ann" or name = "bob" and isAdmin = false', ['ann']],
    ['(name = "ann" or name = "bob") and isAdmin = false', ['ann']],
    ['anyOf(roleAttributes) = "eu"', ['ann', 'cid']],
    ['anyOf(roleAttributes) in ["us", "eng"]', ['bob', 'cid', 'dee']],
    // allOf holds vacuously for an empty set
    ['allOf(roleAttributes) = "eng"', ['Eve', 'dee']],
    ['count(roleAttributes) = 2', ['ann', 'bob', 'cid']],
    ['isEmpty(roleAttributes)', ['Eve']],
    ['tags.team = "red"', ['ann', 'cid']],
    ['tags.vip = true', ['ann']],
    ['createdAt > datetime(2026-01-01T00:01:30Z) and createdAt < datetime(2026-01-01T00:03:30Z)', ['cid', 'dee']],
    ['createdAt between datetime(2026-01-01T00:00:30Z) and datetime(2026-01-01T00:02:30Z)', ['bob', 'cid']],
    ['createdAt not between datetime(2026-01-01T00:00:30Z) and datetime(2026-01-01T00:02:30Z) and name != "Default Admin"', ['Eve', 'ann', 'dee']],
    ['name = "ann" AND isAdmin = FALSE', ['ann']],
    ['true', ['Eve', 'ann', 'bob', 'cid', 'dee']],
    ['', ['Eve', 'ann', 'bob', 'cid', 'dee']],
  ]
  for (const [filter, expected] of cases) {
    it(`filter ${JSON.stringify(filter)} matches ${expected.join(', ') || 'nothing'}`, async () => {
      expect(await names(filter)).toEqual(expected)
    })
  }

  it('answers filterableFields in the list meta', async () => {
    const res = await srv.mgmt.get('/identities')
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'name', 'roleAttributes', 'isAdmin', 'tags']))
  })
})

describe('paging and sorting', () => {
  it('defaults to limit 10 offset 0 and reports the total count', async () => {
    const res = await srv.mgmt.get('/identities')
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 6 })
  })

  it('pages with limit and offset in id order', async () => {
    const all = (await srv.mgmt.get('/identities?limit=-1')).body.data.map((i: { id: string }) => i.id)
    expect(all).toEqual([...all].sort())
    const page = await srv.mgmt.get('/identities?limit=2&offset=2')
    expect(page.body.data.map((i: { id: string }) => i.id)).toEqual(all.slice(2, 4))
    expect(page.body.meta.pagination).toEqual({ limit: 2, offset: 2, totalCount: 6 })
  })

  it('reports limit -1 (all) as the real controller does', async () => {
    const res = await srv.mgmt.get('/identities?limit=-1')
    expect(res.text).toContain('"limit":9223372036854775807')
    expect(res.body.data.length).toBe(6)
  })

  it('clamps a limit above 500 to 500 and treats 0 as the default', async () => {
    expect((await srv.mgmt.get('/identities?limit=10000')).body.meta.pagination.limit).toBe(500)
    expect((await srv.mgmt.get('/identities?limit=0')).body.meta.pagination.limit).toBe(10)
  })

  it('refuses a non-numeric limit or offset with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.mgmt.get('/identities?limit=ten'), 400, 'COULD_NOT_VALIDATE')
    expectError(await srv.mgmt.get('/identities?offset=1.5'), 400, 'COULD_NOT_VALIDATE')
  })

  it('sorts, skips and limits inside the filter, winning over the parameters', async () => {
    const res = await srv.mgmt.get(`/identities?limit=1&filter=${encodeURIComponent('name != "Default Admin" sort by name desc skip 1 limit 2')}`)
    expectStatus(res, 200)
    expect(res.body.data.map((i: { name: string }) => i.name)).toEqual(['cid', 'bob'])
    expect(res.body.meta.pagination).toMatchObject({ limit: 2, offset: 1, totalCount: 5 })
  })

  it('sorts by the sort parameter', async () => {
    const res = await srv.mgmt.get(`/identities?limit=3&sort=${encodeURIComponent('name asc')}`)
    expect(res.body.data.map((i: { name: string }) => i.name)).toEqual(['Default Admin', 'Eve', 'ann'])
  })

  it('refuses a bad sort parameter with 400 INVALID_SORT_IDENTIFIER', async () => {
    expectError(await srv.mgmt.get(`/identities?sort=${encodeURIComponent('name sideways')}`), 400, 'INVALID_SORT_IDENTIFIER')
  })
})

describe('bad filters', () => {
  const bad = [
    'name = ',
    'name == "x"',
    'nosuchfield = "x"',
    'name startswith "a"',
    'roleAttributes = "x"',
    'name = "unterminated',
    'isAdmin = "yes"',
    'name in []',
    '(name = "x"',
    'name = "x" sort by nosuch',
  ]
  for (const filter of bad) {
    it(`answers 400 INVALID_FILTER for ${JSON.stringify(filter)}`, async () => {
      const res = await srv.mgmt.get(`/identities?filter=${encodeURIComponent(filter)}`)
      expectError(res, 400, 'INVALID_FILTER')
      expect(typeof res.body.error.cause.message).toBe('string')
    })
  }

  it('points at the position of a syntax error', async () => {
    const res = await srv.mgmt.get(`/identities?filter=${encodeURIComponent('name = "a" and and')}`)
    expectError(res, 400, 'INVALID_FILTER')
    expect(res.body.error.cause.message).toMatch(/column/)
  })
})

describe('roleFilter and roleSemantic', () => {
  it('matches all given attributes by default (AllOf)', async () => {
    expect(await names('true', '&roleFilter=%23sales&roleFilter=%23eu')).toEqual(['ann'])
  })
  it('matches any given attribute with roleSemantic=AnyOf', async () => {
    expect(await names('true', '&roleFilter=%23us&roleFilter=%23eng&roleSemantic=AnyOf')).toEqual(['bob', 'cid', 'dee'])
  })
  it('adds identities named by @id', async () => {
    expect(await names('true', `&roleFilter=%23us&roleFilter=%40${ids.Eve}&roleSemantic=AnyOf`)).toEqual(['Eve', 'bob'])
  })
  it('applies the filter on top of the role filter', async () => {
    expect(await names('name != "ann"', '&roleFilter=%23eu')).toEqual(['cid'])
  })
  it('refuses an invalid roleSemantic with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.mgmt.get('/identities?roleFilter=%23eu&roleSemantic=SomeOf'), 400, 'COULD_NOT_VALIDATE')
  })
  it('refuses a roleFilter entry without # or @ with 400 COULD_NOT_VALIDATE', async () => {
    expectError(await srv.mgmt.get('/identities?roleFilter=eu'), 400, 'COULD_NOT_VALIDATE')
  })
})
