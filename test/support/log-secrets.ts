/**
 * Secrets never reach the log (issue 12): the harness notes every password its clients send and every token and
 * enrollment JWT their answers carry, keeps the log of its server, and fails `stop()` (and `restart()`) when any of them
 * appears in it. Every API test thus checks the logs of its own run; test/api/ops-logs.api.test.ts adds what the
 * harness cannot see (TOTP secrets and codes, recovery codes, private keys).
 */

/** Shorter values (fuzz passwords such as "a") would match ordinary text by chance. */
const MIN_SECRET_LENGTH = 8

export class LogSecretWatch {
  private readonly secrets = new Set<string>()
  readonly lines: string[] = []

  private note(value: unknown): void {
    if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) this.secrets.add(value)
  }

  /** A request body: its password members (login, authenticator, updb enrollment and password change). */
  noteRequest(body: unknown): void {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return
    for (const [k, v] of Object.entries(body)) if (/password/i.test(k)) this.note(v)
  }

  /** An answer: its zt-session header, `data.token`, and the token and JWT of each enrollment in `data.enrollment`. */
  noteAnswer(headers: Headers, body: unknown): void {
    this.note(headers.get('zt-session'))
    const data = (body as { data?: Record<string, unknown> } | undefined)?.data
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return
    this.note(data.token)
    const enrollment = data.enrollment
    if (enrollment && typeof enrollment === 'object') {
      for (const e of Object.values(enrollment as Record<string, unknown>)) {
        if (e && typeof e === 'object') {
          this.note((e as Record<string, unknown>).token)
          this.note((e as Record<string, unknown>).jwt)
        }
      }
    }
  }

  /** Throws naming the first kind of secret found in the log so far. */
  assertClean(): void {
    if (this.secrets.size === 0 || this.lines.length === 0) return
    const all = this.lines.join('\n')
    for (const s of this.secrets) {
      if (all.includes(s)) {
        const line = this.lines.find((l) => l.includes(s))!
        throw new Error(`a secret the test sent or received (${s.slice(0, 4)}…, ${s.length} characters) is in the log: ${line.slice(0, 300)}`)
      }
    }
  }
}
