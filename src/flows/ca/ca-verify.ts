/**
 * Verifying a third-party CA (`POST /cas/{id}/verify`): the registrant proves it holds the CA's key by having it sign
 * a certificate whose CN is the CA's verificationToken. Refusals, in the real controller's order
 * (controller/internal/routes/ca_router.go VerifyCert):
 * 1. an unknown CA: 404 NOT_FOUND; a verified one: 409 CA_ALREADY_VERIFIED
 * 2. an empty body, or one without a PEM block (or with broken armour): 400 COULD_NOT_PARSE_BODY
 * 3. a first PEM block that is not a CERTIFICATE: 400 EXPECTED_PEM_CERTIFICATE; DER that is not a certificate:
 *    400 COULD_NOT_PARSE_DER_BLOCK
 * 4. a CN other than the verificationToken: 400 INVALID_COMMON_NAME
 * 5. not signed by the CA, or it or the CA outside its validity now: 400 CERTIFICATE_FAILED_VALIDATION (the cause says
 *    why); any extended key usage is accepted, as the real controller's ExtKeyUsageAny
 * Then the CA actor marks the CA verified, checking 1 again (another request may have verified or deleted it since).
 * The signature check runs here, outside the actor's mailbox.
 */
import type { CaActor } from '../../actors/ca/ca-actor.ts'
import type { ChangeContext } from '../../actors/runtime/actor-runtime.ts'
import { decideVerifiable } from '../../domain/ca/ca-decide.ts'
import { ApiError } from '../../errors/api-error.ts'
import { decodePem, PemFormatError, type PemBlock } from '../../lib/pem.ts'
import { readCertificateDer, toCertificateView } from '../../pki/pki-certs.ts'
import { verifyCertificateChain } from '../../pki/pki-chain.ts'

export async function verifyThirdPartyCa(ca: CaActor, id: string, pemText: string, now: number, change: ChangeContext): Promise<void> {
  const target = decideVerifiable(ca.snapshot().cas.get(id))
  const block = firstPemBlock(pemText)
  if (block.type !== 'CERTIFICATE') throw ApiError.withMessage('EXPECTED_PEM_CERTIFICATE', `encountered PEM block type ${block.type}`)
  const parsed = readCertificateDer(block.der)
  if (toCertificateView(parsed).subjectCn !== target.verificationToken) throw new ApiError('INVALID_COMMON_NAME')
  const chain = await verifyCertificateChain({ leaf: parsed.der, trusted: [target.certPem], at: now })
  if (!chain.ok) throw ApiError.withMessage('CERTIFICATE_FAILED_VALIDATION', chain.message)
  await ca.ask({ type: 'ca.verify', id, change })
}

function firstPemBlock(text: string): PemBlock {
  if (text.trim() === '') throw ApiError.withMessage('COULD_NOT_PARSE_BODY', 'the body is empty: expected a PEM certificate')
  let blocks: PemBlock[]
  try {
    blocks = decodePem(text)
  } catch (e) {
    if (e instanceof PemFormatError) throw ApiError.withMessage('COULD_NOT_PARSE_BODY', e.message)
    throw e
  }
  if (blocks.length === 0) throw ApiError.withMessage('COULD_NOT_PARSE_BODY', 'no PEM block found: expected a PEM certificate')
  return blocks[0]
}
