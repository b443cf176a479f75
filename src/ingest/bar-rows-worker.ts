/** @module Worker thread entry: reads a bars CSV with barBlocks and posts each block, its buffers transferred, a bounded number ahead. */
import { parentPort, workerData } from 'node:worker_threads'
import { MdqError } from '../domain/errors.js'
import { barBlocks, type BarRowOptions } from './bar-rows.js'
import { openCsv } from './csv-reader.js'
import { ImportError } from './import-error.js'
import { BLOCKS_AHEAD, type FromRowsThread } from './bar-rows-thread.js'

const port = parentPort!
const { path, opts } = workerData as { path: string; opts: BarRowOptions }
let credit = BLOCKS_AHEAD
let wake: (() => void) | undefined
// Each message back means the importer is done with one block.
port.on('message', () => {
  credit++
  wake?.()
})
const post = (m: FromRowsThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer)

try {
  const file = await openCsv(path)
  for await (const block of barBlocks(file, opts)) {
    while (credit === 0) await new Promise<void>((resolve) => (wake = resolve))
    credit--
    post({ type: 'block', block }, [block.bars.timestamp.buffer as ArrayBuffer, block.symbolIds.buffer as ArrayBuffer])
  }
  post({ type: 'end' })
} catch (err) {
  if (err instanceof ImportError)
    post({ type: 'import-error', file: err.file, line: err.line, column: err.column, reason: err.reason })
  else if (err instanceof MdqError) post({ type: 'mdq-error', code: err.code, message: err.message })
  else post({ type: 'crash', message: err instanceof Error ? (err.stack ?? err.message) : String(err) })
}
port.close()
