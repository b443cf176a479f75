/** @module The worker pool behind --workers: uncached klines tasks run on every core (Piscina), answers come back as moved bytes. */
import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import { fromErrorData, type AnswerTask, type BatchTask, type QueryRunner, type StoreReadObserver } from '../api/query-runner.js'
import type { WorkerConfig, WorkerResult, WorkerTask } from './query-worker.js'

/** Symbols per worker task of a batch: small enough to spread one batch over the cores and bound its memory, large enough to amortize a hop. */
const BATCH_GROUP = 4

/** The default of --workers: one per core. */
export const defaultWorkers = (): number => availableParallelism()

export function poolRunner(workers: number, config: WorkerConfig): QueryRunner {
  const pool = new Piscina<WorkerTask, WorkerResult>({
    filename: new URL('./query-worker.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: Infinity,
    // Piscina's default parks an idle worker in Atomics.wait, which stops its event loop between tasks:
    // the store's background timers (ClickHouse health pings, snapshot polling) then never ran, and a
    // worker that saw an outage answered 503 forever. Message-passing keeps each worker's loop running.
    atomics: 'disabled',
    workerData: config,
  })
  let observe: StoreReadObserver = () => {}
  const run = async (task: WorkerTask): Promise<Buffer[]> => {
    const result = await pool.run(task)
    for (const [operation, seconds] of result.reads) observe(operation, seconds)
    if ('error' in result) throw fromErrorData(result.error)
    return result.bytes.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)) // the moved memory, not a copy
  }
  return {
    answer: async (task: AnswerTask) => (await run(task))[0],
    async *batch(task: BatchTask) {
      // Groups go out ahead (one per worker, and one more) and come back in order: the answer streams,
      // and at most that many groups are held.
      const groups: BatchTask[] = []
      for (let i = 0; i < task.symbols.length; i += BATCH_GROUP) groups.push({ ...task, symbols: task.symbols.slice(i, i + BATCH_GROUP) })
      const ahead = workers + 1
      const pending: Promise<Buffer[]>[] = []
      let next = 0
      const refill = () => {
        while (next < groups.length && pending.length < ahead) {
          const p = run(groups[next++])
          p.catch(() => {}) // seen when its turn comes; a client that left must not make it unhandled
          pending.push(p)
        }
      }
      refill()
      let first = true
      while (pending.length > 0) {
        const pieces = await pending.shift()!
        refill()
        if (!first) yield ','
        first = false
        yield* pieces
      }
    },
    textPieces: false,
    queueSize: () => pool.queueSize,
    onStoreReads: (observer) => void (observe = observer),
    close: () => pool.destroy(),
  }
}
