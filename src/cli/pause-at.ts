/** @module Crash tests' hook: a write stops at a named checkpoint, so a test can kill the process exactly there (or resume it). */
import type { ImportCheckpoint } from '../ingest/import-target.js'

/**
 * For crash tests only: a value such as `bars:3` (from MDQ_IMPORT_PAUSE_AT or MDQ_COPY_PAUSE_AT)
 * stops the process at that checkpoint (ingest/import-target.ts), after saying so on stderr, so a test
 * can kill it exactly there, or let it go on with SIGCONT (an import paused longer than a vacuum's grace).
 */
export function pauseAt(point: string | undefined, what: string): ImportCheckpoint | undefined {
  if (!point) return undefined
  return (reached) => {
    if (reached !== point) return
    process.stderr.write(`${what} paused at ${point}\n`)
    process.kill(process.pid, 'SIGSTOP') // every thread stops here, timers too, until SIGCONT or SIGKILL
  }
}
