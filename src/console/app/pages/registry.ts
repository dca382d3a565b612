/**
 * Every page of the console: its route (hash path, `:name` parameters), its title in the navigation (absent: not in
 * the navigation, e.g. a detail page), and its component. Pages register here and nowhere else.
 */
import type { FunctionComponent } from 'preact'
import { OverviewPage } from './overview.tsx'
import { ServicesPage } from './services.tsx'
import { ConfigsPage } from './configs.tsx'
import { EdgeRouterPoliciesPage, ServiceEdgeRouterPoliciesPage, ServicePoliciesPage } from './policies.tsx'
import { EdgeRoutersPage } from './edge-routers.tsx'
import { AuthPoliciesPage } from './auth-policies.tsx'
import { CasPage } from './cas.tsx'
import { JwtSignersPage } from './jwt-signers.tsx'
import { PostureChecksPage } from './posture-checks.tsx'
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
  { route: '/services', nav: 'Services', component: ServicesPage },
  { route: '/services/:id', component: ServicesPage },
  { route: '/configs', nav: 'Configs', component: ConfigsPage },
  { route: '/configs/:id', component: ConfigsPage },
  { route: '/service-policies', nav: 'Service policies', component: ServicePoliciesPage },
  { route: '/service-policies/:id', component: ServicePoliciesPage },
  { route: '/edge-router-policies', nav: 'Edge router policies', component: EdgeRouterPoliciesPage },
  { route: '/edge-router-policies/:id', component: EdgeRouterPoliciesPage },
  { route: '/service-edge-router-policies', nav: 'Service edge router policies', component: ServiceEdgeRouterPoliciesPage },
  { route: '/service-edge-router-policies/:id', component: ServiceEdgeRouterPoliciesPage },
  { route: '/edge-routers', nav: 'Edge routers', component: EdgeRoutersPage },
  { route: '/edge-routers/:id', component: EdgeRoutersPage },
  { route: '/posture-checks', nav: 'Posture checks', component: PostureChecksPage },
  { route: '/posture-checks/:id', component: PostureChecksPage },
  { route: '/auth-policies', nav: 'Authentication policies', component: AuthPoliciesPage },
  { route: '/auth-policies/:id', component: AuthPoliciesPage },
  { route: '/cas', nav: 'Certificate authorities', component: CasPage },
  { route: '/cas/:id', component: CasPage },
  { route: '/external-jwt-signers', nav: 'External JWT signers', component: JwtSignersPage },
  { route: '/external-jwt-signers/:id', component: JwtSignersPage },
  { route: '/access', nav: 'Access', component: AccessPage },
]
