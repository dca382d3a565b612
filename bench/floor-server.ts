/**
 * The baselines of `bun run bench`, each run in its own process so its CPU can be read from /proc:
 * - `bridge`: the transport floor. A bare node:tls server handing each connection to node:http (as the controller's
 *   listener does, asking for a client certificate the same way), answering every request with the same JSON bytes
 *   as the controller's GET /version: no Request object, no application.
 * - `bun`: the runtime's ceiling. Bun.serve with TLS answering the same bytes (it cannot hand a handler the client
 *   certificate in Bun 1.4, so the controller cannot use it; it shows what the runtime can do).
 *
 * bun bench/floor-server.ts <bridge|bun> <key.pem> <cert.pem> <body.json>   prints "listening on <port>"
 */
import http from 'node:http'
import { readFileSync } from 'node:fs'
import tls from 'node:tls'
import type { AddressInfo } from 'node:net'

const [mode, keyFile, certFile, bodyFile] = process.argv.slice(2)
const key = readFileSync(keyFile, 'utf8')
const cert = readFileSync(certFile, 'utf8')
const body = readFileSync(bodyFile)
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) }

if (mode === 'bridge') {
  const httpServer = http.createServer({ keepAliveTimeout: 65_000 }, (_req, res) => {
    res.writeHead(200, headers)
    res.end(body)
  })
  const tlsServer = tls.createServer({ key, cert, requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' })
  tlsServer.on('secureConnection', (socket) => httpServer.emit('connection', socket))
  tlsServer.on('tlsClientError', () => {})
  tlsServer.listen(0, '127.0.0.1', () => console.log(`listening on ${(tlsServer.address() as AddressInfo).port}`))
} else if (mode === 'bun') {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { key, cert },
    fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
  })
  console.log(`listening on ${server.port}`)
} else {
  console.error(`usage: floor-server.ts <bridge|bun> <key.pem> <cert.pem> <body.json>`)
  process.exit(2)
}
