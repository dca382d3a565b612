// The harness's watch over the log: what it takes for a secret, and that it fails when one is logged.
import { describe, expect, it } from 'bun:test'
import { LogSecretWatch } from '../../support/log-secrets.ts'

/** A watch that saw a login body and an answer with a session header, a token and an enrollment. */
function watching(): LogSecretWatch {
  const w = new LogSecretWatch()
  w.noteRequest({ username: 'someone-long', password: 'hunter22-long', newPassword: 'a' })
  w.noteAnswer(new Headers({ 'zt-session': 'session-token-1' }), { data: { token: 'data-token-12', enrollment: { ott: { token: 'ott-token-123', jwt: 'eyJ.jwt.value' } } } })
  return w
}

describe('LogSecretWatch', () => {
  it('case=passes a log without them: short values and other members are not secrets', () => {
    const w = watching()
    w.lines.push('{"msg":"request","path":"/edge/client/v1/authenticate"}', '{"msg":"someone-long logged in with a"}')
    expect(() => w.assertClean()).not.toThrow()
  })

  it('case=fails on a sent password or a received token, enrollment token or JWT found in the log', () => {
    for (const secret of ['hunter22-long', 'session-token-1', 'data-token-12', 'ott-token-123', 'eyJ.jwt.value']) {
      const w = watching()
      w.lines.push(`{"msg":"oops ${secret}"}`)
      expect(() => w.assertClean()).toThrow(/is in the log/)
    }
  })
})
