/** The console, built at transpile time (console-build.ts, a macro): its page and content-hashed assets. */
import { buildConsole } from './console-build.ts' with { type: 'macro' }

export const CONSOLE = buildConsole()
