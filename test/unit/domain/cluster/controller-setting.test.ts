// The controller settings' rules (domain/cluster/controller-setting.ts): the merge of global and an override list by
// list, what a put, a patch and a null do to global and to an override, and the refusals of create and delete.
import { describe, expect, it } from 'bun:test'
import {
  decideGlobalSeed,
  decideSettingCreate,
  decideSettingDelete,
  decideSettingUpdate,
  effectiveSettings,
  type ControllerSetting,
} from '../../../../src/domain/cluster/controller-setting.ts'
import { ApiError } from '../../../../src/errors/api-error.ts'

const T0 = 1_767_225_600_000
const GLOBAL: ControllerSetting = { id: 'global', oidc: { redirectUris: ['g-r'], postLogoutUris: ['g-p'] }, tags: {}, createdAt: T0, updatedAt: T0 }
const override = (oidc: ControllerSetting['oidc']): ControllerSetting => ({ id: 'node-2', oidc, tags: {}, createdAt: T0, updatedAt: T0 })

const codeOf = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return e instanceof ApiError ? [e.code, e.apiCause?.kind === 'field' ? e.apiCause.field : undefined] : ['not an ApiError']
  }
  return ['no error']
}

describe('effectiveSettings', () => {
  it('is global without an override, and takes each list the override sets in its place', () => {
    expect(effectiveSettings(GLOBAL, undefined)).toEqual({ oidc: { redirectUris: ['g-r'], postLogoutUris: ['g-p'] } })
    expect(effectiveSettings(GLOBAL, override({ redirectUris: ['o-r'] }))).toEqual({ oidc: { redirectUris: ['o-r'], postLogoutUris: ['g-p'] } })
    expect(effectiveSettings(GLOBAL, override({ redirectUris: [], postLogoutUris: ['o-p'] }))).toEqual({ oidc: { redirectUris: [], postLogoutUris: ['o-p'] } })
  })
})

describe('decideGlobalSeed', () => {
  it('makes global once, from the seed', () => {
    expect(decideGlobalSeed(undefined, { redirectUris: ['a'], postLogoutUris: ['b'] }, T0)).toEqual({ ...GLOBAL, oidc: { redirectUris: ['a'], postLogoutUris: ['b'] } })
    expect(decideGlobalSeed(GLOBAL, { redirectUris: ['a'], postLogoutUris: ['b'] }, T0)).toBeUndefined()
  })
})

describe('decideSettingCreate', () => {
  it('makes an override of a controller with the lists given, the others not set', () => {
    expect(decideSettingCreate(undefined, 'node-2', true, { oidc: { redirectUris: ['x'], postLogoutUris: null }, tags: { a: 'b' } }, T0)).toEqual({
      id: 'node-2', oidc: { redirectUris: ['x'] }, tags: { a: 'b' }, createdAt: T0, updatedAt: T0,
    })
  })

  it('refuses global, any, an id no controller has and a second override: COULD_NOT_VALIDATE on controllerId', () => {
    for (const f of [
      () => decideSettingCreate(undefined, 'global', true, {}, T0),
      () => decideSettingCreate(undefined, 'any', true, {}, T0),
      () => decideSettingCreate(undefined, 'node-9', false, {}, T0),
      () => decideSettingCreate(override({}), 'node-2', true, {}, T0),
    ]) expect(codeOf(f)).toEqual(['COULD_NOT_VALIDATE', 'controllerId'])
  })
})

describe('decideSettingUpdate', () => {
  it('a patch changes the lists and tags it names; a null list clears it: [] in global, not set in an override', () => {
    expect(decideSettingUpdate(GLOBAL, { oidc: { redirectUris: ['n'] } }, false, T0 + 1)).toEqual({ ...GLOBAL, oidc: { redirectUris: ['n'], postLogoutUris: ['g-p'] }, updatedAt: T0 + 1 })
    expect(decideSettingUpdate(GLOBAL, { oidc: { postLogoutUris: null } }, false, T0).oidc).toEqual({ redirectUris: ['g-r'], postLogoutUris: [] })
    expect(decideSettingUpdate(override({ redirectUris: ['o'], postLogoutUris: ['p'] }), { oidc: { redirectUris: null } }, false, T0).oidc).toEqual({ postLogoutUris: ['p'] })
    expect(decideSettingUpdate({ ...GLOBAL, tags: { k: 'v' } }, { oidc: null }, false, T0)).toMatchObject({ oidc: GLOBAL.oidc, tags: { k: 'v' } })
  })

  it('a put replaces everything: lists and tags it does not name are cleared', () => {
    expect(decideSettingUpdate({ ...GLOBAL, tags: { k: 'v' } }, { oidc: { redirectUris: ['n'] } }, true, T0)).toMatchObject({ oidc: { redirectUris: ['n'], postLogoutUris: [] }, tags: {} })
    expect(decideSettingUpdate(GLOBAL, {}, true, T0).oidc).toEqual({ redirectUris: [], postLogoutUris: [] })
    expect(decideSettingUpdate(override({ redirectUris: ['o'] }), { oidc: { postLogoutUris: ['p'] } }, true, T0).oidc).toEqual({ postLogoutUris: ['p'] })
  })

  it('keeps createdAt and refuses a record that does not exist: 404', () => {
    expect(decideSettingUpdate(GLOBAL, {}, false, T0 + 5).createdAt).toBe(T0)
    expect(codeOf(() => decideSettingUpdate(undefined, {}, false, T0))).toEqual(['NOT_FOUND', undefined])
  })
})

describe('decideSettingDelete', () => {
  it('removes an override; global stays (ENTITY_CAN_NOT_BE_DELETED), none is 404', () => {
    expect(decideSettingDelete(override({}))).toMatchObject({ id: 'node-2' })
    expect(codeOf(() => decideSettingDelete(GLOBAL))).toEqual(['ENTITY_CAN_NOT_BE_DELETED', undefined])
    expect(codeOf(() => decideSettingDelete(undefined))).toEqual(['NOT_FOUND', undefined])
  })
})
