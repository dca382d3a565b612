/**
 * Findings of the router configuration validator: what they are, how they are collected with a
 * source position, sorted, de-duplicated and printed (text lines or JSON). No validation rules here.
 */

/** How bad a finding is: an error fails validation; a warning does not, unless `--strict`. */
export type Severity = 'error' | 'warning'

/** One problem of one file, at a 1-based line and column of the source text. */
export interface Finding {
  line: number
  column: number
  severity: Severity
  /** Dotted field path with array indexes in brackets (`link.dialers[0].split`); `(root)` or `(yaml)` for the whole file. */
  path: string
  message: string
}

/** The result for one input file as printed by the command. */
export interface FileReport {
  file: string
  findings: Finding[]
  /** The configuration with defaults filled in, when the file was a mapping. */
  effective?: Record<string, unknown>
  /** Set when the file could not be read at all (exit code 2). */
  unreadable?: string
}

/** Maps offsets of a text to 1-based line and column numbers. */
export class LineIndex {
  private readonly starts: number[] = [0]

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 10) this.starts.push(i + 1)
      else if (c === 13 && text.charCodeAt(i + 1) !== 10) this.starts.push(i + 1)
    }
  }

  /** The 1-based line and column of `offset` (clamped to the text). */
  locate(offset: number): { line: number; column: number } {
    const at = Math.max(0, offset)
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.starts[mid] <= at) lo = mid
      else hi = mid - 1
    }
    return { line: lo + 1, column: at - this.starts[lo] + 1 }
  }
}

/** Collects findings of one file; positions are given as offsets and resolved at once. */
export class FindingList {
  private readonly items: Finding[] = []
  private readonly seen = new Set<string>()

  constructor(private readonly index: LineIndex) {}

  add(severity: Severity, path: string, offset: number, message: string): void {
    const { line, column } = this.index.locate(offset)
    const oneLine = message.replace(/\s*[\r\n]\s*/g, ' ')
    const shownPath = (path || '(root)').replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    const key = `${line}:${column}:${severity}:${shownPath}:${oneLine}`
    if (this.seen.has(key)) return
    this.seen.add(key)
    this.items.push({ line, column, severity, path: shownPath, message: oneLine })
  }

  error(path: string, offset: number, message: string): void {
    this.add('error', path, offset, message)
  }

  warning(path: string, offset: number, message: string): void {
    this.add('warning', path, offset, message)
  }

  /** The findings sorted by position; equal positions keep the order they were found in. */
  sorted(): Finding[] {
    return this.items
      .map((f, i) => ({ f, i }))
      .sort((a, b) => a.f.line - b.f.line || a.f.column - b.f.column || a.i - b.i)
      .map(({ f }) => f)
  }
}

/** Applies `--strict`: every warning becomes an error. */
export function toStrict(findings: Finding[]): Finding[] {
  return findings.map((f) => (f.severity === 'warning' ? { ...f, severity: 'error' as const } : f))
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** Text lines for one file: `FILE:LINE:COL: SEVERITY: PATH: MESSAGE`, then `FILE: valid` or the counts. */
export function formatTextReport(report: FileReport): string[] {
  const lines = report.findings.map(
    (f) => `${report.file}:${f.line}:${f.column}: ${f.severity}: ${f.path}: ${f.message}`,
  )
  const errors = report.findings.filter((f) => f.severity === 'error').length
  const warnings = report.findings.length - errors
  lines.push(errors === 0 ? `${report.file}: valid` : `${report.file}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}`)
  return lines
}

/** The JSON document printed by `--format json` for all files. */
export function formatJsonReport(reports: FileReport[], withEffective: boolean): string {
  const files = reports.map((r) => {
    const errors = r.findings.filter((f) => f.severity === 'error').length
    return {
      file: r.file,
      valid: r.unreadable === undefined && errors === 0,
      errors,
      warnings: r.findings.length - errors,
      ...(r.unreadable !== undefined && { unreadable: r.unreadable }),
      findings: r.findings.map((f) => ({ file: r.file, ...f })),
      ...(withEffective && r.effective !== undefined && { effective: r.effective }),
    }
  })
  return JSON.stringify({ valid: files.every((f) => f.valid), files }, null, 2)
}
