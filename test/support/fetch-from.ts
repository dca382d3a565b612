/**
 * An HTTPS request whose client socket is bound to a chosen local address, for tests that need logins from several
 * source addresses: Linux routes all of 127.0.0.0/8 to the loopback interface, so binding to 127.0.0.x makes the
 * server see that address as the peer, through the real TLS listener. Bun's fetch cannot bind its socket, node:https
 * can (`localAddress`). Answers a fetch Response, so the harness treats it like any other answer.
 */
import https from 'node:https'

export interface FetchFromInit {
  method: string
  headers: Record<string, string>
  body?: string | Uint8Array
  tls: { ca?: string; cert?: string; key?: string }
}

/** `url` requested from `localAddress` (e.g. `127.0.0.7`), one request on its own connection. */
export function fetchFrom(localAddress: string, url: string, init: FetchFromInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: init.method,
        headers: init.headers,
        localAddress,
        agent: false,
        ca: init.tls.ca,
        cert: init.tls.cert,
        key: init.tls.key,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('error', reject)
        res.on('end', () => {
          const headers = new Headers()
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue
            for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
          }
          const status = res.statusCode ?? 0
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
          resolve(new Response(body, { status, headers }))
        })
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}
