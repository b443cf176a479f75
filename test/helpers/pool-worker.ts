/** @module A worker for the worker-pool tests: echoes, throws, dies or waits, as each task says. */
import { threadId, workerData } from 'node:worker_threads'
import { serveTasks } from '../../src/cli/worker-pool.js'

export type PoolTestTask = { readonly kind: 'echo'; readonly value: number } | { readonly kind: 'throw' } | { readonly kind: 'die' } | { readonly kind: 'bytes'; readonly length: number } | { readonly kind: 'wait'; readonly ms: number }
export interface PoolTestResult {
  readonly value?: number
  readonly thread: number
  readonly data: unknown
  readonly bytes?: Uint8Array
}

serveTasks<PoolTestTask, PoolTestResult>(async (task) => {
  if (task.kind === 'throw') throw new Error('thrown in the worker')
  if (task.kind === 'die') process.exit(3) // in a worker thread: ends this thread alone
  if (task.kind === 'wait') await new Promise((resolve) => setTimeout(resolve, task.ms))
  if (task.kind === 'bytes') {
    const bytes = new Uint8Array(task.length).fill(7)
    return { result: { thread: threadId, data: workerData, bytes }, transfer: [bytes.buffer] }
  }
  return { result: { value: task.kind === 'echo' ? task.value : undefined, thread: threadId, data: workerData } }
})
