import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { threadNice } from '../../test/helpers/thread-nice.js'
import { threadId } from './thread-priority.js'

const niceOf = (tid: number) => threadNice(process.pid, tid)

describe(
  'lowerThreadPriority',
  { skip: process.platform !== 'linux' && 'threads have no priority of their own here' },
  () => {
    it('lowers only the calling thread: a worker at nice 10, the main thread where it was', async () => {
      const main = threadId()!
      assert.equal(main, process.pid)
      const before = niceOf(main)
      const worker = new Worker(
        `const { parentPort } = require('node:worker_threads')
       import(${JSON.stringify(new URL('./thread-priority.js', import.meta.url).href)}).then((m) => {
         parentPort.postMessage({ took: m.lowerThreadPriority(10), tid: m.threadId() })
         parentPort.once('message', () => process.exit(0))
       })`,
        { eval: true },
      )
      const { took, tid } = await new Promise<{ took: boolean; tid: number }>((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      try {
        assert.equal(took, true)
        assert.notEqual(tid, main)
        assert.equal(niceOf(tid), 10)
        assert.equal(niceOf(main), before)
      } finally {
        worker.postMessage('done')
        await new Promise((r) => worker.once('exit', r))
      }
    })
  },
)
