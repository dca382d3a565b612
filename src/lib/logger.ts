/**
 * Structured logs: one JSON object per line (pino), with `level` as a name, `time` as ISO 8601 and `msg`; a request's
 * lines carry its `requestId`. Levels: debug, info, warn, error (`--log-level`, default info).
 * Secrets are never passed to the logger (the code logs ids, never tokens, passwords, TOTP secrets or keys); as a
 * second line of defence the members that would hold them are censored wherever they appear in a logged object.
 * The one deliberate exception is the default admin's generated password, printed once at the first start.
 */
import pino from 'pino'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Logger {
  debug(fields: Record<string, unknown>, msg: string): void
  info(fields: Record<string, unknown>, msg: string): void
  warn(fields: Record<string, unknown>, msg: string): void
  error(fields: Record<string, unknown>, msg: string): void
  /** Whether a level is written (callers skip building the fields of a line nobody reads). */
  isEnabled(level: LogLevel): boolean
}

/** Members censored in any logged object, at the top or one level down. */
const SECRET_KEYS = ['password', 'token', 'secret', 'privateKey', 'keyPem', 'code', 'zt-session', 'authorization']

export interface LoggerOptions {
  level: LogLevel
  /** Where each line goes, without its newline; default stderr. */
  write?: (line: string) => void
}

export function createLogger(opts: LoggerOptions): Logger {
  const write = opts.write
  const destination = write ? { write: (s: string) => write(s.endsWith('\n') ? s.slice(0, -1) : s) } : pino.destination({ dest: 2, sync: true })
  const p = pino(
    {
      level: opts.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_KEYS.flatMap((k) => (k.includes('-') ? [`["${k}"]`, `*["${k}"]`] : [k, `*.${k}`])), censor: '[redacted]' },
    },
    destination,
  )
  return {
    debug: (fields, msg) => p.debug(fields, msg),
    info: (fields, msg) => p.info(fields, msg),
    warn: (fields, msg) => p.warn(fields, msg),
    error: (fields, msg) => p.error(fields, msg),
    isEnabled: (level) => p.isLevelEnabled(level),
  }
}

/**
 * A plain note line (what start-up and the flows write through their `log(line)`) at the level its wording says:
 * `warning:` → warn; `fatal`, `error`, an unhandled error or a failed answer → error; everything else info. A line
 * about one request (`request <id> …`) carries the id as `requestId`.
 */
export function noteLogger(logger: Logger): (line: string) => void {
  return (line) => {
    const m = /^request ([A-Za-z0-9_-]+):? /.exec(line)
    const fields = m ? { requestId: m[1] } : {}
    if (line.startsWith('warning:')) logger.warn(fields, line)
    else if (/^(fatal|error)\b/i.test(line) || / unhandled error | answer failed /.test(line)) logger.error(fields, line)
    else logger.info(fields, line)
  }
}
