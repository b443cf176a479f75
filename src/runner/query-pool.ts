/** @module The worker pool behind --workers: uncached klines tasks run on every core (worker-pool.ts), answers come back as moved bytes. */
import { availableParallelism } from 'node:os'
import { attachGzip, deflatePiece, markGzipped, type DeflatedPiece } from '../encode/gzip-member.js'
import {
  fromErrorData,
  taskPieces,
  type AnswerTask,
  type AnswerUse,
  type BatchTask,
  type QueryRunner,
  type StoreReadObserver,
} from './query-runner.js'
import { answerVersion } from '../query/answer-version.js'
import type { SymbolContexts } from '../query/symbol-context.js'
import type { MarketStore, StoreCapabilities } from '../store/market-store.js'
import type { WorkerConfig, WorkerResult, WorkerTask } from './query-worker.js'
import { WorkerPool } from './worker-pool.js'

/**
 * Bars per worker task of a batch, at most: a task's symbols are as many as `count` bars each fit in
 * this (at least one), so a hop and its copy stay small beside the work (one 10,000-bar history is
 * about 7 ms of work and 0.7 MB of JSON), and a batch holds few bytes in flight.
 */
const GROUP_BARS = 10_000
/** The bars of an intraday answer without a count: one trading day of 1m bars at most (US: 390). */
const DAY_OF_MINUTES = 400
/**
 * Tasks a worker runs at once on a store whose reads wait on a server (StoreCapabilities'
 * blockingReads): its thread works on others while their queries are out (a query takes a round
 * trip and the server's scheduling, tens of ms on a busy machine: two tasks at a time held a worker
 * to a few dozen a second), and the store sends their reads together, a few queries at a time. On a
 * blocking store, one.
 */
const WAITING_TASKS_PER_WORKER = 16
/**
 * Batch groups computed ahead per worker: on a blocking store one running and one posted, so a worker
 * that finishes one starts the next at once; on a waiting store as many as a worker runs at once, so
 * their reads go out together.
 */
const groupsAheadPerWorker = (store: Pick<StoreCapabilities, 'blockingReads'>) =>
  store.blockingReads ? 2 : WAITING_TASKS_PER_WORKER
/**
 * A worker's young generation (semi-spaces), in MB. On a blocking store each task makes megabytes of
 * short-lived arrays and JSON pieces, and V8's default lets that grow to 16 MB per semi-space in
 * every worker, held after the work is done; small, it is collected more often at little cost (few
 * survivors). On a waiting store a task's objects live across its reads' round trips, and small
 * collections every few ms promoted them all, for full collections to sweep (a third of a worker's
 * time on batches of short reads): there, room for a round trip's garbage (measured when single
 * answers ran in the workers too: 1m windows under load 515-544 -> 638-658 req/s, mdq's CPU 1.9-2.1
 * -> 1.4 ms a request; the workers now take only batches there).
 */
const workerYoungMb = (store: Pick<StoreCapabilities, 'blockingReads'>) => (store.blockingReads ? 4 : 32)
/**
 * Answer memory kept for the workers once written, at most, in bytes (a 10,000-bar group is about
 * 0.7 MB). Each batch task takes one such buffer back to its worker, which writes its answer there: so
 * a bulk pull makes no new external memory in the main thread, whose growth was what started its
 * major GCs (a mark-compact about every 150 ms, 1.7 GB of answers per full pull).
 */
const SPARE_BYTES = 16 << 20

/**
 * The nice value of the worker that computes answers in the background (AnswerUse's `background`):
 * no request waits on them, so the cached answers sent meanwhile, the queries requests wait on and
 * the feed take the CPU first. (With a driver outside the repo, three rounds at the market's pace,
 * the reads' p99 with these answers on the query threads at their own priority against at nice 10
 * moved within that hour's noise: docs/benchmarks.md, "live", F.)
 */
const BACKGROUND_NICE = 10

/** The default of --workers: one per core. */
export const defaultWorkers = (): number => availableParallelism()

/** A batch's symbols in groups of about GROUP_BARS bars, spread over at least the workers. */
export function batchGroups(task: BatchTask, workers: number): BatchTask[] {
  const barsEach = (task.kind === 'klines-batch' ? task.range.count : task.count) ?? DAY_OF_MINUTES
  const size = Math.max(1, Math.min(Math.floor(GROUP_BARS / barsEach), Math.ceil(task.symbols.length / workers)))
  const groups: BatchTask[] = []
  for (let i = 0; i < task.symbols.length; i += size) groups.push({ ...task, symbols: task.symbols.slice(i, i + size) })
  return groups
}

/** A task's bytes computed in the main thread, as a worker would have computed them. */
const inMainThread = async (store: MarketStore, contexts: SymbolContexts, task: WorkerTask): Promise<Buffer> =>
  Buffer.concat(await taskPieces(store, contexts, task))

/** An answer's bytes as its worker encoded them (WorkerResult): marked when they are its gzip member, with the member attached when it came beside. */
function withGzip(bytes: Buffer, result: { readonly gzipped?: true; readonly gzip?: Uint8Array }): Buffer {
  if (result.gzipped) return markGzipped(bytes)
  return result.gzip ? attachGzip(bytes, asBuffer(result.gzip)) : bytes
}

/** A worker's bytes as a Buffer over the moved memory, not a copy. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** `store`: the capability of the store the workers open that sets how many tasks each runs at once. */
export function poolRunner(
  workers: number,
  config: WorkerConfig,
  store: Pick<StoreCapabilities, 'blockingReads'>,
): QueryRunner {
  // Each worker's event loop keeps running between tasks (it waits on its port, never in Atomics.wait):
  // the store's background timers (ClickHouse health pings, snapshot polling) must run there.
  const workersOf = (threads: number, data: WorkerConfig) =>
    new WorkerPool<WorkerTask, WorkerResult, ArrayBuffer[]>({
      filename: new URL('./query-worker.js', import.meta.url),
      threads,
      tasksPerThread: store.blockingReads ? 1 : WAITING_TASKS_PER_WORKER,
      resourceLimits: { maxYoungGenerationSizeMb: workerYoungMb(store) },
      workerData: data,
    })
  const pool = workersOf(workers, config)
  /** One worker at a lower priority for answers no request waits on, started at the first (never once closed). */
  let background: ReturnType<typeof workersOf> | undefined
  let closed = false
  const poolFor = (task: WorkerTask) => {
    if (!task.background) return pool
    if (closed) throw new Error('the query workers are closed')
    return (background ??= workersOf(1, { ...config, nice: BACKGROUND_NICE }))
  }
  let observe: StoreReadObserver = () => {}
  let main: { store: MarketStore; contexts: SymbolContexts } | undefined
  /** Written answers' memory, for the workers to write batch groups and handed-back answers into again (see SPARE_BYTES). */
  const spares: ArrayBuffer[] = []
  let spareBytes = 0
  /** The memory of the workers' bytes not yet handed back: only these come back as spares. */
  const streamed = new WeakSet<ArrayBufferLike>()
  /** The task's result from a worker, or undefined when the worker's store was at another data version than the main thread's. */
  const run = async (
    task: WorkerTask,
  ): Promise<{ bytes: Buffer; plain?: { crc: number; length: number } } | undefined> => {
    const version = main && answerVersion(await main.store.readVersions(), 'symbol' in task ? task.symbol : undefined)
    // Spare memory for each buffer the task makes: a gzip member beside an answer is a second one.
    const given: ArrayBuffer[] = []
    for (let n = task.encoding === 'gzip-beside' ? 2 : 1; n > 0 && spares.length > 0; n--) given.push(spares.pop()!)
    for (const spare of given) spareBytes -= spare.byteLength
    const result = await poolFor(task).run(task, given.length > 0 ? { value: given, transfer: given } : undefined)
    for (const [operation, seconds] of result.reads) observe(operation, seconds)
    if ('error' in result) throw fromErrorData(result.error)
    if (main && result.version !== version) return undefined // rare: just after an import
    for (const bytes of [result.bytes, result.gzip]) if (bytes) streamed.add(bytes.buffer) // their memory may come back through `written`
    return { bytes: withGzip(asBuffer(result.bytes), result), ...(result.plain && { plain: result.plain }) }
  }
  /** The task's bytes, from a worker or, at a data version of its own, from the main thread. */
  const bytes = async (task: WorkerTask): Promise<Buffer> =>
    (await run(task))?.bytes ?? inMainThread(main!.store, main!.contexts, task)
  /** The task's bytes as a raw deflate piece, deflated by its worker (or, as above, in the main thread). */
  const deflated = async (task: WorkerTask): Promise<DeflatedPiece> => {
    const result = await run({ ...task, encoding: 'deflate' })
    if (result === undefined)
      return deflatePiece(await inMainThread(main!.store, main!.contexts, task), { coder: config.coder })
    return { deflated: result.bytes, ...result.plain! }
  }
  /**
   * A batch's groups, run ahead (enough to keep every worker's queue full, and one more) and yielded in
   * order with a comma between: the answer streams, and at most that many groups are held.
   */
  async function* inOrder<T>(task: BatchTask, get: (group: BatchTask) => Promise<T>): AsyncGenerator<T | string> {
    const groups = batchGroups(task, workers)
    const ahead = workers * groupsAheadPerWorker(store) + 1
    const pending: Promise<T>[] = []
    let next = 0
    const refill = () => {
      while (next < groups.length && pending.length < ahead) {
        const p = get(groups[next++])
        p.catch(() => {}) // seen when its turn comes; a client that left must not make it unhandled
        pending.push(p)
      }
    }
    refill()
    let first = true
    while (pending.length > 0) {
      const piece = await pending.shift()!
      refill()
      if (!first) yield ','
      first = false
      yield piece
    }
  }
  return {
    // On a store whose reads wait on a server, one symbol's answer is mostly that wait: the main
    // thread's store sends its reads together with every other request's (fewer queries) and no hop
    // is paid. Batches, many histories to encode, still spread over the workers.
    answer: (task: AnswerTask, use?: AnswerUse) =>
      main && !store.blockingReads
        ? inMainThread(main.store, main.contexts, task)
        : bytes({
            ...task,
            ...(use?.gzip && { encoding: `gzip-${use.gzip}` as const }),
            ...(use?.background && { background: true }),
          }),
    batch: (task: BatchTask) => inOrder(task, bytes),
    deflatedBatch: (task: BatchTask) => inOrder(task, deflated),
    written(piece: Buffer) {
      const memory = piece.buffer
      if (!streamed.delete(memory) || !(memory instanceof ArrayBuffer) || memory.byteLength > SPARE_BYTES) return
      spares.push(memory)
      spareBytes += memory.byteLength
      // Over the bound, the oldest go: the latest answers' sizes are what the next tasks need (refusing
      // the new kept 16 MB of earlier large answers' memory, and no window's came back).
      while (spareBytes > SPARE_BYTES) spareBytes -= spares.shift()!.byteLength
    },
    textPieces: false,
    useMainStore: (store, contexts) => void (main = { store, contexts }),
    queueSize: () => pool.queueSize + (background?.queueSize ?? 0),
    onStoreReads: (observer) => void (observe = observer),
    close: async () => {
      closed = true
      await Promise.all([pool.destroy(), background?.destroy()])
    },
  }
}
