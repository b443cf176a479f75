/**
 * @module Room kept beside a SQLite file for what must work on a full disk: opening the store to
 * serve it, and revoking an API key. Opening a WAL-mode file creates its `-shm` (32 KB) and `-wal`
 * files, and a revocation appends a page or two to the `-wal`: on a full disk both fail with SQLite's
 * "disk I/O error" or "database or disk is full". So each file keeps `<file>-reserve`, a small file of
 * random bytes (not sparse, not compressible) made while there is room; when one of those must-work
 * steps meets a full disk, the reserve gives back a slice of its room and the step is tried again,
 * so one reserve lasts for several such steps on a disk that fills up again in between.
 */
import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, rmSync, statfsSync, statSync, truncateSync, writeSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { MdqError } from '../../domain/errors.js'

/** Room kept per file. */
export const RESERVE_BYTES = 512 * 1024
/** Room given back at a time: a `-shm` file (32 KB) and a `-wal` of a few pages. */
const RESERVE_SLICE_BYTES = 64 * 1024
/** A reserve is made only with this much room left besides it, so making it never fills a disk. */
const MAKE_RESERVE_ABOVE = 4 * RESERVE_BYTES

export const reservePath = (dbPath: string): string => `${dbPath}-reserve`

/** Bytes an unprivileged writer may still use on the file system holding `dbPath`. */
export function freeBytes(dbPath: string): number {
  const fs = statfsSync(dirname(resolve(dbPath)))
  return fs.bavail * fs.bsize
}

/** Makes (or completes) the file's reserve, when the disk has room to spare; never fails. */
export function keepReserve(dbPath: string): void {
  if (dbPath === ':memory:') return
  const path = reservePath(dbPath)
  try {
    if (existsSync(path) && statSync(path).size >= RESERVE_BYTES) return
    if (freeBytes(dbPath) < MAKE_RESERVE_ABOVE) return
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, randomBytes(RESERVE_BYTES))
    } finally {
      closeSync(fd)
    }
  } catch {
    rmSync(path, { force: true }) // a partial reserve is no reserve
  }
}

/** Whether `err` is a write that failed for want of room on the disk holding `dbPath`. */
export function isDiskFull(err: unknown, dbPath: string): boolean {
  if (dbPath === ':memory:') return false
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true
  // A -shm that cannot grow is an I/O error, not SQLITE_FULL: ask the file system.
  const io = err instanceof Database.SqliteError && /^SQLITE_(IOERR|CANTOPEN)/.test(err.code)
  try {
    return io && freeBytes(dbPath) < RESERVE_BYTES
  } catch {
    return false
  }
}

/** The one message for a full disk: where, how much is left, and what to do. */
export function diskFullError(dbPath: string, what: string): MdqError {
  let free = ''
  try {
    free = ` (${Math.floor(freeBytes(dbPath) / 1024)} KB free)`
  } catch {
    // the size is a courtesy
  }
  return new MdqError(
    'STORE_UNAVAILABLE',
    `the disk holding ${dirname(resolve(dbPath))} is full${free}: ${what}; free some space and try again`,
  )
}

/** `action`'s error, or the full-disk error in its place when the disk is full. */
export function orDiskFull(err: unknown, dbPath: string, what: string): unknown {
  return isDiskFull(err, dbPath) ? diskFullError(dbPath, what) : err
}

/** Runs `action`, its failure on a full disk said so. */
export function orDiskFullThrown<T>(dbPath: string, what: string, action: () => T): T {
  try {
    return action()
  } catch (err) {
    throw orDiskFull(err, dbPath, what)
  }
}

/** `steps` (an object of async functions, such as a store writer) with each failure on a full disk said so. */
export function sayingDiskFull<S extends object>(steps: S, dbPath: string, what: string): S {
  const said: Record<string, unknown> = {}
  for (const [name, step] of Object.entries(steps) as [string, (...args: unknown[]) => Promise<unknown>][])
    said[name] = async (...args: unknown[]) => {
      try {
        return await step(...args)
      } catch (err) {
        throw orDiskFull(err, dbPath, what)
      }
    }
  return said as S
}

/** The operator hears on stderr that a reserve was used: space must be freed before anything else needs it. */
const warnOnStderr = (message: string) => void process.stderr.write(`mdq: warning: ${message}\n`)

/** Gives a slice of the file's reserve back to the disk; false when there is no reserve left. */
function sliceReserve(dbPath: string): boolean {
  const path = reservePath(dbPath)
  try {
    const left = statSync(path).size - RESERVE_SLICE_BYTES
    if (left > 0) truncateSync(path, left)
    else rmSync(path)
    return true
  } catch {
    return false
  }
}

/** Runs `action`; while the disk is full, gives back a slice of the file's reserve and runs it again. */
export function withReserve<T>(dbPath: string, what: string, action: () => T, warn = warnOnStderr): T {
  for (let slices = 0; ; slices++) {
    try {
      const done = action()
      if (slices > 0)
        warn(
          `the disk holding ${dirname(resolve(dbPath))} is full: used ${(slices * RESERVE_SLICE_BYTES) / 1024} KB of the room kept in ${reservePath(dbPath)} to ${what}; free some space`,
        )
      return done
    } catch (err) {
      if (!isDiskFull(err, dbPath) || !sliceReserve(dbPath)) throw orDiskFull(err, dbPath, what)
    }
  }
}
