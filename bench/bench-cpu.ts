/**
 * CPU time of a process, read from /proc/<pid>/stat (Linux): user + system time of every thread of the process, so a
 * figure divided by the requests the process answered is the CPU one request cost it. Unlike requests per second,
 * this barely moves when other processes share the machine (they take wall time from the server, not CPU per request).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** Clock ticks per second of the kernel's accounting (`getconf CLK_TCK`; 100 on every common Linux). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/** User + system CPU seconds `pid` has used so far, or undefined where /proc cannot be read (not Linux, process gone). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name (field 2) is in parentheses and may hold spaces: count fields after its closing one
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields 14 (utime) and 15 (stime) of proc(5), counted from field 3 here
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/** Runs `work` and returns its result with the CPU seconds `pid` used meanwhile (NaN where /proc is unreadable). */
export async function withCpuOf<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpuSeconds: number }> {
  const before = cpuSecondsOf(pid)
  const result = await work()
  const after = cpuSecondsOf(pid)
  return { result, cpuSeconds: before === undefined || after === undefined ? NaN : after - before }
}

/** CPU microseconds per operation, formatted for a figure line. */
export function formatCpuPerOp(cpuSeconds: number, ops: number): string {
  return ops > 0 && Number.isFinite(cpuSeconds) ? `${((cpuSeconds * 1e6) / ops).toFixed(0)} µs CPU/op` : 'CPU/op n/a'
}

/** The machine's CPU ticks so far (all states) and those stolen by the hypervisor, from the first line of /proc/stat. */
function machineTicks(): { steal: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
    return { steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) }
  } catch {
    return undefined
  }
}

/**
 * Starts a steal-time reading; the function it returns gives the percentage of the machine's CPU time the hypervisor
 * gave to other guests since (NaN where /proc/stat is unreadable). High steal means a shared host: CPU per request
 * rises with it (caches, descheduled vCPUs), so figures are printed with it.
 */
export function startStealReading(): () => number {
  const before = machineTicks()
  return () => {
    const after = machineTicks()
    if (!before || !after || after.total === before.total) return NaN
    return (100 * (after.steal - before.steal)) / (after.total - before.total)
  }
}
