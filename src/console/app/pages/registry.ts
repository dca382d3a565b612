/**
 * Every page of the console: its route (hash path, `:name` parameters), its title in the navigation (absent: not in
 * the navigation, e.g. a detail page), and its component. Pages register here and nowhere else.
 */
import type { FunctionComponent } from 'preact'
import { OverviewPage } from './overview.tsx'
import { AccessPage } from './access.tsx'
import { IdentitiesPage, IdentityCreatePage, IdentityDetailPage } from './identities.tsx'

export interface PageDef {
  route: string
  nav?: string
  component: FunctionComponent<{ params: Record<string, string> }>
}

export const PAGES: PageDef[] = [
  { route: '/', nav: 'Overview', component: OverviewPage },
  { route: '/identities', nav: 'Identities', component: IdentitiesPage },
  { route: '/identities/new', component: IdentityCreatePage },
  { route: '/identities/:id', component: IdentityDetailPage },
  { route: '/access', nav: 'Access', component: AccessPage },
]
