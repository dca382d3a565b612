/**
 * The stored records of every aggregate as the integrity check reads them: every sub-database (store/README.md) by
 * name, its records by key. The store reads them from a copy (store/store-copy.ts `readStoreCopy`).
 */
import type { Authenticator, Identity } from '../identity/identity-types.ts'
import type { Enrollment } from '../enrollment/enrollment-types.ts'
import type { AuthPolicy } from '../identity/identity-auth-policy.ts'
import type { StoredMfa } from '../identity/identity-mfa-stored.ts'
import type { Revocation } from '../identity/identity-revocation.ts'
import type { ApiSession, ApiSessionCertificate } from '../session/session-types.ts'
import type { ServiceSession } from '../session/service-session-types.ts'
import type {
  Config, ConfigType, EdgeRouterPolicy, Router, Service, ServiceConfigOverride, ServiceEdgeRouterPolicy, ServicePolicy, Terminator,
} from '../policy/policy-types.ts'
import type { PostureCheck } from '../posture/posture-types.ts'
import type { ThirdPartyCa } from '../ca/ca-types.ts'
import type { ExternalJwtSigner } from '../ca/ca-jwt-signer-types.ts'
import type { ControllerNode } from '../cluster/controller-types.ts'
import type { ControllerSetting } from '../cluster/controller-setting.ts'

/** The record type of each sub-database (store/README.md). */
export interface RecordTypes {
  meta: unknown
  identities: Identity
  authenticators: Authenticator
  enrollments: Enrollment
  'auth-policies': AuthPolicy
  'auth-failures': number
  /** As stored: secret and recovery codes sealed (a copy is read without the key). */
  mfas: StoredMfa
  revocations: Revocation
  'api-sessions': ApiSession
  sessions: ServiceSession
  'api-session-certs': ApiSessionCertificate
  'config-types': ConfigType
  configs: Config
  services: Service
  routers: Router
  terminators: Terminator
  'service-policies': ServicePolicy
  'edge-router-policies': EdgeRouterPolicy
  'service-edge-router-policies': ServiceEdgeRouterPolicy
  'service-config-overrides': ServiceConfigOverride
  'posture-checks': PostureCheck
  cas: ThirdPartyCa
  'external-jwt-signers': ExternalJwtSigner
  /** A cluster's nodes (empty on a single node). */
  controllers: ControllerNode
  /** The global controller settings and the nodes' overrides. */
  'controller-settings': ControllerSetting
}

/** Name of a sub-database (the store's catalogue has the same names: store-copy.ts checks it). */
export type RecordTable = keyof RecordTypes

/** Every stored record, by sub-database and key. */
export type StoredRecords = { [K in RecordTable]: Map<string, RecordTypes[K]> }

