// The actors' integrity repairs (identity and policy-graph `integrity.repair`) re-check what their finding said: a
// repair whose reference holds again (or never broke) changes nothing, so a stale or repeated fix does no harm. The
// repairs of broken records are run end to end by test/api/data-integrity.api.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { change, openCore, type Core } from './flows-support.ts'

let core: Core
const ids: Record<string, string> = {}
beforeAll(async () => {
  core = await openCore()
  ids.identity = (await core.identities.ask({ type: 'identity.create', input: { name: 'repair-user' }, change })).id
  ids.type = (await core.graph.ask({ type: 'configType.create', input: { name: 'repair-type' }, change })).id
  ids.config = (await core.graph.ask({ type: 'config.create', input: { name: 'repair-cfg', configTypeId: ids.type, data: {} }, change })).id
  ids.service = (await core.graph.ask({ type: 'service.create', input: { name: 'repair-svc', configs: [ids.config] }, change })).id
  ids.policy = (await core.graph.ask({
    type: 'servicePolicy.create', input: { name: 'repair-sp', type: 'Dial', semantic: 'AnyOf', identityRoles: [`@${ids.identity}`], serviceRoles: [`@${ids.service}`] }, change,
  })).id
})
afterAll(async () => {
  await core.close()
})

describe('integrity repairs on records whose references hold', () => {
  it('identity actor: nothing removed or changed', async () => {
    const n = await core.identities.ask({
      type: 'integrity.repair',
      repairs: [
        { kind: 'authFailures.remove', identityId: ids.identity! },
        { kind: 'mfa.remove', identityId: 'no-such-identity' },
        { kind: 'authenticator.remove', id: 'no-such-authenticator' },
        { kind: 'enrollment.remove', id: 'no-such-enrollment' },
        { kind: 'identity.resetAuthPolicy', id: ids.identity!, authPolicyId: 'default' },
        { kind: 'authPolicy.dropSigner', id: 'default', signerId: 'no-such-signer' },
      ],
      change,
    })
    expect(n).toBe(0)
    expect(core.identities.snapshot().identity(ids.identity!)?.authPolicyId).toBe('default')
  })

  it('policy graph: roles, configs, overrides and terminators that hold are kept', async () => {
    const n = await core.graph.ask({
      type: 'integrity.repair',
      repairs: [
        { kind: 'references.drop', entityKind: 'identity', id: ids.identity! },
        { kind: 'references.drop', entityKind: 'service', id: ids.service! },
        { kind: 'service.dropConfig', serviceId: ids.service!, configId: ids.config! },
        { kind: 'override.drop', key: `${ids.identity}/${ids.service}/${ids.type}` },
        { kind: 'terminator.drop', id: 'no-such-terminator' },
      ],
      change,
    })
    expect(n).toBe(0)
    const g = core.graph.snapshot()
    expect(g.servicePolicies.get(ids.policy!)?.identityRoles).toEqual([`@${ids.identity}`])
    expect(g.services.get(ids.service!)?.configs).toEqual([ids.config!])
  })
})
