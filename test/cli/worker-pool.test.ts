// The pool behind --workers (src/runner/worker-pool.ts) over real worker threads: one queue every worker
// takes from (a free worker takes the oldest task, never one queued behind a busy worker), results
// come back (moved memory too), gifts reach a worker, a thrown error fails its task alone, a worker
// that dies fails the tasks it had taken and is replaced, and closing fails what is left.
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, describe, it } from 'node:test'
import { MAX_FAN_OUT, WorkerPool } from '../../src/runner/worker-pool.js'
import type { PoolTestResult, PoolTestTask } from '../helpers/pool-worker.js'

const pools: WorkerPool<PoolTestTask, PoolTestResult, ArrayBuffer[]>[] = []
const newPool = (threads = 2, tasksPerThread = 1) => {
  const pool = new WorkerPool<PoolTestTask, PoolTestResult, ArrayBuffer[]>({
    filename: new URL('../helpers/pool-worker.js', import.meta.url),
    threads,
    tasksPerThread,
    workerData: { tag: 'data' },
  })
  pools.push(pool)
  return pool
}
after(async () => {
  for (const pool of pools) await pool.destroy()
})

/** Two tasks that each block their thread until both have started: they can only finish on two workers at once. */
const meeting = (pool: WorkerPool<PoolTestTask, PoolTestResult, ArrayBuffer[]>) => {
  const seen = new Int32Array(new SharedArrayBuffer(4))
  return Promise.all([pool.run({ kind: 'meet', seen, count: 2 }), pool.run({ kind: 'meet', seen, count: 2 })])
}

/** Polls `value` until it equals `want` (the workers claim tasks on their own threads), for at most 10 s. */
async function eventually(value: () => number, want: number): Promise<void> {
  for (let waited = 0; value() !== want && waited < 10_000; waited += 10) await sleep(10)
  assert.equal(value(), want)
}

describe('WorkerPool', () => {
  it('answers every task with its own result, on every worker at once, with workerData', async () => {
    const pool = newPool()
    const met = await meeting(pool)
    assert.notEqual(met[0].thread, met[1].thread, 'the two meeting tasks ran on two workers at once')
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => pool.run({ kind: 'echo', value: i })))
    assert.deepEqual(
      results.map((r) => r.value),
      Array.from({ length: 40 }, (_, i) => i),
    )
    assert.ok(results.every((r) => (r.data as { tag: string }).tag === 'data'))
  })

  it('a free worker takes the next task, never one queued behind a busy worker', async () => {
    // Two tasks a worker: the old pool posted every other echo to the blocked worker, where it waited.
    const pool = newPool(2, 2)
    await meeting(pool) // both workers are up
    let longDone = false
    const long = pool.run({ kind: 'block', ms: 3000 }).then((r) => ((longDone = true), r))
    const echoes = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run({ kind: 'echo', value: i })))
    assert.equal(longDone, false, 'every echo was answered while the long task still ran')
    const busy = (await long).thread
    assert.ok(
      echoes.every((e) => e.thread !== busy),
      'the busy worker took none of them',
    )
  })

  it('with more workers than a task is posted to, every task is answered, each by a worker it was posted to', async () => {
    const threads = MAX_FAN_OUT + 2
    const pool = newPool(threads, 1)
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => pool.run({ kind: 'echo', value: i })))
    assert.deepEqual(
      results.map((r) => r.value),
      Array.from({ length: 60 }, (_, i) => i),
    )
    // Tasks go to MAX_FAN_OUT workers in turn: a worker is sent 4 of every 6, so none can have taken more.
    const taken = new Map<number, number>()
    for (const r of results) taken.set(r.thread, (taken.get(r.thread) ?? 0) + 1)
    assert.ok(Math.max(...taken.values()) <= (60 * MAX_FAN_OUT) / threads, `per worker: ${[...taken.values()]}`)
  })

  it('counts the tasks no worker has taken yet', async () => {
    const pool = newPool(2, 1)
    await meeting(pool)
    const running = Array.from({ length: 5 }, () => pool.run({ kind: 'wait', ms: 500 }))
    await eventually(() => pool.queueSize, 3) // one task running on each worker
    await Promise.all(running)
    assert.equal(pool.queueSize, 0)
  })

  it("moves a result's memory from the worker, and a gift's memory to it", async () => {
    const pool = newPool(1)
    const r = await pool.run({ kind: 'bytes', length: 100_000 })
    assert.equal(r.bytes?.length, 100_000)
    assert.ok(r.bytes!.every((b) => b === 7))
    const spare = new ArrayBuffer(1024)
    const given = await pool.run({ kind: 'echo', value: 1 }, { value: [spare], transfer: [spare] })
    assert.equal(spare.byteLength, 0, 'the ArrayBuffer went to the worker (detached here)')
    assert.equal(given.gifted, 1024, 'the worker had it before the task ran')
  })

  it("a task that throws fails alone, with the worker's message; the worker goes on", async () => {
    const pool = newPool(1)
    const [thrown, echoed] = await Promise.allSettled([
      pool.run({ kind: 'throw' }),
      pool.run({ kind: 'echo', value: 5 }),
    ])
    assert.equal(thrown.status, 'rejected')
    assert.match((thrown as PromiseRejectedResult).reason.message, /thrown in the worker/)
    assert.equal(echoed.status === 'fulfilled' && echoed.value.value, 5)
  })

  it('a worker that dies fails the tasks it had taken and is replaced: the rest are answered', async () => {
    const pool = newPool(1, 2)
    const before = await pool.run({ kind: 'echo', value: 0 })
    // The worker takes two tasks at once: the wait, then the task that kills it. The echo is not yet taken.
    const [beside, died, untaken] = await Promise.allSettled([
      pool.run({ kind: 'wait', ms: 200 }),
      pool.run({ kind: 'die' }),
      pool.run({ kind: 'echo', value: 7 }),
    ])
    assert.equal(died.status, 'rejected')
    assert.match((died as PromiseRejectedResult).reason.message, /exited \(code 3\)/)
    assert.equal(beside.status, 'rejected', 'the other task the dead worker had taken fails with it')
    assert.equal(
      untaken.status === 'fulfilled' && untaken.value.value,
      7,
      'a task it had not taken goes to its replacement',
    )
    assert.notEqual(untaken.status === 'fulfilled' && untaken.value.thread, before.thread, 'a new worker answered')
    assert.equal((await pool.run({ kind: 'echo', value: 9 })).value, 9)
  })

  it('a task running while thousands of others are answered keeps its claim: its worker dying still fails it', async () => {
    const pool = newPool(2, 1)
    await meeting(pool)
    const signal = new Int32Array(new SharedArrayBuffer(4))
    const long = pool.run({ kind: 'dieOn', signal }).then(
      () => 'answered',
      (err: Error) => err.message,
    )
    await eventually(() => pool.queueSize, 0) // a worker took it
    // More tasks than there are claim slots, answered by the other worker meanwhile.
    for (let round = 0; round < 5; round++)
      await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.run({ kind: 'echo', value: i })))
    Atomics.store(signal, 0, 1)
    assert.match(await long, /exited \(code 3\)/)
    assert.equal((await pool.run({ kind: 'echo', value: 3 })).value, 3)
  })

  it('closing fails the tasks still running or queued, and any task after it', async () => {
    const pool = newPool(1, 1)
    const settled = Promise.allSettled([pool.run({ kind: 'wait', ms: 5000 }), pool.run({ kind: 'echo', value: 1 })])
    await pool.destroy()
    for (const task of await settled) {
      assert.equal(task.status, 'rejected')
      assert.match((task as PromiseRejectedResult).reason.message, /closed before the task ended/)
    }
    await assert.rejects(pool.run({ kind: 'echo', value: 2 }), /closed/)
  })
})
