/**
 * The enrollment JWT of a third-party CA (`GET /cas/{id}/jwt`), static for the CA, as the real controller makes it
 * (controller/internal/routes/ca_router.go generateJwt):
 * - claims `em: "ca"`, `aud: ["openziti-enroller"]`, `iss: "https://<address>/"` (with the trailing slash),
 *   `sub` = `jti` = the CA id; no `exp` and no `iat`
 * - signed by the CA actor with the TLS server certificate's key (header `kid` = its SHA-1), so an enroller can check
 *   it against the certificate the controller presents
 * - any registered CA has one, verified or not (enrolling with it is what checks the CA's state)
 */
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import { ApiError } from '../../errors/api-error.ts'

/** `issuerBase`: `https://host:port` of the controller, without a trailing slash. */
export async function caEnrollmentJwt(ca: CaActor, caId: string, issuerBase: string): Promise<string> {
  if (!ca.snapshot().cas.has(caId)) throw ApiError.notFound()
  return ca.ask({
    type: 'ca.signJwt',
    key: 'server',
    claims: { em: 'ca', aud: ['openziti-enroller'], iss: `${issuerBase}/`, sub: caId, jti: caId },
  })
}
