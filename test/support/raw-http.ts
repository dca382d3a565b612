/**
 * Raw HTTP/1.1 over TLS, for requests fetch cannot send: a malformed Host header, a request line in absolute form,
 * odd header framing. One request per connection; the answer is read until the server closes.
 */
import tls from 'node:tls'

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Sends `head` (request line and headers, without the blank line) and `body`; answers the parsed response. */
export function rawRequest(port: number, caPem: string, head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem, servername: 'localhost' }, () => {
      socket.end(`${head}\r\nconnection: close\r\n\r\n${body}`)
    })
    const chunks: Buffer[] = []
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const lines = (split < 0 ? text : text.slice(0, split)).split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0)
      const headers: Record<string, string> = {}
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status, headers, body: split < 0 ? '' : text.slice(split + 4) })
    })
  })
}
