/**
 * Enrollment wire shapes (Client API, no session). Members are optional as in the spec: a missing token or CSR is
 * the flow's coded refusal (INVALID_ENROLLMENT_TOKEN, COULD_NOT_PROCESS_CSR), not a schema failure.
 * @see edge-api client.yml ottEnrollmentRequest, erOttEnrollmentRequest, routerExtendEnrollmentRequest, genericEnroll,
 *   enrollmentCerts, tokenEnrollmentRequest, nonceChallenge, nonceSignature, jwks, networkJWT, listProtocols
 */
import { Type } from '@sinclair/typebox'

export const OttEnrollmentRequest = Type.Object({
  token: Type.Optional(Type.String()),
  clientCsr: Type.Optional(Type.String()),
})

/** Router enrollment: the client (control channel) and server (listeners) CSRs. */
export const ErOttEnrollmentRequest = Type.Object({
  token: Type.Optional(Type.String()),
  clientCsr: Type.Optional(Type.String()),
  serverCsr: Type.Optional(Type.String()),
})

/** A router's new CSRs, sent over its current client certificate; both required, as in the spec. */
export const RouterExtendEnrollmentRequest = Type.Object({
  certCsr: Type.String(),
  serverCertCsr: Type.String(),
})

export const UpdbEnrollQuery = Type.Object({ token: Type.Optional(Type.String()) }, { additionalProperties: true })

/** The body's username is not used: the enrollment fixes it. Bounds are checked by the flow (a coded cause). */
export const UpdbCredentials = Type.Object({
  password: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
})

export const UpdbEnrollResult = Type.Object({ username: Type.String(), controllers: Type.Array(Type.String()) })

/** The JSON form of the generic `POST /enroll`; its other form is the PEM CSR as text. */
export const GenericEnroll = Type.Object({
  clientCsr: Type.Optional(Type.String()),
  certCsr: Type.Optional(Type.String()),
  serverCertCsr: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
})

export const GenericEnrollBody = Type.Union([Type.String(), GenericEnroll])

export const GenericEnrollQuery = Type.Object(
  { method: Type.Optional(Type.String()), token: Type.Optional(Type.String()) },
  { additionalProperties: true },
)

/** What an enrollment answers: certificates per method, and the controllers to use afterwards. */
export const EnrollmentCerts = Type.Object({
  ca: Type.Optional(Type.String()),
  cert: Type.Optional(Type.String()),
  serverCert: Type.Optional(Type.String()),
  controllers: Type.Optional(Type.Array(Type.String())),
})

/** Token enrollment (`POST /enroll/token`): with a CSR to a certificate, without one to ext-jwt login. */
export const TokenEnrollmentRequest = Type.Object({ clientCsr: Type.Optional(Type.String()) })

/** `POST /enroll/challenge`: a UUID to sign with the key of `keyId` (the UUID form is checked by the flow, coded). */
export const NonceChallenge = Type.Object({ nonce: Type.String(), keyId: Type.String() })

/** The answer of a challenge (not enveloped, as the spec's `nonceSignature`). */
export const NonceSignature = Type.Object({
  signature: Type.String(),
  algorithm: Type.String(),
  kid: Type.String(),
  caPool: Type.String(),
})

/** One public key that signs enrollment JWTs. */
export const EnrollmentJwk = Type.Object({
  kty: Type.String(),
  kid: Type.String(),
  alg: Type.String(),
  use: Type.String(),
  x5c: Type.Array(Type.String()),
  crv: Type.Optional(Type.String()),
  x: Type.Optional(Type.String()),
  y: Type.Optional(Type.String()),
  n: Type.Optional(Type.String()),
  e: Type.Optional(Type.String()),
})

/** `GET /enroll/jwks` (not enveloped, as the spec's `jwks`). */
export const EnrollmentJwks = Type.Object({ keys: Type.Array(EnrollmentJwk) })

/** One network enrollment JWT (`GET /network-jwts`): its name and the JWT. */
export const NetworkJwt = Type.Object({ name: Type.String(), token: Type.String() })

/** `GET /protocols`: the address of each API protocol the controller listens with (`https` only), keyed by protocol. */
export const Protocols = Type.Record(Type.String(), Type.Object({ address: Type.String() }))
