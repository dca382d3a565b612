/**
 * The sub-database catalogue: every LMDB sub-db, and the one actor that may write it.
 * See store/README.md. Adding a sub-db means adding it here first.
 */
export const SUB_DBS = {
  meta: 'store',
  identities: 'identity',
  authenticators: 'identity',
  enrollments: 'identity',
  'auth-policies': 'identity',
  'auth-failures': 'identity',
  mfas: 'identity',
  revocations: 'identity',
  'api-sessions': 'session-registry',
  sessions: 'session-registry',
  'api-session-certs': 'session-registry',
  'config-types': 'policy-graph',
  configs: 'policy-graph',
  services: 'policy-graph',
  routers: 'policy-graph',
  terminators: 'policy-graph',
  'service-policies': 'policy-graph',
  'edge-router-policies': 'policy-graph',
  'service-edge-router-policies': 'policy-graph',
  'service-config-overrides': 'policy-graph',
  'posture-checks': 'policy-graph',
  cas: 'ca',
  'external-jwt-signers': 'ca',
  controllers: 'controllers',
  'controller-settings': 'controllers',
} as const

/** Name of a sub-database. */
export type SubDbName = keyof typeof SUB_DBS
/** Name of the actor that owns a sub-database. */
export type SubDbOwner = (typeof SUB_DBS)[SubDbName]
