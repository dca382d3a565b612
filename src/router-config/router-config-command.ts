/**
 * `edgeplane validate-router-config`: arguments, reading files and standard input, printing findings
 * (text or JSON) and effective configurations, and the exit code. Validation itself is elsewhere.
 */
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { stringify } from 'yaml'
import { formatJsonReport, formatTextReport, toStrict, type FileReport } from './router-config-findings.ts'
import { describeReadError } from './router-config-files.ts'
import { validateRouterConfig, validateRouterConfigWithFiles } from './router-config-validate.ts'

/** Where the command reads and writes; `stdout`/`stderr` receive whole lines ending in "\n". */
export interface CommandIo {
  stdout: (s: string) => void
  stderr: (s: string) => void
  readStdin: () => Promise<string>
  /** Environment for `${NAME}` substitution; the process environment when absent. */
  env?: Record<string, string | undefined>
  /** The time `--check-files` judges validity windows at, epoch ms; now when absent. */
  now?: () => number
}

/** Exit codes of the command. */
export const EXIT = { valid: 0, invalid: 1, usage: 2 } as const

const NAME = 'edgeplane validate-router-config'

/** The text printed by `--help`. */
export const VALIDATE_USAGE = `Usage: ${NAME} [options] FILE...

Checks router configuration files (version 3) and reports every problem as
  FILE:LINE:COL: error|warning: PATH: MESSAGE
followed by "FILE: valid" or "FILE: N errors, M warnings".

Arguments:
  FILE                 a router configuration file; - reads standard input

Options:
  --format text|json   output format (default text)
  --print-effective    print each configuration with defaults filled in and environment
                       variables substituted (text: YAML on stdout, findings on stderr;
                       json: an "effective" member per file)
  --strict             treat warnings as errors
  --check-files        also read the certificates, keys and CA bundle the identity names
                       (and web servers' identities): PEM and key parsing, key matches
                       certificate, chains verify against ca, validity (errors; warnings
                       within 30 days), extended key usages, advertise addresses covered
                       by the server certificate's SANs, csr sans against those SANs
  --base DIR           the router's working directory, against which --check-files
                       resolves relative paths (default: the current directory)
  -h, --help           show this help

Exit status: 0 every file valid (warnings allowed), 1 an error found, 2 usage error or unreadable file.
`

type Format = 'text' | 'json'

interface Options {
  files: string[]
  format: Format
  printEffective: boolean
  strict: boolean
  checkFiles: boolean
  base?: string
  help: boolean
}

/** Parses the arguments after the subcommand name; a string is a usage error. */
function parseOptions(argv: string[]): Options | string {
  const o: Options = { files: [], format: 'text', printEffective: false, strict: false, checkFiles: false, help: false }
  let onlyFiles = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (onlyFiles || a === '-' || !a.startsWith('-')) {
      o.files.push(a)
    } else if (a === '--') {
      onlyFiles = true
    } else if (a === '-h' || a === '--help') {
      o.help = true
    } else if (a === '--strict') {
      o.strict = true
    } else if (a === '--check-files') {
      o.checkFiles = true
    } else if (a === '--base' || a.startsWith('--base=')) {
      const value = a === '--base' ? argv[++i] : a.slice('--base='.length)
      if (value === undefined || value === '') return '--base takes a directory'
      o.base = value
    } else if (a === '--print-effective') {
      o.printEffective = true
    } else if (a === '--format' || a.startsWith('--format=')) {
      const value = a === '--format' ? argv[++i] : a.slice('--format='.length)
      if (value !== 'text' && value !== 'json') return `--format takes text or json${value === undefined ? '' : `, not ${JSON.stringify(value)}`}`
      o.format = value
    } else {
      return `unknown option ${a}`
    }
  }
  if (!o.help && o.files.length === 0) return 'no file given (use - for standard input)'
  if (o.base !== undefined && !o.checkFiles) return '--base is used only with --check-files'
  return o
}

/** Validates one input; an unexpected failure of ours becomes a finding, never a stack trace. */
async function check(file: string, source: string | Uint8Array, env: Record<string, string | undefined>, options: Options, now: number): Promise<FileReport> {
  try {
    const result = options.checkFiles
      ? await validateRouterConfigWithFiles(source, { env, files: { base: resolve(options.base ?? '.'), now } })
      : validateRouterConfig(source, { env })
    return { file, findings: options.strict ? toStrict(result.findings) : result.findings, effective: result.effective }
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e)
    return { file, findings: [{ line: 1, column: 1, severity: 'error', path: '(internal)', message: `the validator failed on this input (${reason}); please report it` }] }
  }
}

function effectiveYaml(report: FileReport): string {
  const header = `# effective configuration of ${report.file}\n`
  if (report.effective === undefined) return `${header}# (none: the file is not a valid YAML mapping)\n`
  return header + stringify(report.effective, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false })
}

/**
 * Runs the command with `argv` (everything after `validate-router-config`) and returns the exit
 * code: 0 every file valid, 1 any error, 2 usage error or unreadable file.
 */
export async function runValidateRouterConfig(argv: string[], io: CommandIo): Promise<number> {
  const options = parseOptions(argv)
  if (typeof options === 'string') {
    io.stderr(`${NAME}: ${options}\n\n${VALIDATE_USAGE}`)
    return EXIT.usage
  }
  if (options.help) {
    io.stdout(VALIDATE_USAGE)
    return EXIT.valid
  }
  const env = io.env ?? process.env
  const now = (io.now ?? Date.now)()
  let stdin: Promise<string> | undefined
  const reports: FileReport[] = []
  for (const file of options.files) {
    let source: string | Uint8Array
    const shown = file === '-' ? '<stdin>' : file
    try {
      source = file === '-' ? await (stdin ??= io.readStdin()) : await readFile(file)
    } catch (e) {
      const reason = `cannot read file: ${describeReadError(e)}`
      io.stderr(`${shown}: error: ${reason}\n`)
      reports.push({ file: shown, findings: [], unreadable: reason })
      continue
    }
    reports.push(await check(shown, source, env, options, now))
  }
  const readable = reports.filter((r) => r.unreadable === undefined)
  if (options.format === 'json') {
    io.stdout(`${formatJsonReport(reports, options.printEffective)}\n`)
  } else {
    const out = options.printEffective ? io.stderr : io.stdout
    for (const r of readable) out(`${formatTextReport(r).join('\n')}\n`)
    if (options.printEffective) io.stdout(readable.map(effectiveYaml).join('---\n'))
  }
  if (reports.some((r) => r.unreadable !== undefined)) return EXIT.usage
  return readable.some((r) => r.findings.some((f) => f.severity === 'error')) ? EXIT.invalid : EXIT.valid
}
