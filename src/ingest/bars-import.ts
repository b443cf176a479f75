/** @module `mdq import bars`: CSV rows -> checked 1m/1d bars -> chunked writes inside one transaction. */
import {
  allocBars,
  BAR_FIELDS,
  barCount,
  copyBars,
  mergeBars,
  sliceBars,
  withoutRange,
  type Bars,
} from '../domain/bars.js'
import { deriveExFactors } from '../domain/ex-factors.js'
import { bareInstrument } from '../domain/instrument.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { MarketStore } from '../store/market-store.js'
import { barBlocks, barColumns, type BarRowOptions } from './bar-rows.js'
import { barBlocksOnThread } from './bar-rows-thread.js'
import type { CsvFile } from './csv-reader.js'
import { checkFactorSpan } from './factor-span.js'
import { ImportError } from './import-error.js'
import type { ImportCounts, ImportProgress, ImportTarget } from './import-target.js'
import { BarSpill } from './spill.js'

export interface BarImportOptions extends BarRowOptions {
  /** Record close[d-1] / prev_close[d] wherever prev_close differs from the previous close. */
  readonly deriveExFactors: boolean
  /** The file's bars replace the stored ones of each of its symbols in the file's time range of that symbol. */
  readonly replace?: boolean
  /** Parse on a worker thread: by default for files of PARSE_THREAD_BYTES or more. */
  readonly parseThread?: boolean
}

/** From this size on a file is parsed on a worker thread, beside the writes (a thread costs tens of ms to start). */
export const PARSE_THREAD_BYTES = 32 << 20

/**
 * Where an import writes, and where it reads COMMITTED data (known instruments, the bars that
 * ex-factors are derived from): never through the writer, so a backend without read-your-writes
 * transactions can run it.
 */
/** Rows of one symbol waiting to be written; flushed in blocks so memory stays bounded. */
class BarBuffer {
  /** None until the first rows, and again once they are taken: a symbol's memory goes back once its rows are flushed. */
  bars: Bars | undefined
  n = 0
  /** Appends bars [from, to) of `src`. */
  append(src: Bars, from: number, to: number): void {
    const need = this.n + to - from
    let bars = this.bars
    const room = bars?.timestamp.length ?? 0
    if (bars === undefined || need > room) {
      // A symbol's first block gets room for itself alone (one row of an end-of-day file is small
      // enough to live on V8's heap); more rows double it.
      let size = room === 0 ? need : room * 2
      while (size < need) size *= 2
      const bigger = allocBars(size)
      if (bars) copyBars(bars, 0, this.n, bigger, 0)
      this.bars = bars = bigger
    }
    copyBars(src, from, to, bars, this.n)
    this.n = need
  }
  /** The buffered bars ascending, a later row winning over an earlier one at the same time. */
  take(): Bars {
    const src = this.bars
    const n = this.n
    this.bars = undefined
    this.n = 0
    if (src === undefined) return allocBars(0)
    let ascending = true
    for (let i = 1; i < n && ascending; i++) ascending = src.timestamp[i] > src.timestamp[i - 1]
    if (ascending) return sliceBars(src, 0, n)
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => src.timestamp[a] - src.timestamp[b] || a - b)
    const keep = order.filter((idx, k) => k === n - 1 || src.timestamp[order[k + 1]] !== src.timestamp[idx])
    return sortedCopy(src, keep)
  }
}

function sortedCopy(src: Bars, order: readonly number[]): Bars {
  const out = allocBars(order.length)
  for (const f of BAR_FIELDS) {
    const from = src[f]
    const to = out[f]
    for (let k = 0; k < order.length; k++) to[k] = from[order[k]]
  }
  return out
}

/** A symbol's rows written as one block (a file sorted by symbol flushes here). */
const FLUSH_ROWS = 1 << 16
/**
 * Rows buffered over all symbols (64 bytes each) before the biggest buffers are flushed: bounds the
 * import's memory whatever the file's size, symbol count or row order.
 */
const BUFFERED_ROWS = 1 << 18
/** Flushing the biggest buffers frees down to this, so a flush writes blocks worth writing. */
const AFTER_FLUSH_ROWS = BUFFERED_ROWS >> 1

/**
 * One symbol's bars on their way to the writer. With `replace`, the stored bars are deleted over
 * [lo, hi], the file's range so far, grown before each flush is put: the writer never gets a delete
 * over bars it was given, and at the end [lo, hi] is the file's whole range of the symbol.
 */
class SymbolBars {
  readonly buffer = new BarBuffer()
  lo = Infinity
  hi = -Infinity
  /** Committed bars deleted by `replace` so far. */
  replaced = 0

  constructor(
    readonly symbol: string,
    /** Where flushed blocks go when ex-factors are derived from the history they make. */
    readonly kept?: BarSpill,
  ) {}

  async flush({ store, writer }: ImportTarget, opts: BarImportOptions): Promise<void> {
    const bars = this.buffer.take()
    const n = barCount(bars)
    if (n === 0) return
    const first = bars.timestamp[0]
    const last = bars.timestamp[n - 1]
    if (opts.replace) {
      // The committed bars a delete removes are counted first: the summary says what was replaced.
      const drop = async (fromMs: number, toMs: number) => {
        const range = { symbol: this.symbol, period: opts.period, fromMs, toMs }
        this.replaced += barCount(await store.readBars({ ...range, limit: Number.MAX_SAFE_INTEGER }))
        await writer.deleteBars(range)
      }
      if (this.lo > this.hi) await drop(first, last)
      else {
        if (first < this.lo) await drop(first, this.lo - 1)
        if (last > this.hi) await drop(this.hi + 1, last)
      }
    }
    this.lo = Math.min(this.lo, first)
    this.hi = Math.max(this.hi, last)
    await writer.putBars(this.symbol, opts.period, bars)
    this.kept?.append(this.symbol, bars)
  }

  /** The daily history as it will read after commit: committed bars (less the replaced range), then the file's. */
  async history(store: MarketStore, opts: BarImportOptions): Promise<Bars> {
    let all = await store.readBars({ symbol: this.symbol, period: '1d', limit: Number.MAX_SAFE_INTEGER })
    if (opts.replace && this.lo <= this.hi) all = withoutRange(all, this.lo, this.hi)
    for (const block of this.kept?.blocks(this.symbol) ?? []) all = mergeBars(all, block)
    return all
  }
}

export async function importBars(
  file: CsvFile,
  target: ImportTarget,
  opts: BarImportOptions,
  progress?: ImportProgress,
): Promise<ImportCounts> {
  const kept = opts.deriveExFactors && opts.period === '1d' ? new BarSpill() : undefined
  try {
    return await importBarsWith(file, target, opts, kept, progress)
  } finally {
    kept?.dispose()
  }
}

/** Flushes the biggest buffers until at most AFTER_FLUSH_ROWS rows stay buffered. */
async function flushBiggest(
  all: Iterable<SymbolBars>,
  buffered: number,
  target: ImportTarget,
  opts: BarImportOptions,
): Promise<number> {
  for (const one of [...all].sort((a, b) => b.buffer.n - a.buffer.n)) {
    if (buffered <= AFTER_FLUSH_ROWS) break
    buffered -= one.buffer.n
    await one.flush(target, opts)
  }
  return buffered
}

async function importBarsWith(
  file: CsvFile,
  target: ImportTarget,
  opts: BarImportOptions,
  kept: BarSpill | undefined,
  progress?: ImportProgress,
): Promise<ImportCounts> {
  barColumns(file, opts) // a bad header fails here, before any thread starts
  const rowOptions: BarRowOptions = {
    period: opts.period,
    symbol: opts.symbol,
    stamp: opts.stamp,
    priceScale: opts.priceScale,
    outsideSessions: opts.outsideSessions,
  }
  const onThread = opts.parseThread ?? file.sizeBytes >= PARSE_THREAD_BYTES
  if (onThread) await file.close()
  const blocks = onThread ? barBlocksOnThread(file.path, rowOptions) : barBlocks(file, rowOptions)
  const bySymbol = new Map<string, SymbolBars>()
  /** By symbol id of the blocks. */
  const byId: SymbolBars[] = []
  const counts: ImportCounts = { rows: 0, skipped: 0, symbols: 0, events: 0 }
  const derive = kept !== undefined
  let buffered = 0
  progress?.start(file.sizeBytes)

  for await (const block of blocks) {
    counts.rows += block.rows
    counts.skipped += block.skipped
    progress?.update(block.bytesRead)
    for (const symbol of block.newSymbols) {
      const one = new SymbolBars(symbol, kept)
      bySymbol.set(symbol, one)
      byId.push(one)
    }
    const ids = block.symbolIds
    for (let i = 0; i < ids.length;) {
      const one = byId[ids[i]]
      let end = i + 1
      while (end < ids.length && ids[end] === ids[i]) end++
      // A run of one symbol's rows goes in in pieces that end where a row-by-row append would flush.
      while (i < end) {
        const take = Math.min(end - i, FLUSH_ROWS - one.buffer.n, BUFFERED_ROWS + 1 - buffered)
        one.buffer.append(block.bars, i, i + take)
        buffered += take
        i += take
        if (one.buffer.n >= FLUSH_ROWS) {
          buffered -= one.buffer.n
          await one.flush(target, opts)
        } else if (buffered > BUFFERED_ROWS) buffered = await flushBiggest(bySymbol.values(), buffered, target, opts)
      }
    }
  }
  for (const one of bySymbol.values()) await one.flush(target, opts)
  if (opts.replace) counts.replaced = [...bySymbol.values()].reduce((n, one) => n + one.replaced, 0)
  const { store, writer } = target

  const symbols = [...bySymbol.keys()]
  counts.symbols = symbols.length
  const known = new Set((await store.readInstruments(symbols)).map((i) => i.symbol))
  await writer.putInstruments(symbols.filter((s) => !known.has(s)).map((s) => bareInstrument(s)))
  if (derive) {
    for (const one of bySymbol.values()) {
      const events = deriveExFactors(await one.history(store, opts))
      if (events.length > 0)
        await checkFactorSpan(store, one.symbol, events, (message, worst) => {
          const day = MARKETS[parseSymbol(one.symbol).exchange].zone.isoDate(worst.timestamp)
          throw new ImportError(file.path, 0, 0, `${message} (derived from prev_close on ${day})`)
        })
      counts.events += events.length
      await writer.putExFactors(one.symbol, events)
    }
  }
  return counts
}
