/** @module Where the real reference data lives (../shared/data beside the checkout, or MDQ_SHARED_DATA). */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: the nearest folder above this file holding package.json. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir)
    if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url))
    dir = up
  }
  return dir
}

export const SHARED_DATA = process.env.MDQ_SHARED_DATA ?? resolve(repoRoot(), '..', 'shared', 'data')

export function sharedPath(relative: string): string {
  return join(SHARED_DATA, relative)
}

/** Lines of a text file, CR stripped, empty lines dropped. */
export function readLines(relative: string): string[] {
  return readFileSync(sharedPath(relative), 'utf8')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.length > 0)
}
