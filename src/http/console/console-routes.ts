/**
 * Serves the console (`/console/`) on the listener: its page and its content-hashed assets, with a strict
 * Content-Security-Policy (no inline script or style, no eval, nothing from elsewhere, no framing) and
 * `X-Frame-Options: DENY`. The console speaks the Management API with the admin's own session like any client: it adds
 * no endpoint of its own. The assets are built into the binary (console/console-build.ts); nothing is read from disk.
 */

/** What the server hands over: the page and the assets (console/console-build.ts `ConsoleBuild`). */
export interface ConsoleFiles {
  index: string
  assets: ReadonlyArray<{ name: string; contentType: string; body: string }>
}

export const CONSOLE_PREFIX = '/console'

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/** The console's routes by exact path (GET and HEAD; the app's root routes). */
export function consoleRoutes(files: ConsoleFiles): Record<string, () => Response> {
  const page = () =>
    new Response(files.index, {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
    })
  const routes: Record<string, () => Response> = {
    [`${CONSOLE_PREFIX}/`]: page,
    [`${CONSOLE_PREFIX}/index.html`]: page,
    [CONSOLE_PREFIX]: () => new Response(null, { status: 308, headers: { location: `${CONSOLE_PREFIX}/`, ...SECURITY_HEADERS } }),
  }
  for (const a of files.assets) {
    routes[`${CONSOLE_PREFIX}/${a.name}`] = () =>
      new Response(a.body, {
        status: 200,
        // the name changes with the content: cached for good
        headers: { 'content-type': a.contentType, 'cache-control': 'public, max-age=31536000, immutable', ...SECURITY_HEADERS },
      })
  }
  return routes
}
