/** External JWT signers: issuers whose JWTs identities may sign in with (JWKS endpoint or a certificate). */
import { useState } from 'preact/hooks'
import { patch, post } from '../api.ts'
import { ErrorLine, splitList, useAction } from '../ui/common.tsx'
import { Check, Choice, CrudPage, FormButtons, otherError, TextInput, yesNo, type FormProps } from '../ui/crud.tsx'

interface Signer {
  id: string
  name: string
  issuer?: string
  audience?: string | null
  enabled?: boolean
  jwksEndpoint?: string | null
  certPem?: string | null
  kid?: string | null
  claimsProperty?: string | null
  useExternalId?: boolean | null
  clientId?: string | null
  scopes?: string[] | null
  externalAuthUrl?: string | null
  targetToken?: string | null
}

const FIELDS = ['name', 'issuer', 'audience', 'jwksEndpoint', 'certPem', 'kid', 'claimsProperty', 'clientId', 'externalAuthUrl', 'scopes', 'targetToken']

function SignerForm(props: FormProps<Signer>) {
  const e = props.entity
  const [v, setV] = useState<Record<string, string>>({
    name: e?.name ?? '',
    issuer: e?.issuer ?? '',
    audience: e?.audience ?? '',
    jwksEndpoint: e?.jwksEndpoint ?? '',
    certPem: e?.certPem ?? '',
    kid: e?.kid ?? '',
    claimsProperty: e?.claimsProperty ?? '',
    clientId: e?.clientId ?? '',
    externalAuthUrl: e?.externalAuthUrl ?? '',
    scopes: (e?.scopes ?? []).join(', '),
    targetToken: e?.targetToken ?? 'ACCESS',
  })
  const [enabled, setEnabled] = useState(e?.enabled ?? true)
  const [useExternalId, setUseExternalId] = useState(e?.useExternalId ?? false)
  const save = useAction(async () => {
    const orNull = (s: string) => (s.trim() === '' ? null : s.trim())
    const body = {
      name: v.name,
      issuer: v.issuer,
      audience: orNull(v.audience),
      enabled,
      jwksEndpoint: orNull(v.jwksEndpoint),
      certPem: orNull(v.certPem),
      kid: orNull(v.kid),
      claimsProperty: orNull(v.claimsProperty),
      useExternalId,
      clientId: orNull(v.clientId),
      externalAuthUrl: orNull(v.externalAuthUrl),
      scopes: splitList(v.scopes),
      targetToken: v.targetToken,
    }
    if (e) await patch(`/external-jwt-signers/${encodeURIComponent(e.id)}`, body)
    else await post('/external-jwt-signers', body)
    props.onDone()
  })
  const text = (label: string, k: string, extra: { hint?: string; required?: boolean; multiline?: boolean } = {}) => (
    <TextInput label={label} value={v[k]} set={(x) => setV({ ...v, [k]: x })} error={save.error} field={k} {...extra} />
  )
  return (
    <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label="external JWT signer">
      {text('Name', 'name', { required: true })}
      {text('Issuer', 'issuer', { required: true, hint: 'the JWTs\' iss claim' })}
      {text('Audience', 'audience', { required: true, hint: 'the JWTs\' aud claim' })}
      <Check label="Enabled" checked={enabled} set={setEnabled} />
      {text('JWKS endpoint', 'jwksEndpoint', { hint: 'https URL of the issuer\'s keys; or give a certificate below' })}
      {text('Certificate (PEM)', 'certPem', { multiline: true })}
      {text('Key id (kid)', 'kid')}
      {text('Claims property', 'claimsProperty', { hint: 'the claim that names the identity; empty: sub' })}
      <Check label="Match the identity's external id (not its id)" checked={useExternalId} set={setUseExternalId} />
      {text('Client id', 'clientId', { hint: 'for browser sign-in at the issuer' })}
      {text('External auth URL', 'externalAuthUrl')}
      {text('Scopes', 'scopes', { hint: 'comma-separated' })}
      <Choice label="Target token" value={v.targetToken} set={(x) => setV({ ...v, targetToken: x })} options={['ACCESS', 'ID']} error={save.error} field="targetToken" />
      <FormButtons busy={save.busy} onCancel={props.onDone} />
      <ErrorLine error={otherError(save.error, FIELDS)} />
    </form>
  )
}

export function JwtSignersPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<Signer>
      openId={props.params.id}
      title="External JWT signers"
      path="/external-jwt-signers"
      noun="external JWT signer"
      form={SignerForm}
      deleteNote="Identities can no longer sign in with its JWTs."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'issuer', label: 'Issuer' },
        { key: 'enabled', label: 'Enabled', render: (s) => yesNo(s.enabled) },
      ]}
    />
  )
}
