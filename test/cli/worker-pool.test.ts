// The pool behind --workers (src/cli/worker-pool.ts) over real worker threads: tasks spread over the
// workers and queue past their room, results come back (moved memory too), a thrown error fails its
// task alone, a worker that dies fails its own tasks and is replaced, and closing fails what is left.
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { WorkerPool } from '../../src/cli/worker-pool.js'
import type { PoolTestResult, PoolTestTask } from '../helpers/pool-worker.js'

const pools: WorkerPool<PoolTestTask, PoolTestResult>[] = []
const newPool = (threads = 2, tasksPerThread = 2) => {
  const pool = new WorkerPool<PoolTestTask, PoolTestResult>({ filename: new URL('../helpers/pool-worker.js', import.meta.url), threads, tasksPerThread, workerData: { tag: 'data' } })
  pools.push(pool)
  return pool
}
after(async () => {
  for (const pool of pools) await pool.destroy()
})

describe('WorkerPool', () => {
  it('answers every task with its own result, spread over every worker, with workerData', async () => {
    const pool = newPool()
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => pool.run({ kind: 'echo', value: i })))
    assert.deepEqual(
      results.map((r) => r.value),
      Array.from({ length: 40 }, (_, i) => i),
    )
    assert.equal(new Set(results.map((r) => r.thread)).size, 2, 'both workers answered')
    assert.ok(results.every((r) => (r.data as { tag: string }).tag === 'data'))
  })

  it('queues tasks past the workers\' room (threads x tasksPerThread) and counts them', async () => {
    const pool = newPool(2, 2)
    const running = Array.from({ length: 7 }, () => pool.run({ kind: 'wait', ms: 200 }))
    assert.equal(pool.queueSize, 3)
    await Promise.all(running)
    assert.equal(pool.queueSize, 0)
  })

  it('moves a result\'s memory from the worker, and moves memory to it with a task', async () => {
    const pool = newPool()
    const r = await pool.run({ kind: 'bytes', length: 100_000 })
    assert.equal(r.bytes?.length, 100_000)
    assert.ok(r.bytes!.every((b) => b === 7))
    const spare = new ArrayBuffer(1024)
    await pool.run({ kind: 'echo', value: 1 }, [spare])
    assert.equal(spare.byteLength, 0, 'the ArrayBuffer went to the worker (detached here)')
  })

  it('a task that throws fails alone, with the worker\'s message; the worker goes on', async () => {
    const pool = newPool(1)
    const [thrown, echoed] = await Promise.allSettled([pool.run({ kind: 'throw' }), pool.run({ kind: 'echo', value: 5 })])
    assert.equal(thrown.status, 'rejected')
    assert.match((thrown as PromiseRejectedResult).reason.message, /thrown in the worker/)
    assert.equal(echoed.status === 'fulfilled' && echoed.value.value, 5)
  })

  it('a worker that dies fails its own tasks and is replaced: later tasks are answered', async () => {
    const pool = newPool(1, 2)
    const before = await pool.run({ kind: 'echo', value: 0 })
    const [died, beside] = await Promise.allSettled([pool.run({ kind: 'die' }), pool.run({ kind: 'wait', ms: 50 })])
    assert.equal(died.status, 'rejected')
    assert.match((died as PromiseRejectedResult).reason.message, /exited \(code 3\)/)
    assert.equal(beside.status, 'rejected', 'the other task on the dead worker fails with it')
    const afterwards = await pool.run({ kind: 'echo', value: 9 })
    assert.equal(afterwards.value, 9)
    assert.notEqual(afterwards.thread, before.thread, 'a new worker answered')
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
