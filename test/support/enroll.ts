// What an SDK does with an ott enrollment JWT, for tests that need an enrolled identity: make a key and a CSR, redeem
// the token, keep the certificate chain and the key.
import { exportPrivateKeyPem, generateKeyPair, type KeySpec } from '../../src/pki/pki-keys.ts'
import { expectStatus, type TestServer } from './harness.ts'
import { makeCsrPem } from './pki.ts'

export interface EnrolledIdentity {
  id: string
  /** The certificate chain the enrollment answered (leaf, then intermediate). */
  cert: string
  key: string
}

/** Creates an identity with an ott enrollment (extra fields as given) and enrolls it with a new key. */
export async function enrollNewIdentity(srv: TestServer, name: string, keySpec: KeySpec = 'ec-p256', extra: Record<string, unknown> = {}): Promise<EnrolledIdentity> {
  const id = await srv.create('/identities', { name, type: 'Device', isAdmin: false, ...extra, enrollment: { ott: true } })
  const token = (await srv.mgmt.get(`/identities/${id}`)).body.data.enrollment.ott.token
  const keys = await generateKeyPair(keySpec)
  const res = await srv.client.post('/enroll/ott', { token, clientCsr: await makeCsrPem(keys, { commonName: name }) }, { session: null })
  expectStatus(res, 200)
  return { id, cert: res.body.data.cert, key: await exportPrivateKeyPem(keys.privateKey) }
}
