/** @module A worker pool over a store file whose `written` calls are counted, served beside the main thread: what the recycle tests watch to see memory reused. */
import { parseStoreUrl } from '../../src/store/backends.js'
import type { QueryRunner } from '../../src/runner/query-runner.js'
import { poolRunner } from '../../src/runner/query-pool.js'
import { startServer, type TestServer } from './server.js'

export interface PoolBesideMainThread {
  /** The pool itself. */
  readonly pool: QueryRunner
  /** A server whose query work runs in its main thread: the reference bytes. */
  readonly inThread: TestServer
  /** A server on the pool, `written` counted. Neither server has a response cache. */
  readonly pooled: TestServer
  /** Pieces or answers the pool has been told were written so far (each one's memory then goes back to a worker). */
  readonly written: () => number
  /** Stops both servers and the pool. */
  readonly close: () => Promise<void>
}

export async function poolBesideMainThread(db: string, workers = 2): Promise<PoolBesideMainThread> {
  const pool = poolRunner(workers, { store: parseStoreUrl(db) }, { blockingReads: true })
  let count = 0
  const runner = {
    ...pool,
    written(piece: Buffer) {
      count++
      pool.written!(piece)
    },
  }
  const inThread = await startServer(db, { responseCacheBytes: 0 })
  const pooled = await startServer(db, { responseCacheBytes: 0, runner })
  return {
    pool,
    inThread,
    pooled,
    written: () => count,
    close: async () => void (await Promise.all([inThread.close(), pooled.close(), pool.close()])),
  }
}
