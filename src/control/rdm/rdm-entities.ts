/**
 * edgeplane's records as the router data model carries them: pure mappers from the domain types to the
 * `DataState.*` messages a router keeps (identities, services, configs and their types, routers, service policies,
 * posture checks, revocations, public keys). No I/O; the projection (rdm-projection.ts) decides when they are sent.
 * @see router-control-plane.md §3.2, §3.3; ziti controller/sync_strats/sync_instant.go newIdentity, newService, …
 */
import { createHash } from 'node:crypto'
import { create } from '@bufbuild/protobuf'
import { timestampFromMs } from '@bufbuild/protobuf/wkt'
import { decodePem } from '../../lib/pem.ts'
import type { DeepReadonly } from '../../lib/deep-readonly.ts'
import { isDisabled, type Identity } from '../../domain/identity/identity-types.ts'
import type { Revocation } from '../../domain/identity/identity-revocation.ts'
import type { Config, ConfigType, Precedence, Router, Service, ServiceConfigOverride, ServicePolicy } from '../../domain/policy/policy-types.ts'
import type { PostureCheck, ProcessRule } from '../../domain/posture/posture-types.ts'
import {
  DataState_ConfigSchema,
  DataState_ConfigTypeSchema,
  DataState_IdentitySchema,
  DataState_PostureCheckSchema,
  DataState_PostureCheck_ProcessSchema,
  DataState_PublicKey_Format,
  DataState_PublicKey_Usage,
  DataState_PublicKeySchema,
  DataState_RevocationSchema,
  DataState_RouterSchema,
  DataState_ServicePolicySchema,
  DataState_ServiceSchema,
  PolicyType,
  TerminatorPrecedence,
  type DataState_Config,
  type DataState_ConfigType,
  type DataState_Identity,
  type DataState_PostureCheck,
  type DataState_PostureCheck_Process,
  type DataState_PublicKey,
  type DataState_Revocation,
  type DataState_Router,
  type DataState_Service,
  type DataState_ServicePolicy,
} from '../pb/edge_ctrl_pb.ts'

/** The config type target of router configs: such configs reach only the routers that name them (none here). */
export const ROUTER_CONFIG_TARGET = 'router'

const PRECEDENCE: Record<Precedence, TerminatorPrecedence> = {
  default: TerminatorPrecedence.Default,
  required: TerminatorPrecedence.Required,
  failed: TerminatorPrecedence.Failed,
}

/** Keys in ascending order, so that equal maps encode to equal bytes. */
function sortedRecord<V, W>(r: Readonly<Record<string, V>>, f: (v: V) => W): Record<string, W> {
  const out: Record<string, W> = {}
  for (const k of Object.keys(r).sort()) out[k] = f(r[k] as V)
  return out
}

/**
 * An identity: hosting defaults and per-service overrides, its app data as JSON, the configs its overrides give it
 * per service (config type id → config id), and whether it is disabled at `now` (a lock that ran out is not).
 */
export function toRdmIdentity(identity: Identity, overrides: readonly ServiceConfigOverride[], configTypeOf: (configId: string) => string | undefined, now: number): DataState_Identity {
  const perService = new Map<string, Record<string, string>>()
  for (const o of [...overrides].sort((a, b) => (a.serviceId < b.serviceId ? -1 : a.serviceId > b.serviceId ? 1 : a.configId < b.configId ? -1 : 1))) {
    const typeId = configTypeOf(o.configId)
    if (typeId === undefined) continue
    const m = perService.get(o.serviceId) ?? {}
    m[typeId] = o.configId
    perService.set(o.serviceId, m)
  }
  const appData = identity.appData ?? {}
  return create(DataState_IdentitySchema, {
    id: identity.id,
    name: identity.name,
    defaultHostingPrecedence: PRECEDENCE[identity.defaultHostingPrecedence] ?? TerminatorPrecedence.Default,
    defaultHostingCost: identity.defaultHostingCost,
    serviceHostingPrecedences: sortedRecord(identity.serviceHostingPrecedences ?? {}, (p) => PRECEDENCE[p] ?? TerminatorPrecedence.Default),
    serviceHostingCosts: sortedRecord(identity.serviceHostingCosts ?? {}, (c) => c),
    appDataJson: Object.keys(appData).length > 0 ? new TextEncoder().encode(JSON.stringify(appData)) : new Uint8Array(0),
    serviceConfigs: Object.fromEntries([...perService].map(([svc, configs]) => [svc, { configs: sortedRecord(configs, (c) => c) }])),
    disabled: isDisabled(identity, now),
  })
}

export function toRdmService(s: Service): DataState_Service {
  return create(DataState_ServiceSchema, { id: s.id, name: s.name, encryptionRequired: s.encryptionRequired, configs: [...s.configs] })
}

export function toRdmConfigType(t: ConfigType): DataState_ConfigType {
  return create(DataState_ConfigTypeSchema, { id: t.id, name: t.name, target: t.target ?? '' })
}

export function toRdmConfig(c: Config): DataState_Config {
  return create(DataState_ConfigSchema, { id: c.id, typeId: c.configTypeId, name: c.name, dataJson: JSON.stringify(c.data) })
}

/** A router (fabric or edge): its enrolled fingerprint ('' before enrollment) and whether it is disabled. */
export function toRdmRouter(r: Router): DataState_Router {
  return create(DataState_RouterSchema, { id: r.id, name: r.name, fingerprint: r.fingerprint ?? '', configs: [], disabled: r.disabled })
}

export function toRdmServicePolicy(p: ServicePolicy): DataState_ServicePolicy {
  return create(DataState_ServicePolicySchema, { id: p.id, name: p.name, policyType: p.type === 'Dial' ? PolicyType.DialPolicy : PolicyType.BindPolicy })
}

const toRdmProcess = (p: DeepReadonly<ProcessRule>, fingerprints: readonly string[]): DataState_PostureCheck_Process => create(DataState_PostureCheck_ProcessSchema, {
  OsType: p.osType,
  Path: p.path,
  Hashes: [...p.hashes],
  Fingerprints: [...fingerprints],
})

export function toRdmPostureCheck(c: PostureCheck): DataState_PostureCheck {
  const base = { id: c.id, name: c.name, typeId: c.typeId }
  switch (c.typeId) {
    case 'OS':
      return create(DataState_PostureCheckSchema, {
        ...base,
        subtype: { case: 'osList', value: { osList: c.operatingSystems.map((o) => ({ OsType: o.type, OsVersions: [...o.versions] })) } },
      })
    case 'PROCESS':
      // the real controller sends a check without a signer as the list [''], which its router reads as "a signer
      // named '' is required" (router/posture/process.go): none is no list here (docs/differences.md)
      return create(DataState_PostureCheckSchema, { ...base, subtype: { case: 'process', value: toRdmProcess(c.process, c.process.signerFingerprints) } })
    case 'PROCESS_MULTI':
      return create(DataState_PostureCheckSchema, {
        ...base,
        subtype: { case: 'processMulti', value: { semantic: c.semantic, processes: c.processes.map((p) => toRdmProcess(p, p.signerFingerprints)) } },
      })
    case 'DOMAIN':
      return create(DataState_PostureCheckSchema, { ...base, subtype: { case: 'domains', value: { domains: [...c.domains] } } })
    case 'MAC':
      return create(DataState_PostureCheckSchema, { ...base, subtype: { case: 'mac', value: { macAddresses: [...c.macAddresses] } } })
    case 'MFA':
      return create(DataState_PostureCheckSchema, {
        ...base,
        subtype: {
          case: 'mfa',
          value: {
            TimeoutSeconds: BigInt(c.timeoutSeconds),
            PromptOnWake: c.promptOnWake,
            PromptOnUnlock: c.promptOnUnlock,
            IgnoreLegacyEndpoints: c.ignoreLegacyEndpoints,
          },
        },
      })
  }
}

/** A revocation; an IDENTITY one revokes what was issued before it was made. */
export function toRdmRevocation(r: Revocation): DataState_Revocation {
  return create(DataState_RevocationSchema, {
    id: r.id,
    ExpiresAt: timestampFromMs(r.expiresAt),
    type: r.type,
    ...(r.type === 'IDENTITY' ? { issuedBefore: timestampFromMs(r.createdAt) } : {}),
  })
}

/** What a public key is trusted for at the router: verifying JWTs (by kid) and/or as a root of client certificates. */
export type KeyUse = 'jwt' | 'client-certs'

/** A certificate (DER) as a public key of the model; its kid is the lowercase hex SHA-1 of the DER. */
export function toRdmPublicKey(der: Uint8Array, uses: readonly KeyUse[]): DataState_PublicKey {
  const usages: DataState_PublicKey_Usage[] = []
  if (uses.includes('jwt')) usages.push(DataState_PublicKey_Usage.JWTValidation)
  if (uses.includes('client-certs')) usages.push(DataState_PublicKey_Usage.ClientX509CertValidation)
  return create(DataState_PublicKeySchema, { data: der, kid: sha1Hex(der), usages, format: DataState_PublicKey_Format.X509CertDer })
}

export function sha1Hex(der: Uint8Array): string {
  return createHash('sha1').update(der).digest('hex')
}

/** The DER of the first certificate of a PEM text (undefined when it holds none or does not decode). */
export function firstCertDer(pem: string): Uint8Array | undefined {
  try {
    return decodePem(pem).find((b) => b.type === 'CERTIFICATE')?.der
  } catch {
    return undefined
  }
}
