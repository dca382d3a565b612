/** Wall and CPU time of each start-up phase, logged at debug level at the end of startServer. */

export interface StartPhases {
  /** Ends the phase called `name`: its time is the time since the previous phase ended. */
  end(name: string): void
  done(): { ms: Record<string, number>; cpuMs: Record<string, number> }
}

/**
 * Wall and CPU milliseconds of each start-up phase: `modules` is the time from the process's start to startServer
 * (loading and compiling the code), each later phase the time since the previous one ended.
 */
export function startPhases(): StartPhases {
  const cpuNow = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const ms: Record<string, number> = { modules: Math.round(performance.now()) }
  const cpuMs: Record<string, number> = { modules: Math.round(cpuNow()) }
  let last = performance.now()
  let lastCpu = cpuNow()
  return {
    end(name) {
      const [now, cpu] = [performance.now(), cpuNow()]
      ms[name] = Math.round(now - last)
      cpuMs[name] = Math.round(cpu - lastCpu)
      ;[last, lastCpu] = [now, cpu]
    },
    done: () => ({ ms, cpuMs }),
  }
}
