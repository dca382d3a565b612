/**
 * Posture checks: the common types (operating system, process, domain, MAC address, MFA; several processes as JSON),
 * with role attributes that service policies select by.
 */
import { useState } from 'preact/hooks'
import { patch, post } from '../api.ts'
import { ErrorLine, splitList, useAction } from '../ui/common.tsx'
import { Check, Choice, CrudPage, FormButtons, listOf, numberOr, otherError, TextInput, type FormProps } from '../ui/crud.tsx'

const TYPES = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI']
const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS']

interface PostureCheck {
  id: string
  name: string
  typeId: string
  roleAttributes?: string[]
  operatingSystems?: Array<{ type: string; versions: string[] }>
  process?: { osType: string; path: string; hashes?: string[]; signerFingerprint?: string }
  processes?: unknown[]
  semantic?: string
  domains?: string[]
  macAddresses?: string[]
  timeoutSeconds?: number
  promptOnWake?: boolean
  promptOnUnlock?: boolean
  ignoreLegacyEndpoints?: boolean
}

/** "Windows: 10.0.19041, 10.0.22000" a line -> operating systems; a line with no versions allows any version. */
function parseOs(text: string): Array<{ type: string; versions: string[] }> {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [type, versions = ''] = l.split(':')
      return { type: type.trim(), versions: splitList(versions) }
    })
}

function PostureCheckForm(props: FormProps<PostureCheck>) {
  const e = props.entity
  const [typeId, setTypeId] = useState(e?.typeId ?? 'MFA')
  const [name, setName] = useState(e?.name ?? '')
  const [attrs, setAttrs] = useState((e?.roleAttributes ?? []).join(', '))
  const [os, setOs] = useState((e?.operatingSystems ?? []).map((o) => `${o.type}: ${o.versions.join(', ')}`).join('\n'))
  const [osType, setOsType] = useState(e?.process?.osType ?? 'Windows')
  const [path, setPath] = useState(e?.process?.path ?? '')
  const [hashes, setHashes] = useState((e?.process?.hashes ?? []).join(', '))
  const [signer, setSigner] = useState(e?.process?.signerFingerprint ?? '')
  const [processes, setProcesses] = useState(JSON.stringify(e?.processes ?? [], null, 2))
  const [semantic, setSemantic] = useState(e?.semantic ?? 'AllOf')
  const [domains, setDomains] = useState((e?.domains ?? []).join(', '))
  const [macs, setMacs] = useState((e?.macAddresses ?? []).join(', '))
  const [timeout, setTimeoutText] = useState(e?.timeoutSeconds === undefined ? '' : String(e.timeoutSeconds))
  const [wake, setWake] = useState(e?.promptOnWake ?? false)
  const [unlock, setUnlock] = useState(e?.promptOnUnlock ?? false)
  const [legacy, setLegacy] = useState(e?.ignoreLegacyEndpoints ?? false)
  const save = useAction(async () => {
    const specific: Record<string, unknown> =
      typeId === 'OS'
        ? { operatingSystems: parseOs(os) }
        : typeId === 'PROCESS'
          ? { process: { osType, path, hashes: splitList(hashes), ...(signer ? { signerFingerprint: signer } : {}) } }
          : typeId === 'PROCESS_MULTI'
            ? { semantic, processes: JSON.parse(processes) }
            : typeId === 'DOMAIN'
              ? { domains: splitList(domains) }
              : typeId === 'MAC'
                ? { macAddresses: splitList(macs) }
                : { timeoutSeconds: numberOr(timeout) ?? -1, promptOnWake: wake, promptOnUnlock: unlock, ignoreLegacyEndpoints: legacy }
    const body = { name, typeId, roleAttributes: splitList(attrs), ...specific }
    if (e) await patch(`/posture-checks/${encodeURIComponent(e.id)}`, body)
    else await post('/posture-checks', body)
    props.onDone()
  })
  const err = { error: save.error }
  return (
    <form onSubmit={(ev) => (ev.preventDefault(), void save.run())} aria-label="posture check">
      <Choice label="Type" value={typeId} set={setTypeId} options={TYPES} disabled={!!e} {...err} field="typeId" hint={e ? 'A posture check keeps its type.' : undefined} />
      <TextInput label="Name" value={name} set={setName} {...err} field="name" required />
      <TextInput label="Role attributes" value={attrs} set={setAttrs} {...err} field="roleAttributes" hint="comma-separated; service policies select checks by #attribute" />
      {typeId === 'OS' && (
        <TextInput label="Operating systems" value={os} set={setOs} multiline {...err} field="operatingSystems" hint={`a line each, "type: version, version" (types: ${OS_TYPES.join(', ')})`} />
      )}
      {typeId === 'PROCESS' && (
        <>
          <Choice label="Process OS" value={osType} set={setOsType} options={OS_TYPES} {...err} field="process.osType" />
          <TextInput label="Process path" value={path} set={setPath} {...err} field="process.path" required />
          <TextInput label="Hashes" value={hashes} set={setHashes} {...err} field="process.hashes" hint="SHA-512 hex of the binary, comma-separated" />
          <TextInput label="Signer fingerprint" value={signer} set={setSigner} {...err} field="process.signerFingerprint" />
        </>
      )}
      {typeId === 'PROCESS_MULTI' && (
        <>
          <Choice label="Semantic" value={semantic} set={setSemantic} options={['AllOf', 'AnyOf']} />
          <TextInput label="Processes (JSON)" value={processes} set={setProcesses} multiline {...err} field="processes" hint='[{"osType": "Windows", "path": "C:\\\\app.exe", "hashes": [], "signerFingerprints": []}]' />
        </>
      )}
      {typeId === 'DOMAIN' && <TextInput label="Domains" value={domains} set={setDomains} {...err} field="domains" hint="Windows domains, comma-separated" />}
      {typeId === 'MAC' && <TextInput label="MAC addresses" value={macs} set={setMacs} {...err} field="macAddresses" hint="comma-separated" />}
      {typeId === 'MFA' && (
        <>
          <TextInput label="Timeout (seconds)" value={timeout} set={setTimeoutText} inputMode="numeric" {...err} field="timeoutSeconds" hint="how long a code counts; empty: no timeout" />
          <Check label="Prompt on wake" checked={wake} set={setWake} />
          <Check label="Prompt on unlock" checked={unlock} set={setUnlock} />
          <Check label="Ignore legacy endpoints" checked={legacy} set={setLegacy} />
        </>
      )}
      <FormButtons busy={save.busy} onCancel={props.onDone} />
      <ErrorLine error={otherError(save.error, ['name', 'typeId', 'roleAttributes', 'operatingSystems', 'domains', 'macAddresses', 'timeoutSeconds', 'processes', 'process.path', 'process.osType', 'process.hashes', 'process.signerFingerprint'])} />
    </form>
  )
}

export function PostureChecksPage(props: { params: Record<string, string> }) {
  return (
    <CrudPage<PostureCheck>
      openId={props.params.id}
      title="Posture checks"
      path="/posture-checks"
      noun="posture check"
      form={PostureCheckForm}
      deleteNote="Service policies that select it by role lose the check: their services no longer ask for it."
      columns={[
        { key: 'name', label: 'Name', sortable: true },
        { key: 'typeId', label: 'Type', sortable: true },
        { key: 'roleAttributes', label: 'Role attributes', render: (p) => listOf(p.roleAttributes) },
      ]}
    />
  )
}
