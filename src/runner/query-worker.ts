/** @module The entry of a query worker thread: opens its own store through the factory and answers tasks as moved bytes. */
import { workerData } from 'node:worker_threads'
import { COMPRESS_THRESHOLD_BYTES } from '../encode/compression.js'
import { ChunkPool } from '../encode/json-bytes.js'
import { deflatePiece, gzipParts, type PieceCoder } from '../encode/gzip-member.js'
import { withTimedReads } from './timed-reads.js'
import {
  errorData,
  taskPieces,
  type AnswerTask,
  type AnswerUse,
  type BatchTask,
  type ErrorData,
} from './query-runner.js'
import { MdqError } from '../domain/errors.js'
import { answerVersion } from '../query/answer-version.js'
import { SymbolContexts } from '../query/symbol-context.js'
import type { MarketStore } from '../store/market-store.js'
import { openMarketInWorker, type StoreLocation } from '../store/backends.js'
import { serveTasks, type TaskResult } from './worker-pool.js'
import { lowerThreadPriority } from './thread-priority.js'

/** Where the worker's store is: the locations the main thread parsed (plain data, cloned to the worker). */
export interface WorkerConfig {
  readonly store: StoreLocation
  readonly keys?: StoreLocation
  /** How this worker deflates gzip pieces (default the JS Huffman-only coder): the compression bench compares them. */
  readonly coder?: PieceCoder
  /** This thread's nice value (Linux; default that of the process): the background worker's (query-pool.ts). */
  readonly nice?: number
}
/**
 * How a task's bytes come back: `deflate`, as a raw deflate piece (gzip-member.ts) with the plain
 * bytes' CRC-32 and length (a batch group's, joined into one gzip member by the main thread);
 * `gzip-instead` or `gzip-beside` (AnswerUse's `gzip`), an answer of at least @fastify/compress's
 * threshold as its gzip member, or plain with its member beside it (a smaller one stays plain, as
 * @fastify/compress would leave it). Unset: plain.
 */
export type WorkerEncoding = 'deflate' | `gzip-${NonNullable<AnswerUse['gzip']>}`
/** `background`: AnswerUse's (query-pool.ts runs it on its worker of lower priority). */
export type WorkerTask = (AnswerTask | BatchTask) & { readonly encoding?: WorkerEncoding; readonly background?: true }
/** A store read the task made: its operation (as mdq_store_read_duration_seconds labels it) and seconds. */
export type StoreRead = readonly [operation: string, seconds: number]
/**
 * The bytes of the answer (or of a batch group's members), in one buffer moved to the main thread,
 * with the data version they were read at (undefined: it changed during the task), and when
 * deflated the plain bytes' CRC-32 and length, or with gzip (WorkerEncoding) its gzip member; or the
 * MdqError to send instead. Either with the store reads made.
 */
export type WorkerResult = { readonly reads: readonly StoreRead[] } & (WorkerBytes | { readonly error: ErrorData })
interface WorkerBytes {
  readonly bytes: Uint8Array
  readonly version: string | undefined
  readonly plain?: { readonly crc: number; readonly length: number }
  /** `gzip-instead`'s answer: the bytes are its gzip member. */
  readonly gzipped?: true
  /** `gzip-beside`'s answer: the plain answer's gzip member, in memory of its own (the cache counts each apart). */
  readonly gzip?: Uint8Array
}

/**
 * Reads not yet reported. On a ClickHouse store a worker runs two tasks at once (their awaits
 * interleave): each task hands back the reads made since the last one finished, so every read
 * reaches the histogram once, if not always with its own task.
 */
const reads: StoreRead[] = []

/** The store with its reads timed into `reads`: the main thread feeds them to its histogram. */
function timed(store: MarketStore): MarketStore {
  return withTimedReads(store, (operation, seconds) => reads.push([operation, seconds]))
}

let opened: Promise<{ store: MarketStore; contexts: SymbolContexts }> | undefined
async function open(config: WorkerConfig) {
  const market = await openMarketInWorker(config.store, config.keys)
  const store = timed(market)
  return { store, contexts: new SymbolContexts(store) }
}

/**
 * Spare memory from the main thread (query-pool.ts), oldest first; at most MAX_SPARES are kept, the
 * oldest dropped: the sizes of the latest tasks are what the next ones need. (Dropping the smallest
 * instead would keep large spares of earlier big answers forever and drop every small one a window
 * brings back, so each window would take new memory.)
 */
const spares: ArrayBuffer[] = []
const MAX_SPARES = 4
/** The 16 KB Buffers a task writes its JSON into, used again by the next (a 10,000-bar group takes about 45). */
const chunks = new ChunkPool(64)

function keep(spare: ArrayBuffer): void {
  spares.push(spare)
  if (spares.length > MAX_SPARES) spares.shift()
}

/**
 * Memory for `length` bytes that come back once written (a batch group's), or once written and out
 * of the response cache (an answer's): the smallest spare that holds them, unless it is over twice as
 * large (a small answer must not hold a large buffer while it streams or is cached; the cache counts
 * the whole buffer); else new memory with a quarter more room, in 4 KB pages, so that the tasks after
 * it, of about its size, fit when it comes back.
 */
function reusableMemory(length: number): ArrayBuffer {
  let fit = -1
  for (let i = 0; i < spares.length; i++)
    if (spares[i].byteLength >= length && (fit < 0 || spares[i].byteLength < spares[fit].byteLength)) fit = i
  if (fit >= 0 && spares[fit].byteLength <= 2 * length) return spares.splice(fit, 1)[0]
  return new ArrayBuffer(Math.ceil((length * 1.25) / 4096) * 4096)
}

/**
 * Copies pieces into one ArrayBuffer of its own (Node's small Buffers share a pool slab, which must
 * never be transferred), made for reuse when it comes back.
 */
function own(pieces: readonly Buffer[]): Uint8Array {
  const length = pieces.reduce((n, p) => n + p.length, 0)
  const out = new Uint8Array(reusableMemory(length), 0, length)
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** The task's bytes as they go back (see WorkerEncoding): plain, a raw deflate piece with its plain CRC-32 and length, or with a gzip member. */
function encoded(
  { encoding }: WorkerTask,
  pieces: Buffer[],
): { out: readonly Buffer[]; plain?: WorkerBytes['plain']; gzipped?: true; member?: readonly Buffer[] } {
  if (encoding === undefined) return { out: pieces }
  if (encoding !== 'deflate' && pieces.reduce((n, p) => n + p.length, 0) < COMPRESS_THRESHOLD_BYTES)
    return { out: pieces }
  const piece = deflatePiece(pieces, { borrow: true, coder: (workerData as WorkerConfig).coder }) // copied by `own`, before the next task can deflate
  if (encoding === 'deflate') return { out: [piece.deflated], plain: { crc: piece.crc, length: piece.length } }
  return encoding === 'gzip-instead'
    ? { out: gzipParts(piece), gzipped: true }
    : { out: pieces, member: gzipParts(piece) }
}

/** The result with its bytes' memory moved to the main thread, not copied. */
const moved = (result: WorkerBytes & { reads: readonly StoreRead[] }): TaskResult<WorkerResult> => ({
  result,
  transfer: [result.bytes.buffer as ArrayBuffer, ...(result.gzip ? [result.gzip.buffer as ArrayBuffer] : [])],
})

async function run(task: WorkerTask): Promise<TaskResult<WorkerResult>> {
  try {
    opened ??= open(workerData as WorkerConfig)
    opened.catch(() => (opened = undefined)) // a store that comes back is opened on the next task
    const { store, contexts } = await opened
    // One snapshot for the task's reads (the SQLite statements also skip their own WAL read locks).
    // The version the answer is of: its symbol's for a one-symbol task (query/answer-version.ts).
    const version = async () => answerVersion(await store.readVersions(), 'symbol' in task ? task.symbol : undefined)
    const [before, pieces, after] = await store.withSnapshot(
      async () => [await version(), await taskPieces(store, contexts, task, chunks), await version()] as const,
    )
    const { out, member, ...form } = encoded(task, pieces)
    // One buffer per answer: a single transfer, and one allocation for the main thread to free (not one per 16 KB).
    const bytes = own(out)
    const gzip = member && own(member)
    chunks.give(pieces) // copied: written into again by the next task
    return moved({
      bytes,
      version: before === after ? before : undefined,
      ...form,
      ...(gzip && { gzip }),
      reads: reads.splice(0),
    })
  } catch (err) {
    if (err instanceof MdqError) return { result: { error: errorData(err), reads: reads.splice(0) } }
    throw err
  }
}

const { nice } = workerData as WorkerConfig
if (nice !== undefined) lowerThreadPriority(nice)
// Spares: memory of bytes written out (a task's bytes are written into memory made for reuse, which
// may come back), given with a task to one worker, for whatever task it runs next.
serveTasks(run, (given: ArrayBuffer[]) => given.forEach(keep))
