/**
 * @module The ingest on a thread of its own, for a store whose writes hold the calling thread (SQLite,
 * StoreCapabilities' blockingReads): a push is checked on the main thread, written and made durable
 * on the ingest thread (ingest-worker.ts) while the main thread goes on answering reads, and what it
 * accepted comes back with its answer to be published on the main thread, whose streams carry it.
 * The store's upkeep of appends runs on the ingest thread too.
 */
import type { MarketDepth } from '../domain/depth.js'
import type { ErrorData } from '../runner/query-runner.js'
import { fromErrorData } from '../runner/query-runner.js'
import { WorkerPool } from '../runner/worker-pool.js'
import type { StoreLocation } from '../store/backends.js'
import type { PushedQuote } from '../live/live-feed.js'
import type { IngestWrites, Pushed } from './live-ingest.js'
import type { PushedBar } from './pushed-rows.js'

export interface IngestThreadConfig {
  readonly store: StoreLocation
  readonly keys?: StoreLocation
}

export type IngestTask =
  | { readonly kind: 'fold' }
  | { readonly kind: 'quotes'; readonly rows: readonly PushedQuote[] }
  | { readonly kind: 'bars'; readonly rows: readonly PushedBar[] }
  | { readonly kind: 'depth'; readonly rows: readonly MarketDepth[] }

/** A push's outcome and the events it published, once durable; a fold step's `more`; or the MdqError to answer instead. */
export type IngestReply = Pushed | { readonly more: boolean } | { readonly error: ErrorData }

export class ThreadedIngest implements IngestWrites {
  /** One thread: its LiveIngest keeps each symbol's builder state in commit order. */
  readonly #pool: WorkerPool<IngestTask, IngestReply>

  constructor(config: IngestThreadConfig) {
    this.#pool = new WorkerPool({
      filename: new URL('./ingest-worker.js', import.meta.url),
      threads: 1,
      tasksPerThread: 1,
      workerData: config,
    })
  }

  writeQuotes = (rows: readonly PushedQuote[]) => this.#push({ kind: 'quotes', rows })
  writeBars = (rows: readonly PushedBar[]) => this.#push({ kind: 'bars', rows })
  writeDepth = (rows: readonly MarketDepth[]) => this.#push({ kind: 'depth', rows })

  /**
   * One step of the store's upkeep of appends (MarketStore.foldAppends), on the ingest thread: there
   * it holds no read of the main thread, and it never meets a push's transaction (one write at a time).
   */
  foldAppends = async (): Promise<boolean> => {
    const reply = await this.#run({ kind: 'fold' })
    return 'more' in reply && reply.more
  }

  async #push(task: Exclude<IngestTask, { kind: 'fold' }>): Promise<Pushed> {
    const reply = await this.#run(task)
    if (!('outcome' in reply)) throw new Error('the ingest thread answered a push without its outcome')
    return reply
  }

  async #run(task: IngestTask): Promise<Exclude<IngestReply, { error: ErrorData }>> {
    const reply = await this.#pool.run(task)
    if ('error' in reply) throw fromErrorData(reply.error)
    return reply
  }

  /** Stops the thread: a push still running there is not answered (it may or may not have been committed). */
  close = (): Promise<void> => this.#pool.destroy()
}
