/**
 * @module A fixed pool of worker threads running one task function, over each worker's own message
 * port, with one queue they all take from. Every task is posted to every worker (to MAX_FAN_OUT of
 * them on a large machine); a worker that is free claims the oldest task no other worker has
 * claimed (a compare-and-swap on shared memory) and skips the claimed ones. So a worker never waits
 * on a round trip through the main thread for its next task, and no task waits behind a worker that
 * the OS has descheduled while another is free.
 * Not Piscina: a task's round trip there costs 34-46 us of main-thread CPU against 7-9 us over a bare
 * port (a micro test, 2 workers, 8 in flight): its per-task AsyncResource, abort wiring and task
 * objects are most of what a small answer's hop costs (docs/dependencies.md).
 */
import { isMainThread, parentPort, Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads'

export interface WorkerPoolOptions {
  /** The worker's module: it calls `serveTasks` with its task function. */
  readonly filename: URL
  readonly threads: number
  /**
   * Tasks a worker runs at once: 1 where a task's reads never wait (they block the worker's thread
   * anyway, and a second claimed task would only wait behind the first); more where they wait on a
   * server, so the worker's thread works while a query is out.
   */
  readonly tasksPerThread: number
  readonly workerData: unknown
  readonly resourceLimits?: ResourceLimits
}

/** Memory to hand to one worker with a task (whichever worker runs the task): its value and what in it is moved. */
export interface Gift<G> {
  readonly value: G
  readonly transfer: readonly TransferListItem[]
}

/** What a worker posts back for task `id`: its result, or the message and stack of what it threw. */
type Reply =
  | readonly [id: number, ok: true, result: unknown]
  | readonly [id: number, ok: false, error: { readonly message: string; readonly stack?: string }]
/** What the pool posts: first the worker's part of the queue, then each task (with a gift to one worker). */
interface Init {
  readonly claims: Int32Array
  readonly mark: number
  readonly tasksPerThread: number
}
type Posted = readonly [id: number, slot: number, task: unknown, gift?: unknown]

/**
 * Claim slots, one for each task posted and not answered, at most (more tasks wait in the main
 * thread): a task's slot holds `unclaimed(id)` until a worker swaps in its own negative mark, and is
 * free again once the task is answered.
 */
const SLOTS = 1024
/**
 * Workers each task is posted to, at most: every one on a small machine; on a large one, a task to
 * as many workers as this, in turn, so the main thread's cost per task stays bounded (a free worker
 * still finds a task among those it was sent: the tasks waiting are spread over every worker).
 */
export const MAX_FAN_OUT = 4
/** A slot's value while its task is unclaimed: the id itself (from 1), so a worker's stale copy of an older task in the same slot never matches. */
const unclaimed = (id: number) => (id % 0x3fffffff) + 1

interface Pending<R> {
  readonly id: number
  readonly task: unknown
  readonly gift?: Gift<unknown>
  readonly resolve: (result: R) => void
  readonly reject: (err: Error) => void
}
/** A task posted to its workers, with its claim slot. */
interface Out<R> extends Pending<R> {
  readonly slot: number
}

interface Thread {
  readonly worker: Worker
  /** This worker's claims are `-mark` (a new worker takes a new mark). */
  readonly mark: number
}

export class WorkerPool<T, R, G = never> {
  readonly #threads: Thread[] = []
  /** Tasks not yet posted (no claim slot free), oldest first. */
  readonly #queue: Pending<R>[] = []
  /** Tasks posted to their workers and not yet answered, by id (in posting order). */
  readonly #posted = new Map<number, Out<R>>()
  readonly #claims = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT))
  readonly #freeSlots = Array.from({ length: SLOTS }, (_, i) => i)
  #nextId = 0
  #nextMark = 1
  /** The first worker the next task is posted to (and its gift given to). */
  #turn = 0
  #closed = false

  constructor(private readonly opts: WorkerPoolOptions) {
    for (let i = 0; i < opts.threads; i++) this.#threads.push(this.#start())
  }

  /** Tasks no worker has claimed yet. */
  get queueSize(): number {
    let waiting = this.#queue.length
    for (const p of this.#posted.values()) if (Atomics.load(this.#claims, p.slot) > 0) waiting++
    return waiting
  }

  /** Runs `task` on the first worker free for it; `gift` goes to one worker (moving its `transfer`), whichever runs the task. */
  run(task: T, gift?: Gift<G>): Promise<R> {
    if (this.#closed) return Promise.reject(new Error('the worker pool is closed'))
    return new Promise<R>((resolve, reject) => {
      const id = this.#nextId++
      this.#queue.push({ id, task, gift, resolve, reject })
      this.#post()
    })
  }

  /** Stops every worker; tasks not yet answered are rejected. */
  async destroy(): Promise<void> {
    this.#closed = true
    const gone = new Error('the worker pool was closed before the task ended')
    for (const p of this.#queue.splice(0)) p.reject(gone)
    for (const p of this.#posted.values()) p.reject(gone)
    this.#posted.clear()
    await Promise.all(this.#threads.map((t) => t.worker.terminate()))
  }

  #start(): Thread {
    const worker = new Worker(this.opts.filename, {
      workerData: this.opts.workerData,
      resourceLimits: this.opts.resourceLimits,
    })
    const thread: Thread = { worker, mark: this.#nextMark++ }
    worker.postMessage({
      claims: this.#claims,
      mark: thread.mark,
      tasksPerThread: this.opts.tasksPerThread,
    } satisfies Init)
    // Tasks already out reach a new worker too (a replacement's); gifts stay with their first worker.
    for (const p of this.#posted.values()) worker.postMessage([p.id, p.slot, p.task] satisfies Posted)
    // An idle pool does not keep the process alive (as Piscina's did not); one with tasks out does.
    if (this.#posted.size === 0) worker.unref()
    worker.on('message', (reply: Reply) => {
      const pending = this.#posted.get(reply[0])
      if (pending === undefined) return
      this.#answered(pending)
      if (reply[1]) pending.resolve(reply[2] as R)
      else pending.reject(Object.assign(new Error(reply[2].message), { stack: reply[2].stack }))
      this.#post()
      if (this.#posted.size === 0) for (const t of this.#threads) t.worker.unref()
    })
    // A worker that dies (an uncaught error, out of memory) fails the tasks it had claimed and is
    // replaced; the tasks it had not claimed go on to the others.
    const died = (err: Error) => {
      const i = this.#threads.indexOf(thread)
      if (i < 0) return
      this.#threads.splice(i, 1)
      for (const p of [...this.#posted.values()]) {
        if (Atomics.load(this.#claims, p.slot) !== -thread.mark) continue
        this.#answered(p)
        p.reject(err)
      }
      if (this.#closed) return
      this.#threads.splice(i, 0, this.#start())
      this.#post()
    }
    worker.on('error', died)
    worker.on('exit', (code) => died(new Error(`a worker thread exited (code ${code})`)))
    return thread
  }

  /**
   * Posts waiting tasks, oldest first, each to MAX_FAN_OUT workers (all of them, when fewer) from the
   * next in turn, which also takes the task's gift.
   */
  #post(): void {
    const n = this.#threads.length
    while (this.#queue.length > 0 && this.#freeSlots.length > 0) {
      const p: Out<R> = { ...this.#queue.shift()!, slot: this.#freeSlots.pop()! }
      if (this.#posted.size === 0) for (const t of this.#threads) t.worker.ref()
      Atomics.store(this.#claims, p.slot, unclaimed(p.id))
      this.#posted.set(p.id, p)
      const first = this.#turn++ % n
      for (let k = 0; k < Math.min(n, MAX_FAN_OUT); k++) {
        const worker = this.#threads[(first + k) % n].worker
        if (k === 0 && p.gift)
          worker.postMessage([p.id, p.slot, p.task, p.gift.value] satisfies Posted, p.gift.transfer)
        else worker.postMessage([p.id, p.slot, p.task] satisfies Posted)
      }
    }
  }

  /** A posted task is done with (answered, or failed with its worker): its slot is free again. */
  #answered(p: Out<R>): void {
    this.#posted.delete(p.id)
    this.#freeSlots.push(p.slot)
  }
}

/** What a task function gives back: the result, and the memory in it to move rather than copy. */
export interface TaskResult<R> {
  readonly result: R
  readonly transfer?: readonly TransferListItem[]
}

/**
 * In a worker: answers the tasks the pool posts with `run`, claiming the oldest unclaimed one
 * whenever fewer than the pool's `tasksPerThread` are running here; `accept` takes the gifts that
 * come with tasks (whoever runs those tasks).
 */
export function serveTasks<T, R, G = never>(
  run: (task: T) => Promise<TaskResult<R>>,
  accept?: (gift: G) => void,
): void {
  if (isMainThread || parentPort === null) throw new Error('serveTasks runs in a worker thread')
  const port = parentPort
  let init: Init | undefined
  /** Tasks posted here and not yet claimed or skipped, oldest first, from `head`. */
  let known: (readonly [id: number, slot: number, task: T] | undefined)[] = []
  let head = 0
  let running = 0
  const reply = (id: number, ok: boolean, value: unknown, transfer: readonly TransferListItem[] = []) =>
    port.postMessage([id, ok, value], transfer)
  const next = () => {
    const { claims, mark, tasksPerThread } = init!
    while (running < tasksPerThread && head < known.length) {
      const [id, slot, task] = known[head]!
      known[head++] = undefined
      if (Atomics.compareExchange(claims, slot, unclaimed(id), -mark) !== unclaimed(id)) continue // another worker's (or long answered)
      running++
      run(task)
        .then(
          ({ result, transfer }) => reply(id, true, result, transfer),
          (err: unknown) =>
            reply(id, false, {
              message: err instanceof Error ? err.message : String(err),
              stack: err instanceof Error ? err.stack : undefined,
            }),
        )
        .finally(() => {
          running--
          next()
        })
    }
    // Under steady load the list never empties: drop what was consumed once it is most of it.
    if (head === known.length || (head >= 1024 && 2 * head >= known.length)) {
      known = known.slice(head)
      head = 0
    }
  }
  port.on('message', (message: Init | Posted) => {
    if (!Array.isArray(message)) return void (init = message as Init)
    const [id, slot, task, gift] = message as Posted
    if (gift !== undefined) accept?.(gift as G)
    known.push([id, slot, task as T])
    next()
  })
}
