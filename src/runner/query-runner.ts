/** @module Uncached klines work as tasks (read, fill, adjust, aggregate, serialize to bytes): run here, or in a worker pool (runner/query-pool.ts). */
import type { AsOf } from '../domain/as-of.js'
import { MdqError, type ErrorCode } from '../domain/errors.js'
import type { MinutePeriod, Period } from '../domain/period.js'
import { readIntraday, readIntradayBatch, readKlinesBatch } from '../query/klines-batch.js'
import { readKlines } from '../query/klines.js'
import type { KlinesRange } from '../query/klines-query.js'
import type { SymbolContexts } from '../query/symbol-context.js'
import type { MarketStore } from '../store/market-store.js'
import type { DeflatedPiece } from '../encode/gzip-member.js'
import { JsonBytes, writeKlinesColumns, type ChunkPool } from '../encode/json-bytes.js'
import { klinesFormat } from '../encode/wire.js'

/** Plain data only: a task crosses to a worker by structured clone. */
export type AnswerTask =
  | { readonly kind: 'klines'; readonly symbol: string; readonly period: Period; readonly range: KlinesRange }
  | {
      readonly kind: 'intraday'
      readonly symbol: string
      readonly period: MinutePeriod
      readonly count?: number
      readonly asOf?: AsOf
    }
export type BatchTask =
  | {
      readonly kind: 'klines-batch'
      readonly symbols: readonly string[]
      readonly period: Period
      readonly range: KlinesRange
    }
  | {
      readonly kind: 'intraday-batch'
      readonly symbols: readonly string[]
      readonly period: MinutePeriod
      readonly count?: number
      readonly asOf?: AsOf
    }

/** Whether a task is a batch group (its bytes stream, and their memory can be used again once written). */
const isBatchTask = (task: AnswerTask | BatchTask): task is BatchTask =>
  task.kind === 'klines-batch' || task.kind === 'intraday-batch'

export type StoreReadObserver = (operation: string, seconds: number) => void

/** How the caller uses an answer's bytes. */
export interface AnswerUse {
  /**
   * The client takes gzip (the encoding @fastify/compress would choose), so a runner may make the
   * gzip member where it computed the answer rather than leave the main thread to compress it
   * (gzip-member.ts). `instead`: the bytes are kept nowhere, and the answer may be the member alone,
   * marked for gzipOnSend; `beside`: the plain answer is kept (the response cache), and its member
   * may come attached, for the cache to keep next to it.
   */
  readonly gzip?: 'instead' | 'beside'
  /**
   * Computed for the response cache while its previous answer stands in (stale-while-revalidate):
   * no request waits on it, so a runner may give it a thread of lower priority than the answers
   * being sent meanwhile.
   */
  readonly background?: true
}

/** Where uncached klines answers are computed; auth, limits, the cache and cheap answers never come here. */
export interface QueryRunner {
  /** The whole JSON answer of /v1/klines or /v1/klines/intraday (see AnswerUse's `gzip` for its gzip member). */
  answer(task: AnswerTask, use?: AnswerUse): Promise<Buffer>
  /** The members of a batch answer's `data` object (`"SYM":{...}` joined by commas), in order, a few symbols at a time. */
  batch(task: BatchTask): AsyncIterable<Buffer | string>
  /**
   * The same members with each few symbols' bytes deflated where they were computed (the commas
   * between as text), for one gzip member (gzip-member.ts); absent when this runner would only
   * deflate in the main thread, where @fastify/compress's stream does as well.
   */
  readonly deflatedBatch?: (task: BatchTask) => AsyncIterable<DeflatedPiece | string>
  /**
   * Told that a Buffer piece of `batch` or `deflatedBatch`, or an answer (or the gzip member attached
   * to it), has been written out and is referenced nowhere else: sent, with no response cache, or out
   * of the cache and no longer being written (AnswerMemory hands it back). Its memory may then be used
   * again, which spares the main thread's GC the memory of every answer moved to it (each one counted
   * as new external memory: a mark-compact every 100-300 ms under load). Bytes never handed back are
   * left to the GC. Absent when nothing is reused.
   */
  readonly written?: (piece: Buffer) => void
  /** Whether batch pieces are mostly Latin-1 text (kept as strings through the stream) rather than Buffers. */
  readonly textPieces: boolean
  /** Tasks waiting for a free worker (0 when run in the main thread). */
  queueSize(): number
  /** Store reads made outside the main thread's store (in workers), for its read-time histogram. */
  onStoreReads?(observer: StoreReadObserver): void
  /**
   * The app's own store and contexts, for a runner whose workers read stores of their own: their
   * data version can differ from the main thread's for a moment after an import (a ClickHouse store
   * polls it), and an answer must be of the version its ETag and cache key name.
   */
  useMainStore?(store: MarketStore, contexts: SymbolContexts): void
  close(): Promise<void>
}

/** The bytes of one answer task. */
export async function answerBytes(store: MarketStore, contexts: SymbolContexts, task: AnswerTask): Promise<Buffer> {
  return Buffer.concat(await answerPieces(store, contexts, task))
}

/** The bytes of one answer task in the pieces they were written in (a worker copies them once, into the memory it hands over). */
async function answerPieces(
  store: MarketStore,
  contexts: SymbolContexts,
  task: AnswerTask,
  chunks?: ChunkPool,
): Promise<Buffer[]> {
  const bars =
    task.kind === 'klines'
      ? await readKlines(store, contexts, { symbol: task.symbol, period: task.period, ...task.range })
      : await readIntraday(store, contexts, {
          symbol: task.symbol,
          period: task.period,
          count: task.count,
          asOf: task.asOf,
        })
  const out = new JsonBytes(false, chunks)
  out.ascii('{"data":')
  writeKlinesColumns(out, bars, klinesFormat(task.period, task.kind === 'klines' ? task.range.adjust : 'none'))
  out.ascii('}')
  return out.take()
}

/**
 * `"SYM":{...}` of each symbol of a batch task (a comma before all but the first), yielded after each
 * symbol, so that no more than one symbol's answer is held at once.
 */
export async function* batchPieces<T extends Buffer | string>(
  store: MarketStore,
  contexts: SymbolContexts,
  task: BatchTask,
  out: JsonBytes<T>,
): AsyncGenerator<T[]> {
  const entries =
    task.kind === 'klines-batch'
      ? readKlinesBatch(store, contexts, task.symbols, { period: task.period, ...task.range })
      : readIntradayBatch(store, contexts, task.symbols, { period: task.period, count: task.count, asOf: task.asOf })
  const format = klinesFormat(task.period, task.kind === 'klines-batch' ? task.range.adjust : 'none')
  let first = true
  for await (const { symbol, bars } of entries) {
    out.ascii(`${first ? '' : ','}${JSON.stringify(symbol)}:`) // canonical symbols are ASCII
    writeKlinesColumns(out, bars, format)
    first = false
    yield out.take()
  }
}

/**
 * The bytes of any task (an answer, or a batch group's members) as Buffers: what a worker computes,
 * and the pool's main-thread fallback; `chunks`: where the pieces' Buffers come from.
 */
export async function taskPieces(
  store: MarketStore,
  contexts: SymbolContexts,
  task: AnswerTask | BatchTask,
  chunks?: ChunkPool,
): Promise<Buffer[]> {
  if (!isBatchTask(task)) return answerPieces(store, contexts, task, chunks)
  const pieces: Buffer[] = []
  for await (const some of batchPieces(store, contexts, task, new JsonBytes(false, chunks))) pieces.push(...some)
  return pieces
}

/** Today's path: every task in the main thread. */
export function inThreadRunner(store: MarketStore, contexts: SymbolContexts): QueryRunner {
  return {
    answer: (task) => answerBytes(store, contexts, task),
    async *batch(task) {
      // Latin-1 strings, reusing one Buffer: see JsonBytes's `text` (a smaller peak RSS than fresh Buffers).
      for await (const pieces of batchPieces(store, contexts, task, new JsonBytes<string>(true))) yield* pieces
    },
    textPieces: true,
    queueSize: () => 0,
    close: async () => {},
  }
}

/** An MdqError as plain data (it crosses from a worker), and back: the client sees the same status and message. */
export interface ErrorData {
  readonly code: ErrorCode
  readonly message: string
  readonly retryAfterMs?: number
}
export const errorData = (err: MdqError): ErrorData => ({
  code: err.code,
  message: err.message,
  ...(err.retryAfterMs !== undefined && { retryAfterMs: err.retryAfterMs }),
})
export const fromErrorData = (e: ErrorData): MdqError => new MdqError(e.code, e.message, e.retryAfterMs)
