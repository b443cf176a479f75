/** @module A worker for the worker-pool tests: echoes, throws, dies, waits or meets, as each task says; counts the gifts it is given. */
import { threadId, workerData } from 'node:worker_threads'
import { serveTasks } from '../../src/runner/worker-pool.js'

export type PoolTestTask =
  | { readonly kind: 'echo'; readonly value: number }
  | { readonly kind: 'throw' }
  | { readonly kind: 'die' }
  | { readonly kind: 'bytes'; readonly length: number }
  | { readonly kind: 'wait'; readonly ms: number }
  /** Blocks this worker's thread for `ms` (as a query on an embedded store does). */
  | { readonly kind: 'block'; readonly ms: number }
  /** Ends this worker once `signal[0]` is set (the task stays claimed meanwhile; the thread is not blocked). */
  | { readonly kind: 'dieOn'; readonly signal: Int32Array }
  /** Blocks this thread until `count` tasks have met at `seen` (a shared counter): only as many threads at once get past. */
  | { readonly kind: 'meet'; readonly seen: Int32Array; readonly count: number }
export interface PoolTestResult {
  readonly value?: number
  readonly thread: number
  readonly data: unknown
  readonly bytes?: Uint8Array
  /** Bytes of the gifts this worker has been given so far. */
  readonly gifted: number
}

let gifted = 0

serveTasks<PoolTestTask, PoolTestResult, ArrayBuffer[]>(
  async (task) => {
    if (task.kind === 'throw') throw new Error('thrown in the worker')
    if (task.kind === 'die') process.exit(3) // in a worker thread: ends this thread alone
    if (task.kind === 'dieOn') {
      while (Atomics.load(task.signal, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      process.exit(3)
    }
    if (task.kind === 'wait') await new Promise((resolve) => setTimeout(resolve, task.ms))
    if (task.kind === 'block') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, task.ms)
    if (task.kind === 'meet') {
      Atomics.add(task.seen, 0, 1)
      Atomics.notify(task.seen, 0)
      for (let n; (n = Atomics.load(task.seen, 0)) < task.count;)
        if (Atomics.wait(task.seen, 0, n, 30_000) === 'timed-out') throw new Error('no other task met this one')
    }
    if (task.kind === 'bytes') {
      const bytes = new Uint8Array(task.length).fill(7)
      return { result: { thread: threadId, data: workerData, bytes, gifted }, transfer: [bytes.buffer] }
    }
    return {
      result: { value: task.kind === 'echo' ? task.value : undefined, thread: threadId, data: workerData, gifted },
    }
  },
  (gift) => void (gifted += gift.reduce((n, b) => n + b.byteLength, 0)),
)
