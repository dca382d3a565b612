/**
 * Certificate authorities: list, create/edit, delete, and the verification steps: the CA's verification token, the
 * openssl commands that make a certificate with it as the common name signed by the CA, and a field to paste that
 * certificate (POST /cas/{id}/verify, text/plain).
 */
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, get, patch, post, postText } from '../api.ts'
import { ErrorLine, Field, splitList, useAction } from '../ui/common.tsx'
import { Check, CrudPage, FormButtons, listOf, otherError, TextInput, yesNo, type FormProps } from '../ui/crud.tsx'

interface Ca {
  id: string
  name: string
  certPem?: string
  fingerprint?: string
  isVerified?: boolean
  verificationToken?: string
  isAutoCaEnrollmentEnabled?: boolean
  isOttCaEnrollmentEnabled?: boolean
  isAuthEnabled?: boolean
  identityRoles?: string[]
  identityNameFormat?: string
}

function VerifyPanel(props: { ca: Ca; onVerified: () => void }) {
  const [pem, setPem] = useState('')
  const verify = useAction(async () => {
    await postText(`/cas/${encodeURIComponent(props.ca.id)}/verify`, pem)
    props.onVerified()
  })
  const token = props.ca.verificationToken ?? ''
  const commands = [
    '# with the CA\'s certificate (ca.pem) and private key (ca.key):',
    'openssl genrsa -out verify.key 2048',
    `openssl req -new -key verify.key -subj "/CN=${token}" -out verify.csr`,
    'openssl x509 -req -in verify.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -sha256 -out verify.pem',
  ].join('\n')
  const refused = verify.error instanceof ApiFailure ? `refused by the controller: ${verify.error.error.message}` : undefined
  return (
    <section class="card" aria-label="verification">
      <h2>Verify {props.ca.name}</h2>
      <p>
        Prove you hold the CA's private key: make a certificate whose common name is the verification token, signed by the CA, and paste it
        below.
      </p>
      <dl class="facts">
        <dt>Verification token</dt>
        <dd>
          <code>{token}</code>
        </dd>
      </dl>
      <pre class="cmd" tabIndex={0} aria-label="openssl commands">
        {commands}
      </pre>
      <form onSubmit={(e) => (e.preventDefault(), void verify.run())} aria-label="verify">
        <Field label="Verification certificate (PEM)" error={refused} hint="the contents of verify.pem">
          <textarea required spellcheck={false} aria-invalid={refused ? 'true' : undefined} value={pem} onInput={(e) => setPem((e.target as HTMLTextAreaElement).value)} />
        </Field>
        <button type="submit" disabled={verify.busy}>
          Verify
        </button>
        {!(verify.error instanceof ApiFailure) && <ErrorLine error={verify.error} />}
      </form>
    </section>
  )
}

function CaForm(props: FormProps<Ca>) {
  const [entity, setEntity] = useState<Ca | undefined>(props.entity)
  const [name, setName] = useState(entity?.name ?? '')
  const [certPem, setCertPem] = useState(entity?.certPem ?? '')
  const [auto, setAuto] = useState(entity?.isAutoCaEnrollmentEnabled ?? false)
  const [ott, setOtt] = useState(entity?.isOttCaEnrollmentEnabled ?? true)
  const [auth, setAuth] = useState(entity?.isAuthEnabled ?? true)
  const [roles, setRoles] = useState((entity?.identityRoles ?? []).join(', '))
  const [format, setFormat] = useState(entity?.identityNameFormat ?? '')
  const reload = async (id: string) => setEntity((await get<{ data: Ca }>(`/cas/${encodeURIComponent(id)}`)).data)
  useEffect(() => {
    if (props.entity) void reload(props.entity.id).catch(() => undefined)
  }, [])
  const save = useAction(async () => {
    const body = { name, isAutoCaEnrollmentEnabled: auto, isOttCaEnrollmentEnabled: ott, isAuthEnabled: auth, identityRoles: splitList(roles), identityNameFormat: format }
    if (entity) {
      // a PATCH without externalIdClaim removes it (the real controller's rule); `{}` keeps the stored one
      await patch(`/cas/${encodeURIComponent(entity.id)}`, { ...body, externalIdClaim: {} })
      props.onDone()
    } else {
      const r = await post<{ data: { id: string } }>('/cas', { ...body, certPem })
      await reload(r.data.id)
    }
  })
  const fields = ['name', 'certPem', 'identityRoles', 'identityNameFormat']
  return (
    <div>
      {entity && !props.entity && <p role="status">CA {entity.name} was created; it is not trusted until it is verified.</p>}
      <form onSubmit={(e) => (e.preventDefault(), void save.run())} aria-label="certificate authority">
        <TextInput label="Name" value={name} set={setName} error={save.error} field="name" required />
        <TextInput label="Certificate (PEM)" value={certPem} set={setCertPem} error={save.error} field="certPem" required multiline hint={entity ? 'A CA keeps its certificate.' : undefined} />
        <Check label="Authentication with certificates it signed" checked={auth} set={setAuth} />
        <Check label="One-time-token CA enrollment (ottca)" checked={ott} set={setOtt} />
        <Check label="Automatic CA enrollment" checked={auto} set={setAuto} />
        <TextInput label="Identity roles" value={roles} set={setRoles} error={save.error} field="identityRoles" hint="role attributes given to identities it enrolls, comma-separated" />
        <TextInput label="Identity name format" value={format} set={setFormat} error={save.error} field="identityNameFormat" hint="e.g. [caName]-[commonName]; empty: the default" />
        <FormButtons busy={save.busy} onCancel={props.onDone} save={entity ? 'Save' : 'Create'} />
        <ErrorLine error={otherError(save.error, fields)} />
      </form>
      {entity && !entity.isVerified && <VerifyPanel ca={entity} onVerified={() => void reload(entity.id)} />}
      {entity?.isVerified && (
        <p role="status">
          {entity.name} is verified (fingerprint <code>{entity.fingerprint}</code>).
        </p>
      )}
    </div>
  )
}

export function CasPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<Ca>
      openId={props.params.id}
      title="Certificate authorities"
      path="/cas"
      noun="CA"
      form={CaForm}
      deleteNote="Certificates it signed can no longer be used to sign in or to enroll; the identities themselves stay."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'isVerified', label: 'Verified', render: (c) => yesNo(c.isVerified) },
        { key: 'isAuthEnabled', label: 'Authentication', render: (c) => yesNo(c.isAuthEnabled) },
        { key: 'identityRoles', label: 'Identity roles', render: (c) => listOf(c.identityRoles) },
      ]}
    />
  )
}
