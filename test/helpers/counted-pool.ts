/** @module A worker pool over a store file whose `written` calls are counted: what the recycle tests watch to see memory reused. */
import type { QueryRunner } from '../../src/api/query-runner.js'
import { poolRunner } from '../../src/cli/query-pool.js'

export interface CountedPool {
  /** The pool itself (close it when done). */
  readonly pool: QueryRunner
  /** The pool, its `written` counting each call before passing it on. */
  readonly runner: QueryRunner
  /** Pieces or answers the pool has been told were written so far (each one's memory then goes back to a worker). */
  readonly written: () => number
}

export function countedPool(db: string, workers = 2): CountedPool {
  const pool = poolRunner(workers, { store: db })
  let count = 0
  const runner = {
    ...pool,
    written(piece: Buffer) {
      count++
      pool.written!(piece)
    },
  }
  return { pool, runner, written: () => count }
}
