/** @module barBlocks run on a worker thread: the CSV is parsed on one core while the importer writes on another. */
import { Worker } from 'node:worker_threads'
import { MdqError, type ErrorCode } from '../domain/errors.js'
import type { BarBlock, BarRowOptions } from './bar-rows.js'
import { ImportError } from './import-error.js'

/** Blocks the parser may post ahead of the importer: enough to keep both threads busy, few enough to bound memory. */
export const BLOCKS_AHEAD = 2

export type FromRowsThread =
  | { type: 'block'; block: BarBlock }
  | { type: 'end' }
  | { type: 'import-error'; file: string; line: number; column: number; reason: string }
  | { type: 'mdq-error'; code: ErrorCode; message: string }
  | { type: 'crash'; message: string }

/** The blocks of barBlocks(openCsv(path), opts), read on a worker thread; its errors rethrown here as they were thrown there. */
export async function* barBlocksOnThread(path: string, opts: BarRowOptions): AsyncGenerator<BarBlock> {
  const worker = new Worker(new URL('./bar-rows-worker.js', import.meta.url), { workerData: { path, opts } })
  const inbox: FromRowsThread[] = []
  let wake: (() => void) | undefined
  const deliver = (m: FromRowsThread) => {
    inbox.push(m)
    wake?.()
  }
  worker.on('message', deliver)
  worker.on('error', (err) => deliver({ type: 'crash', message: err.stack ?? err.message }))
  worker.on('exit', (code) =>
    deliver({ type: 'crash', message: `the CSV reading thread exited (code ${code}) before the end of the file` }),
  )
  try {
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve))
      const m = inbox.shift()!
      if (m.type === 'block') {
        yield m.block
        worker.postMessage('done')
      } else if (m.type === 'end') return
      else if (m.type === 'import-error') throw new ImportError(m.file, m.line, m.column, m.reason)
      else if (m.type === 'mdq-error') throw new MdqError(m.code, m.message)
      else throw new Error(m.message)
    }
  } finally {
    await worker.terminate()
  }
}
