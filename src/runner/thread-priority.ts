/**
 * @module A thread's scheduling priority, lowered for work that should yield the CPU to answers (the
 * ingest thread's writes). Linux keeps a nice value per thread, and `/proc/thread-self` names the
 * calling thread's id, which `setpriority` takes in place of a process id; elsewhere nothing changes.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

/** This thread's id where the system names it (Linux), else undefined. */
export function threadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isSafeInteger(tid) && tid > 0 ? tid : undefined
  } catch {
    return undefined
  }
}

/**
 * Lowers the calling thread's priority to `nice` (0..19; higher yields more), the rest of the process
 * unchanged. Returns whether it took: false where threads have no priority of their own.
 */
export function lowerThreadPriority(nice: number): boolean {
  const tid = threadId()
  if (tid === undefined) return false
  try {
    setPriority(tid, nice)
    return true
  } catch {
    return false
  }
}
