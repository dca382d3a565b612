/** Hash routing (`/console/#/identities/abc`): the server serves one page; a reload keeps the route. */
import { useEffect, useState } from 'preact/hooks'

export function currentRoute(): string {
  const h = location.hash.replace(/^#/, '')
  return h.startsWith('/') ? h : '/'
}

export function navigate(route: string): void {
  location.hash = route
}

export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute())
  useEffect(() => {
    const on = () => setRoute(currentRoute())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}

/** Matches `/identities/:id` against a route; answers the parameters or null. */
export function match(pattern: string, route: string): Record<string, string> | null {
  const p = pattern.split('/')
  const r = route.split('?')[0].split('/')
  if (p.length !== r.length) return null
  const out: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(r[i])
    else if (p[i] !== r[i]) return null
  }
  return out
}
