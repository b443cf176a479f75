/** @module Per-symbol facts every kline query needs (known?, events, additive gaps), cached per data version. */
import { LRUCache } from 'lru-cache'
import { gapsOf, type ExFactorEvent } from '../domain/ex-factors.js'
import type { MarketStore } from '../store/market-store.js'
import { DAILY_PREV_CLOSE_BYTES_PER_BAR, loadDailyPrevCloses, type DailyPrevCloses } from './daily-prev-close.js'

export interface SymbolContext {
  readonly events: readonly ExFactorEvent[]
  /** Additive gap per event: P_e from the last daily close before the ex-date (else the last 1m close). */
  gaps(): Promise<Float64Array>
  /**
   * The daily prev_close of the whole daily history (for minute bars' day-first bars), held in a bounded
   * cache; undefined at a version's first ask when not held yet, for the query to read just its days:
   * a symbol a feed pushes to moves version between most reads, and loading its whole history at
   * each added about a third to those reads' CPU (docs/benchmarks.md, "live").
   */
  dailyPrevCloses(): Promise<DailyPrevCloses | undefined>
}

/**
 * The context as known at `cutoffMs`: the events with an ex-date at or before it. Each event's gap
 * comes from the close before its ex-date, and a daily prev_close from the events of its own day,
 * so both are the same for the days up to the cutoff whatever happened after it.
 */
export function knownAsOf(ctx: SymbolContext, cutoffMs: number): SymbolContext {
  let n = ctx.events.length
  while (n > 0 && ctx.events[n - 1].timestamp > cutoffMs) n--
  if (n === ctx.events.length) return ctx
  return {
    events: ctx.events.slice(0, n),
    gaps: async () => (await ctx.gaps()).subarray(0, n),
    dailyPrevCloses: ctx.dailyPrevCloses,
  }
}

/** Bytes of daily prev_close histories held per SymbolContexts (per thread): 20 years of 250 days is 120 KB a symbol. */
const DAILY_CACHE_BYTES = 32 << 20

/**
 * Caches each symbol's context while the symbol's version (readVersions().of) stays the same: an
 * import of instruments, events or deletes (from any process) moves every symbol's, an append or a
 * live push only its own symbols' (where the store keeps versions per symbol; elsewhere any commit
 * moves every symbol's).
 */
export class SymbolContexts {
  readonly #cache = new Map<
    string,
    { readonly version: string; readonly context: Promise<SymbolContext | undefined> }
  >()
  /** Apart from the contexts, and bounded: only symbols with minute queries load one, and a thread may serve thousands. */
  // Keyed by the symbol's version and the symbol: a load still running when an import clears the cache resolves
  // for the query that asked (ignoreFetchAbort) and is stored under its old version, never read again.
  readonly #daily = new LRUCache<string, DailyPrevCloses, { symbol: string; events: readonly ExFactorEvent[] }>({
    maxSize: DAILY_CACHE_BYTES,
    sizeCalculation: (d) => Math.max(1, d.timestamp.length * DAILY_PREV_CLOSE_BYTES_PER_BAR),
    fetchMethod: (_key, _stale, { context }) => loadDailyPrevCloses(this.store, context.symbol, context.events),
    ignoreFetchAbort: true,
  })
  constructor(private readonly store: MarketStore) {}

  async get(symbol: string): Promise<SymbolContext | undefined> {
    const version = (await this.store.readVersions()).of(symbol)
    const held = this.#cache.get(symbol)
    if (held?.version === version) return held.context
    const context = this.#load(symbol, version)
    const entry = { version, context }
    this.#cache.set(symbol, entry)
    context.catch(() => {
      if (this.#cache.get(symbol) === entry) this.#cache.delete(symbol)
    })
    return context
  }

  async #load(symbol: string, version: string): Promise<SymbolContext | undefined> {
    const events = (await this.store.readExFactors([symbol])).get(symbol)
    if (!events) return undefined
    let gaps: Promise<Float64Array> | undefined
    const dailyKey = `${version} ${symbol}`
    let asked = false
    return {
      events,
      gaps: () => (gaps ??= this.#gaps(symbol, events)),
      dailyPrevCloses: async () => {
        const first = !asked && !this.#daily.has(dailyKey)
        asked = true
        return first ? undefined : (await this.#daily.fetch(dailyKey, { context: { symbol, events } }))!
      },
    }
  }

  async #gaps(symbol: string, events: readonly ExFactorEvent[]): Promise<Float64Array> {
    const closes = new Map<number, number>()
    for (const e of events) {
      let before = await this.store.readBars({ symbol, period: '1d', toMs: e.timestamp - 1, limit: 1 })
      if (before.close.length === 0)
        before = await this.store.readBars({ symbol, period: '1m', toMs: e.timestamp - 1, limit: 1 })
      closes.set(e.timestamp, before.close.length ? before.close[0] : NaN)
    }
    return gapsOf(events, (e) => closes.get(e.timestamp) ?? NaN)
  }
}
