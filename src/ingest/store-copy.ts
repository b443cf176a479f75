/**
 * @module `mdq copy`: every instrument with its bars, ex-factors and financial statements, and every
 * imported universe, from one store into an empty one, in one all-or-nothing write (moving a SQLite
 * store into ClickHouse).
 */
import { performance } from 'node:perf_hooks'
import { barCount } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { STATEMENTS } from '../domain/financials.js'
import { STORED_PERIODS, type StoredPeriod } from '../domain/period.js'
import type { MarketStore, StoreWriter } from '../store/market-store.js'
import { withCheckpoints, type ImportCheckpoint } from './import-target.js'

/** Bars read and written at a time: 100,000 bars are 6.4 MB of columns, so memory stays bounded. */
export const COPY_PAGE_BARS = 100_000
/** Symbols whose statements are read at a time. */
const STATEMENT_SYMBOLS = 500

export interface CopySummary {
  readonly instruments: number
  readonly bars: Readonly<Record<StoredPeriod, number>>
  readonly events: number
  /** Versions of statements (every version of every period of the five statements). */
  readonly statements: number
  readonly universes: number
  readonly seconds: number
}

/** The stored bars of one series, newest page first, each page ascending; how many. */
async function copySeries(source: MarketStore, writer: StoreWriter, symbol: string, period: StoredPeriod) {
  let copied = 0
  for (let toMs: number | undefined; ;) {
    const page = await source.readBars({ symbol, period, limit: COPY_PAGE_BARS, ...(toMs !== undefined && { toMs }) })
    const n = barCount(page)
    if (n > 0) await writer.putBars(symbol, period, page)
    copied += n
    if (n < COPY_PAGE_BARS) return copied
    toMs = page.timestamp[0] - 1
  }
}

/**
 * Copies what the source serves: its instruments with their bars (1m and 1d, from which every other
 * period is derived), ex-factor events and every version of their statements, and its imported
 * universes. Bars, events or statements of a symbol without an instrument are never served, and are
 * not copied. The source is read in one snapshot
 * (where the backend has them), so an import committing meanwhile is copied whole or not at all.
 * Refuses a target that holds instruments or universes; nothing is visible there until the commit.
 */
export async function copyStore(
  source: MarketStore,
  target: MarketStore,
  checkpoint?: ImportCheckpoint,
): Promise<CopySummary> {
  const t0 = performance.now()
  const [held, heldUniverses] = await Promise.all([target.listInstruments(), target.readUniverses()])
  if (held.length > 0 || heldUniverses.length > 0)
    throw new MdqError(
      'BAD_PARAM',
      `--to already holds ${held.length} instrument(s) and ${heldUniverses.length} universe(s): mdq copy writes only into an empty store`,
    )
  return source.withSnapshot(async () => {
    const instruments = await source.listInstruments()
    const universes = await source.readUniverses()
    const symbols = instruments.map((i) => i.symbol)
    const exFactors = await source.readExFactors(symbols)
    const bars: Record<StoredPeriod, number> = { '1m': 0, '1d': 0 }
    let events = 0
    let statements = 0
    const begun = await target.beginWrite()
    const writer = checkpoint ? withCheckpoints(begun, checkpoint) : begun
    try {
      if (instruments.length > 0) await writer.putInstruments(instruments)
      for (const symbol of symbols)
        for (const period of STORED_PERIODS) bars[period] += await copySeries(source, writer, symbol, period)
      for (const [symbol, list] of exFactors) {
        if (list.length === 0) continue
        await writer.putExFactors(symbol, list)
        events += list.length
      }
      for (const statement of STATEMENTS)
        for (let i = 0; i < symbols.length; i += STATEMENT_SYMBOLS)
          for (const [symbol, records] of await source.readFinancials(
            statement,
            symbols.slice(i, i + STATEMENT_SYMBOLS),
          )) {
            await writer.putFinancials({ statement, symbol, records })
            statements += records.length
          }
      if (universes.length > 0) await writer.putUniverses(universes)
      await writer.commit()
    } catch (err) {
      await writer.rollback().catch(() => undefined)
      throw err
    }
    return {
      instruments: instruments.length,
      bars,
      events,
      statements,
      universes: universes.length,
      seconds: (performance.now() - t0) / 1000,
    }
  })
}
