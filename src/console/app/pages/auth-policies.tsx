/** Authentication policies: which primary methods an identity may use (password, certificate, external JWT) and the second factor. */
import { useEffect, useState } from 'preact/hooks'
import { get, patch, post } from '../api.ts'
import { ErrorLine, Field, useAction } from '../ui/common.tsx'
import { Check, CrudPage, FormButtons, numberOr, otherError, TextInput, yesNo, type FormProps } from '../ui/crud.tsx'

interface AuthPolicy {
  id: string
  name: string
  primary: {
    updb: { allowed: boolean; minPasswordLength: number; requireSpecialChar: boolean; requireNumberChar: boolean; requireMixedCase: boolean; maxAttempts: number; lockoutDurationMinutes: number }
    cert: { allowed: boolean; allowExpiredCerts: boolean }
    extJwt: { allowed: boolean; allowedSigners: string[] }
  }
  secondary: { requireTotp: boolean; requireExtJwtSigner?: string | null }
}

const DEFAULTS: AuthPolicy['primary'] = {
  updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 },
  cert: { allowed: true, allowExpiredCerts: true },
  extJwt: { allowed: false, allowedSigners: [] },
}

function AuthPolicyForm(props: FormProps<AuthPolicy>) {
  const e = props.entity
  const p = e?.primary ?? DEFAULTS
  const [name, setName] = useState(e?.name ?? '')
  const [updb, setUpdb] = useState(p.updb)
  const [minLen, setMinLen] = useState(String(p.updb.minPasswordLength))
  const [attempts, setAttempts] = useState(String(p.updb.maxAttempts))
  const [lockout, setLockout] = useState(String(p.updb.lockoutDurationMinutes))
  const [cert, setCert] = useState(p.cert)
  const [ext, setExt] = useState(p.extJwt)
  const [totp, setTotp] = useState(e?.secondary.requireTotp ?? false)
  const [signer2, setSigner2] = useState(e?.secondary.requireExtJwtSigner ?? '')
  const [signers, setSigners] = useState<Array<{ id: string; name: string }>>([])
  useEffect(() => {
    get<{ data: Array<{ id: string; name: string }> }>('/external-jwt-signers?limit=500').then((r) => setSigners(r.data), () => setSigners([]))
  }, [])
  const save = useAction(async () => {
    const body = {
      name,
      primary: {
        updb: { ...updb, minPasswordLength: numberOr(minLen), maxAttempts: numberOr(attempts), lockoutDurationMinutes: numberOr(lockout) },
        cert,
        extJwt: ext,
      },
      // "" is none (a null on a patch would leave the stored signer)
      secondary: { requireTotp: totp, requireExtJwtSigner: signer2 },
    }
    if (e) await patch(`/auth-policies/${encodeURIComponent(e.id)}`, body)
    else await post('/auth-policies', body)
    props.onDone()
  })
  const fieldErr = (f: string) => ({ error: save.error, field: f })
  return (
    <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label="authentication policy">
      <TextInput label="Name" value={name} set={setName} {...fieldErr('name')} required />
      <fieldset>
        <legend>Password (updb)</legend>
        <Check label="Password sign-in allowed" checked={updb.allowed} set={(v) => setUpdb({ ...updb, allowed: v })} />
        <TextInput label="Minimum password length" value={minLen} set={setMinLen} inputMode="numeric" {...fieldErr('primary.updb.minPasswordLength')} />
        <Check label="Require a special character" checked={updb.requireSpecialChar} set={(v) => setUpdb({ ...updb, requireSpecialChar: v })} />
        <Check label="Require a digit" checked={updb.requireNumberChar} set={(v) => setUpdb({ ...updb, requireNumberChar: v })} />
        <Check label="Require mixed case" checked={updb.requireMixedCase} set={(v) => setUpdb({ ...updb, requireMixedCase: v })} />
        <TextInput label="Attempts before lockout" value={attempts} set={setAttempts} inputMode="numeric" hint="0: no lockout" {...fieldErr('primary.updb.maxAttempts')} />
        <TextInput label="Lockout (minutes)" value={lockout} set={setLockout} inputMode="numeric" hint="0: until an admin unlocks" {...fieldErr('primary.updb.lockoutDurationMinutes')} />
      </fieldset>
      <fieldset>
        <legend>Certificate</legend>
        <Check label="Certificate sign-in allowed" checked={cert.allowed} set={(v) => setCert({ ...cert, allowed: v })} />
        <Check label="Expired certificates allowed" checked={cert.allowExpiredCerts} set={(v) => setCert({ ...cert, allowExpiredCerts: v })} />
      </fieldset>
      <fieldset>
        <legend>External JWT</legend>
        <Check label="External JWT sign-in allowed" checked={ext.allowed} set={(v) => setExt({ ...ext, allowed: v })} />
        {signers.length === 0 && <p>No external JWT signers yet.</p>}
        {signers.map((s) => (
          <Check
            label={`Signer ${s.name}`}
            checked={ext.allowedSigners.includes(s.id)}
            set={(v) => setExt({ ...ext, allowedSigners: v ? [...ext.allowedSigners, s.id] : ext.allowedSigners.filter((x) => x !== s.id) })}
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Second factor</legend>
        <Check label="Require TOTP" checked={totp} set={setTotp} />
        <Field label="Require a JWT from signer">
          <select value={signer2} onChange={(ev) => setSigner2((ev.target as HTMLSelectElement).value)}>
            <option value="">(none)</option>
            {signers.map((s) => (
              <option value={s.id}>{s.name}</option>
            ))}
          </select>
        </Field>
      </fieldset>
      <FormButtons busy={save.busy} onCancel={props.onDone} />
      <ErrorLine error={otherError(save.error, ['name', 'primary.updb.minPasswordLength', 'primary.updb.maxAttempts', 'primary.updb.lockoutDurationMinutes'])} />
    </form>
  )
}

export function AuthPoliciesPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<AuthPolicy>
      openId={props.params.id}
      title="Authentication policies"
      path="/auth-policies"
      noun="authentication policy"
      form={AuthPolicyForm}
      deleteNote="The controller refuses while identities use it, and always for the default policy."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'updb', label: 'Password', render: (a) => yesNo(a.primary?.updb?.allowed) },
        { key: 'cert', label: 'Certificate', render: (a) => yesNo(a.primary?.cert?.allowed) },
        { key: 'extJwt', label: 'External JWT', render: (a) => yesNo(a.primary?.extJwt?.allowed) },
        { key: 'totp', label: 'TOTP required', render: (a) => yesNo(a.secondary?.requireTotp) },
      ]}
    />
  )
}
