/** @module Rollup chunks kept in step with 1m chunks: rebuilt per touched local day inside the write's transaction, a month of days at a time or before it commits. */
import { barCount } from '../../domain/bars.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import { ROLLUP_PERIODS, buildAllRollups } from '../../domain/rollups.js'
import type { ChunkStatements } from './chunk-statements.js'
import { deleteBarsWith, MAX_MS, putBarsWith, readBarsWith } from './chunks.js'
import type { Db } from './sqlite-db.js'
import { readMinuteBars, type WrittenChunks } from './written-chunks.js'

/**
 * Rebuilds the rollups of every local day that meets [fromMs, toMs] from the 1m bars now in the
 * transaction (call after each 1m put or delete). Open bounds stay open.
 */
export function rebuildRollupsWith(
  st: ChunkStatements,
  symbol: string,
  fromMs = -MAX_MS,
  toMs = MAX_MS,
  written?: WrittenChunks,
): void {
  if (fromMs > toMs) return
  const zone = MARKETS[parseSymbol(symbol).exchange].zone
  const lo = fromMs <= -MAX_MS ? -MAX_MS : zone.midnightUtc(zone.localDay(fromMs))
  const hi = toMs >= MAX_MS ? MAX_MS : zone.midnightUtc(zone.localDay(toMs) + 1) - 1
  const minute = written
    ? readMinuteBars(st, written, symbol, lo, hi)
    : readBarsWith(st, { symbol, period: '1m', fromMs: lo, toMs: hi, limit: Number.MAX_SAFE_INTEGER })
  const market = MARKETS[parseSymbol(symbol).exchange]
  const rollups = buildAllRollups(minute, market)
  ROLLUP_PERIODS.forEach((period, k) => {
    deleteBarsWith(st, { symbol, period, fromMs: lo, toMs: hi })
    if (barCount(minute)) putBarsWith(st, symbol, period, rollups[k])
  })
}

/** A symbol's touched days are rebuilt as soon as they number this many: bounds the 1m bars a rebuild holds. */
const SLICE_DAYS = 32

/**
 * The local days a write transaction touched with 1m puts and deletes, per symbol, their rollups
 * rebuilt once SLICE_DAYS of them wait (and the rest before the commit). Rebuilding after every put
 * cost a file interleaved minute by minute over many symbols a rebuild of the same day per small
 * flush (an import flushes a few hundred rows of each symbol at a time); a file sorted by symbol
 * flushes months at a time, rebuilt at once, while its parse thread reads on. Readers see only
 * committed data, so none sees rollups that lag the 1m bars.
 */
export class TouchedDays {
  /** Per symbol, [first, last] local days (infinite for an open bound), merged when they meet. */
  readonly #days = new Map<string, [number, number][]>()

  constructor(
    private readonly st: ChunkStatements,
    /** The transaction's 1m chunks as written: rebuilds read them instead of decoding them again. */
    private readonly written?: WrittenChunks,
  ) {}

  add(symbol: string, fromMs = -MAX_MS, toMs = MAX_MS): void {
    if (fromMs > toMs) return
    const zone = MARKETS[parseSymbol(symbol).exchange].zone
    const lo = fromMs <= -MAX_MS ? -Infinity : zone.localDay(fromMs)
    const hi = toMs >= MAX_MS ? Infinity : zone.localDay(toMs)
    let list = this.#days.get(symbol)
    if (!list) this.#days.set(symbol, (list = []))
    const last = list.at(-1)
    // Flushes of a file sorted by time touch the same or the next day: one range grows.
    if (last && lo <= last[1] + 1 && hi >= last[0] - 1) {
      last[0] = Math.min(last[0], lo)
      last[1] = Math.max(last[1], hi)
    } else list.push([lo, hi])
    if (list.reduce((days, [l, h]) => days + h - l + 1, 0) >= SLICE_DAYS) this.#rebuild(symbol)
  }

  /** Rebuilds every touched day's rollups and forgets them (before the commit). */
  rebuildAll(): void {
    for (const symbol of [...this.#days.keys()]) this.#rebuild(symbol)
  }

  #rebuild(symbol: string): void {
    const zone = MARKETS[parseSymbol(symbol).exchange].zone
    // Each range is at most SLICE_DAYS days plus one write's: rebuilt whole (slices of it rewrote the
    // rollup chunks they share, 60m chunks spanning months, once per slice).
    for (const [lo, hi] of merged(this.#days.get(symbol) ?? [])) {
      rebuildRollupsWith(
        this.st,
        symbol,
        Number.isFinite(lo) ? zone.midnightUtc(lo) : -MAX_MS,
        Number.isFinite(hi) ? zone.midnightUtc(hi + 1) - 1 : MAX_MS,
        this.written,
      )
    }
    this.#days.delete(symbol)
  }
}

/** Day ranges sorted and merged where they overlap or meet. */
function merged(list: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = []
  for (const [lo, hi] of [...list].sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1)
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else out.push([lo, hi])
  }
  return out
}

/** Migration 5's second half: rollups for every symbol with 1m bars, then the mark cleared (one transaction). */
export function buildPendingRollups(db: Db, st: ChunkStatements): void {
  const pending = db.prepare("SELECT value FROM meta WHERE key = 'rollups_pending'").pluck().get()
  if (pending === undefined) return
  db.transaction(() => {
    const symbols = db.prepare<[], string>("SELECT DISTINCT symbol FROM chunks WHERE period = '1m'").pluck().all()
    for (const symbol of symbols) rebuildRollupsWith(st, symbol)
    db.prepare("DELETE FROM meta WHERE key = 'rollups_pending'").run()
  }).immediate()
}
