/**
 * The controller's time, not the browser's (a skewed clock would call valid enrollments expired, or set an expiry in
 * the past): this session's last activity, which the request itself set (`expiresAt - expirationSeconds`, else
 * `lastActivityAt`); the browser's clock only when the session says neither.
 */
import { get } from './api.ts'

export async function serverNow(): Promise<number> {
  const s = (await get('/current-api-session')).data
  const fromExpiry = s.expiresAt && typeof s.expirationSeconds === 'number' ? Date.parse(s.expiresAt) - s.expirationSeconds * 1000 : NaN
  const at = Number.isFinite(fromExpiry) ? fromExpiry : Date.parse(s.lastActivityAt ?? '')
  return Number.isFinite(at) ? at : Date.now()
}
