/** @module The entry of a query worker thread: opens its own store through the factory and answers tasks as transferable bytes. */
import { move, workerData } from 'piscina'
import { answerBytes, batchPieces, errorData, type AnswerTask, type BatchTask, type ErrorData } from '../api/query-runner.js'
import { JsonBytes } from '../api/json-bytes.js'
import { MdqError } from '../domain/errors.js'
import { SymbolContexts } from '../query/symbol-context.js'
import type { MarketStore } from '../store/market-store.js'
import { openStores } from './open-stores.js'

export interface WorkerConfig {
  readonly store: string
  readonly keys?: string
}
export type WorkerTask = AnswerTask | BatchTask
/** The bytes of the answer (or of the batch pieces), moved; or the MdqError to send instead. */
export type WorkerResult = Uint8Array | { readonly error: ErrorData }

let opened: Promise<{ store: MarketStore; contexts: SymbolContexts }> | undefined
async function open(config: WorkerConfig) {
  const { market, keys } = await openStores({ store: config.store, keys: config.keys, create: false })
  await keys.close() // a worker reads market data only
  return { store: market, contexts: new SymbolContexts(market) }
}

/** Copies pieces into one ArrayBuffer of its own: Node's small Buffers share a pool slab, which must never be transferred. */
function own(pieces: readonly Buffer[]): Uint8Array {
  const out = new Uint8Array(new ArrayBuffer(pieces.reduce((n, p) => n + p.length, 0)))
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export default async function run(task: WorkerTask): Promise<WorkerResult> {
  try {
    opened ??= open(workerData as WorkerConfig)
    opened.catch(() => (opened = undefined)) // a store that comes back is opened on the next task
    const { store, contexts } = await opened
    let bytes: Uint8Array
    if (task.kind === 'klines' || task.kind === 'intraday') bytes = own([await answerBytes(store, contexts, task)])
    else {
      const all: Buffer[] = []
      for await (const pieces of batchPieces(store, contexts, task, new JsonBytes())) all.push(...pieces)
      bytes = own(all)
    }
    return move(bytes) as Uint8Array
  } catch (err) {
    if (err instanceof MdqError) return { error: errorData(err) }
    throw err
  }
}
