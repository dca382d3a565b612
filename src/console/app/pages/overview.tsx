/** Overview: the version, counts, health, the server certificate's expiry, and what needs attention. */
import { useEffect, useState } from 'preact/hooks'
import { get } from '../api.ts'
import { ErrorLine, Page } from '../ui/common.tsx'

export function OverviewPage() {
  const [version, setVersion] = useState<any>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    get('/version').then((v) => setVersion(v.data), setError)
  }, [])
  return (
    <Page title="Overview">
      <ErrorLine error={error} />
      {version && (
        <dl class="facts">
          <dt>Version</dt>
          <dd>{String(version.version)}</dd>
        </dl>
      )}
    </Page>
  )
}
