/**
 * The console's shell: sign-in (password, then the TOTP code when one is owed: a partial session), the navigation, the
 * page of the route, sign-out. When the session ends (a 401), the sign-in page comes back and the route is kept, so
 * signing in again returns to the page the admin was on.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, del, post, session, whenSessionLost } from './api.ts'
import { match, navigate, useRoute } from './router.ts'
import { PAGES } from './pages/registry.ts'
import { ErrorLine, Field, useAction } from './ui/common.tsx'

function SignIn(props: { onSignedIn: () => void }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [owed, setOwed] = useState(false)
  const login = useAction(async () => {
    const r = await post('/authenticate?method=password', { username, password })
    session.set(r.data.token)
    const queries: Array<{ typeId?: string }> = r.data.authQueries ?? []
    if (queries.some((q) => q.typeId === 'MFA')) setOwed(true)
    else props.onSignedIn()
  })
  const totp = useAction(async () => {
    await post('/authenticate/mfa', { code })
    props.onSignedIn()
  })
  return (
    <main class="signin">
      <h1>edgeplane console</h1>
      {!owed ? (
        <form onSubmit={(e) => (e.preventDefault(), void login.run())} aria-label="sign in">
          <Field label="Username">
            <input name="username" autoComplete="username" required value={username} onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Password">
            <input name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          </Field>
          <button type="submit" disabled={login.busy}>
            Sign in
          </button>
          <ErrorLine error={login.error instanceof ApiFailure && login.error.status === 401 ? new Error('The username or password is not right.') : login.error} />
        </form>
      ) : (
        <form onSubmit={(e) => (e.preventDefault(), void totp.run())} aria-label="second factor">
          <p>This account has a second factor: enter the code your authenticator app shows.</p>
          <Field label="TOTP code">
            <input name="totp" inputMode="numeric" autoComplete="one-time-code" required value={code} onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
          </Field>
          <button type="submit" disabled={totp.busy}>
            Verify
          </button>
          <ErrorLine error={totp.error} />
        </form>
      )}
    </main>
  )
}

function Shell(props: { onSignOut: () => void }) {
  const route = useRoute()
  let found: { def: (typeof PAGES)[number]; params: Record<string, string> } | undefined
  for (const def of PAGES) {
    const params = match(def.route, route)
    if (params) {
      found = { def, params }
      break
    }
  }
  useEffect(() => {
    // the new page's title gets the focus, so keyboard and screen-reader users start on it
    document.getElementById('page-title')?.focus()
  }, [route])
  const Component = found?.def.component
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav class="side" aria-label="console">
        <p class="brand">edgeplane</p>
        <ul>
          {PAGES.filter((p) => p.nav).map((p) => (
            <li>
              <a href={`#${p.route}`} aria-current={found && (found.def === p || (p.route !== '/' && found.def.route.startsWith(`${p.route}/`))) ? 'page' : undefined}>
                {p.nav}
              </a>
            </li>
          ))}
        </ul>
        <button type="button" class="signout" onClick={props.onSignOut}>
          Sign out
        </button>
      </nav>
      <main id="main">{Component ? <Component params={found!.params} /> : <p>No such page: {route}</p>}</main>
    </div>
  )
}

function App() {
  const [signedIn, setSignedIn] = useState(session.get() !== null)
  useEffect(() => whenSessionLost(() => setSignedIn(false)), [])
  const signOut = async () => {
    await del('/current-api-session').catch(() => undefined)
    session.clear()
    setSignedIn(false)
  }
  return signedIn ? <Shell onSignOut={() => void signOut()} /> : <SignIn onSignedIn={() => setSignedIn(true)} />
}

export { navigate }
render(<App />, document.getElementById('app')!)
