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
import type { IngestWrites, Pushed, PushOutcome } from './live-ingest.js'
import type { PushedBar } from './pushed-rows.js'

export interface IngestThreadConfig {
  readonly store: StoreLocation
  readonly keys?: StoreLocation
  /** The thread's nice value (0..19, where the system keeps one per thread: Linux); 0 or absent: the process's. */
  readonly nice?: number
}

export type IngestTask =
  | { readonly kind: 'fold' }
  | { readonly kind: 'quotes'; readonly rows: readonly PushedQuote[] }
  | { readonly kind: 'bars'; readonly rows: readonly PushedBar[] }
  | { readonly kind: 'depth'; readonly rows: readonly MarketDepth[] }

/**
 * A quote push's answer as it crosses back: its outcome and, in order, the index in the push of each
 * quote it accepted with the name it went out with (the main thread holds the quotes themselves).
 */
export interface QuotesPushed {
  readonly outcome: PushOutcome
  readonly accepted: Int32Array
  readonly names: readonly (string | null)[]
}

/** A push's outcome and the events it published, once durable; a fold step's `more`; or the MdqError to answer instead. */
export type IngestReply = Pushed | QuotesPushed | { readonly more: boolean } | { readonly error: ErrorData }

/** The QuotesPushed of `pushed`, the answer to a push of `quotes` (its events: those quotes, accepted). */
export function quotesPushed(pushed: Pushed, quotes: readonly PushedQuote[]): QuotesPushed {
  const at = new Map(quotes.map((q, i) => [q, i]))
  const accepted = new Int32Array(pushed.events.length)
  const names: (string | null)[] = []
  pushed.events.forEach((e, k) => {
    if (e.kind !== 'quote') throw new Error(`a quote push published a ${e.kind} event`)
    accepted[k] = at.get(e.quote)!
    names.push(e.name)
  })
  return { outcome: pushed.outcome, accepted, names }
}

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

  writeQuotes = async (rows: readonly PushedQuote[]): Promise<Pushed> => {
    const reply = await this.#run({ kind: 'quotes', rows })
    if (!('accepted' in reply)) throw new Error('the ingest thread answered a quote push without what it accepted')
    const { outcome, accepted, names } = reply
    return { outcome, events: Array.from(accepted, (i, k) => ({ kind: 'quote', quote: rows[i], name: names[k] })) }
  }
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

  async #push(task: Exclude<IngestTask, { kind: 'fold' | 'quotes' }>): Promise<Pushed> {
    const reply = await this.#run(task)
    if (!('events' in reply)) throw new Error('the ingest thread answered a push without its events')
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
