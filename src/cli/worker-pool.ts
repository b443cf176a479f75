/**
 * @module A fixed pool of worker threads running one task function, over each worker's own message
 * port. Piscina did this until a window of 1m bars cost 34-46 us of main-thread CPU a round trip in
 * Piscina against 7-9 us over a bare port (a micro test, 2 workers, 8 in flight): its per-task
 * AsyncResource, abort wiring and task objects were most of what a small answer's hop cost.
 */
import { isMainThread, parentPort, Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads'

export interface WorkerPoolOptions {
  /** The worker's module: it calls `serveTasks` with its task function. */
  readonly filename: URL
  readonly threads: number
  /** Tasks given to a worker at once (it runs them one after another): it starts the next without a round trip. */
  readonly tasksPerThread: number
  readonly workerData: unknown
  readonly resourceLimits?: ResourceLimits
}

/** What a worker posts back for task `id`: its result, or the message and stack of what it threw. */
type Reply = readonly [id: number, ok: true, result: unknown] | readonly [id: number, ok: false, error: { readonly message: string; readonly stack?: string }]

interface Pending<R> {
  readonly id: number
  readonly task: unknown
  readonly transfer: readonly TransferListItem[]
  readonly resolve: (result: R) => void
  readonly reject: (err: Error) => void
}

interface Thread<R> {
  readonly worker: Worker
  /** Tasks posted to this worker and not yet answered, by id. */
  readonly running: Map<number, Pending<R>>
}

export class WorkerPool<T, R> {
  readonly #threads: Thread<R>[] = []
  /** Tasks waiting for a worker with room, oldest first. */
  readonly #queue: Pending<R>[] = []
  #nextId = 0
  #closed = false

  constructor(private readonly opts: WorkerPoolOptions) {
    for (let i = 0; i < opts.threads; i++) this.#threads.push(this.#start())
  }

  /** Tasks waiting for a free worker. */
  get queueSize(): number {
    return this.#queue.length
  }

  /** Runs `task` on the least busy worker (or when one has room), moving `transfer` to it. */
  run(task: T, transfer: readonly TransferListItem[] = []): Promise<R> {
    if (this.#closed) return Promise.reject(new Error('the worker pool is closed'))
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, task, transfer, resolve, reject })
      this.#dispatch()
    })
  }

  /** Stops every worker; tasks not yet answered are rejected. */
  async destroy(): Promise<void> {
    this.#closed = true
    const gone = new Error('the worker pool was closed before the task ended')
    for (const p of this.#queue.splice(0)) p.reject(gone)
    await Promise.all(
      this.#threads.map(async (t) => {
        for (const p of t.running.values()) p.reject(gone)
        t.running.clear()
        await t.worker.terminate()
      }),
    )
  }

  #start(): Thread<R> {
    const worker = new Worker(this.opts.filename, { workerData: this.opts.workerData, resourceLimits: this.opts.resourceLimits })
    const thread: Thread<R> = { worker, running: new Map() }
    // An idle worker does not keep the process alive (as Piscina's did not); one with tasks does.
    worker.unref()
    worker.on('message', (reply: Reply) => {
      const pending = thread.running.get(reply[0])
      if (pending === undefined) return
      thread.running.delete(reply[0])
      if (thread.running.size === 0) worker.unref()
      if (reply[1]) pending.resolve(reply[2] as R)
      else pending.reject(Object.assign(new Error(reply[2].message), { stack: reply[2].stack }))
      this.#dispatch()
    })
    // A worker that dies (an uncaught error, out of memory) fails its own tasks and is replaced.
    const died = (err: Error) => {
      const i = this.#threads.indexOf(thread)
      if (i < 0) return
      for (const p of thread.running.values()) p.reject(err)
      thread.running.clear()
      if (this.#closed) return
      this.#threads[i] = this.#start()
      this.#dispatch()
    }
    worker.on('error', died)
    worker.on('exit', (code) => died(new Error(`a query worker exited (code ${code})`)))
    return thread
  }

  /** Posts waiting tasks, oldest first, each to the worker running the fewest. */
  #dispatch(): void {
    while (this.#queue.length > 0) {
      let best: Thread<R> | undefined
      for (const t of this.#threads) if (t.running.size < this.opts.tasksPerThread && (best === undefined || t.running.size < best.running.size)) best = t
      if (best === undefined) return
      const p = this.#queue.shift()!
      if (best.running.size === 0) best.worker.ref()
      best.running.set(p.id, p)
      best.worker.postMessage([p.id, p.task], p.transfer)
    }
  }
}

/** What a task function gives back: the result, and the memory in it to move rather than copy. */
export interface TaskResult<R> {
  readonly result: R
  readonly transfer?: readonly TransferListItem[]
}

/** In a worker: answers each task the pool posts with `run`, in order of arrival (a second one may start while the first awaits). */
export function serveTasks<T, R>(run: (task: T) => Promise<TaskResult<R>>): void {
  if (isMainThread || parentPort === null) throw new Error('serveTasks runs in a worker thread')
  const port = parentPort
  port.on('message', ([id, task]: [number, T]) => {
    run(task).then(
      ({ result, transfer }) => port.postMessage([id, true, result], transfer),
      (err: unknown) => port.postMessage([id, false, { message: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined }]),
    )
  })
}
