/**
 * Structured logs: one JSON object per line (pino), with `level` as a name, `time` as ISO 8601 and `msg`; a request's
 * lines carry its `requestId`. Levels: debug, info, warn, error (`--log-level`, default info).
 * Secrets are never passed to the logger (the code logs ids, never tokens, passwords, TOTP secrets or keys); as a
 * second line of defence the members that would hold them are censored wherever they appear in a logged object.
 * The one deliberate exception is the default admin's generated password, printed once at the first start.
 * The line of each answered request (`request(r)`) is the hot one: its fields are known (ids, method, path, status,
 * time, address: nothing to censor), so it is written without pino's redaction, and on stderr (or `fd`) lines are
 * gathered and written together (at the latest REQUEST_FLUSH_MS later, or once REQUEST_FLUSH_BYTES are waiting) instead of one write
 * per request; every other line first writes what is waiting, so the order of lines is kept. `flush()` writes it now
 * (the server calls it when it stops).
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
  /** The info line of one answered request (`msg: "request"`), with these fields in this order. */
  request(fields: RequestLine): void
  /** Writes the request lines still gathered. */
  flush(): void
}

/** What the line of an answered request says: never its headers, query or body. */
export interface RequestLine {
  requestId: string
  method: string
  path: string
  status: number
  ms: number
  remoteAddress: string
}

/** Request lines on stderr are written at most this late... */
const REQUEST_FLUSH_MS = 50
/** ...or as soon as this much is waiting. */
const REQUEST_FLUSH_BYTES = 16 * 1024

/** Members censored in any logged object, at the top or one level down. */
const SECRET_KEYS = ['password', 'token', 'secret', 'privateKey', 'keyPem', 'code', 'zt-session', 'authorization']

export interface LoggerOptions {
  level: LogLevel
  /** Where each line goes, without its newline; default the file descriptor `fd`. */
  write?: (line: string) => void
  /** The file descriptor lines are written to when `write` is absent; default 2 (stderr). */
  fd?: number
}

export function createLogger(opts: LoggerOptions): Logger {
  const write = opts.write
  const stderr = write ? undefined : pino.destination({ dest: opts.fd ?? 2, sync: true })
  // request lines gathered for stderr (a caller's `write` gets each line at once)
  let waiting = ''
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (waiting === '' || !stderr) return
    const out = waiting
    waiting = ''
    stderr.write(out)
  }
  const destination = write
    ? { write: (s: string) => write(s.endsWith('\n') ? s.slice(0, -1) : s) }
    : {
        write: (s: string) => {
          flush()
          stderr!.write(s)
        },
      }
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
  const infoEnabled = p.isLevelEnabled('info')
  return {
    debug: (fields, msg) => p.debug(fields, msg),
    info: (fields, msg) => p.info(fields, msg),
    warn: (fields, msg) => p.warn(fields, msg),
    error: (fields, msg) => p.error(fields, msg),
    isEnabled: (level) => p.isLevelEnabled(level),
    request: (r) => {
      if (!infoEnabled) return
      const line =
        `{"level":"info","time":"${new Date().toISOString()}","requestId":${JSON.stringify(r.requestId)},` +
        `"method":${JSON.stringify(r.method)},"path":${JSON.stringify(r.path)},"status":${r.status},"ms":${r.ms},` +
        `"remoteAddress":${JSON.stringify(r.remoteAddress)},"msg":"request"}`
      if (write) return write(line)
      waiting += line + '\n'
      if (waiting.length >= REQUEST_FLUSH_BYTES) flush()
      else timer ??= setTimeout(flush, REQUEST_FLUSH_MS)
    },
    flush,
  }
}

/**
 * A plain note line (what start-up and the flows write through their `log(line)`) at the level its wording says:
 * `warning:` → warn; `fatal`, `error`, an unhandled error or a failed answer → error; everything else info. A line
 * about one request (`request <id> …`) carries the id as `requestId`.
 */
export function noteLogger(logger: Logger): (line: string) => void {
  return (line) => {
    const m = /^request ([A-Za-z0-9._-]+):? /.exec(line)
    const fields = m ? { requestId: m[1] } : {}
    if (line.startsWith('warning:')) logger.warn(fields, line)
    else if (/^(fatal|error)\b/i.test(line) || / unhandled error | answer failed /.test(line)) logger.error(fields, line)
    else logger.info(fields, line)
  }
}
