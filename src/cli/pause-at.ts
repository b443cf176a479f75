/** @module Crash tests' hook: a write stops for good at a named checkpoint, so a test can kill the process exactly there. */
import type { ImportCheckpoint } from '../ingest/import-target.js'

/**
 * For crash tests only: a value such as `bars:3` (from MDQ_IMPORT_PAUSE_AT or MDQ_COPY_PAUSE_AT)
 * stops the write for good at that checkpoint (ingest/import-target.ts), after saying so on stderr.
 */
export function pauseAt(point: string | undefined, what: string): ImportCheckpoint | undefined {
  if (!point) return undefined
  return (reached) => {
    if (reached !== point) return
    process.stderr.write(`${what} paused at ${point}\n`)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0) // blocks this thread until killed
  }
}
