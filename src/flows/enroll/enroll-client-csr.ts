/**
 * The CSR of an identity's client certificate, wherever one is issued (ott enrollment, certificate extension,
 * API-session certificates): the certificate names only what the identity owns, so the CSR may ask for nothing else.
 * - parse and self-signature: pki-csr `parseCsrPem` (400 COULD_NOT_PROCESS_CSR with the failing step as cause)
 * - CA rights (basicConstraints cA, keyCertSign): 400 COULD_NOT_PROCESS_CSR; an identity certificate is never a CA
 * - names the identity does not own (a DNS name, an IP address, a URI other than its SPIFFE id): 400
 *   COULD_NOT_PROCESS_CSR naming them
 * The CSR's subject is never copied: the issuer sets CN = identity id and the SPIFFE URI SAN.
 */
import { ApiError } from '../../errors/api-error.ts'
import { parseCsrPem, type ParsedCsr } from '../../pki/pki-csr.ts'

/** The SPIFFE id of an identity's client certificates. */
export function identitySpiffeId(trustDomain: string, identityId: string): string {
  return `spiffe://${trustDomain}/identity/${identityId}`
}

/** Parses and checks the CSR of a client certificate for `identityId`; answers it with the SPIFFE id to certify. */
export async function parseIdentityCsr(pem: string, trustDomain: string, identityId: string): Promise<{ csr: ParsedCsr; spiffeId: string }> {
  const csr = await parseCsrPem(pem)
  if (csr.requestsCa) {
    throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', 'the CSR asks for CA rights (basicConstraints cA or keyCertSign); an identity certificate is never a CA')
  }
  const spiffeId = identitySpiffeId(trustDomain, identityId)
  const foreign = [...csr.dnsNames, ...csr.ipAddresses, ...csr.uris.filter((u) => u !== spiffeId)]
  if (foreign.length > 0) {
    throw ApiError.withMessage('COULD_NOT_PROCESS_CSR', `the CSR asks for names the identity does not own: ${foreign.join(', ')}`)
  }
  return { csr, spiffeId }
}
