/**
 * Starts a baseline server of bench/floor-server.ts (or one of the transports `bun run bench transports` compares) in a
 * child process, with the controller's own key and certificate.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONTROLLER_PKI_FILES } from '../src/pki/pki-bootstrap.ts'
import type { FloorMode } from './floor-server.ts'

export interface FloorServer {
  url: string
  pid: number
  stop(): Promise<void>
}

/** `body` is what the baseline answers to every request (the controller's GET /version answer). */
export async function startFloor(mode: FloorMode, dataDir: string, body: string): Promise<FloorServer> {
  const pki = join(dataDir, 'pki')
  const bodyFile = join(dataDir, 'floor-body.json')
  writeFileSync(bodyFile, body)
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'floor-server.ts'), mode, join(pki, CONTROLLER_PKI_FILES.serverKey), join(pki, CONTROLLER_PKI_FILES.serverCert), bodyFile], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let seen = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${mode} baseline exited: ${seen}`)
    seen += new TextDecoder().decode(value)
    const m = /listening on (\d+)/.exec(seen)
    if (m) {
      reader.releaseLock()
      return {
        url: `https://127.0.0.1:${m[1]}`,
        pid: proc.pid,
        stop: async () => {
          proc.kill('SIGTERM')
          await proc.exited
        },
      }
    }
  }
}
