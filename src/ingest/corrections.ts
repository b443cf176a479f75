/** @module Corrections: deletes of bars, ex-factors and instruments, each one all-or-nothing write, counted from committed data. */
import { barCount } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { parseSymbol, type Market } from '../domain/market.js'
import { STORED_PERIODS } from '../domain/period.js'
import type { BarRange, EventRange, MarketStore } from '../store/market-store.js'
import { batchOfFields, type CsvFile } from './csv-reader.js'
import { FieldReader, marketOfParts } from './fields.js'
import { ImportError } from './import-error.js'

const ALL = Number.MAX_SAFE_INTEGER

/**
 * A --from / --to time in the forms of the import files' time column, read by the same FieldReader
 * (epoch ms or local dates and times in the symbol's exchange zone). A bare date as `--to` means
 * through the end of that day, so `--to 2024-01-05` includes that day's minute bars.
 */
export function parseTimeArg(text: string, market: Market, flag: '--from' | '--to'): number {
  const file: CsvFile = {
    path: flag,
    header: [flag],
    sizeBytes: 0,
    batches: (async function* () {})(),
    bytesRead: () => 0,
    close: async () => undefined,
  }
  const r = new FieldReader(file)
  r.at(batchOfFields([text]), 0)
  try {
    const t = r.time(0, market)
    const dateOnly = !/^\d+$/.test(text.trim()) && !/[ T]\d/.test(text.trim())
    return flag === '--to' && dateOnly ? market.zone.midnightUtc(market.zone.localDay(t) + 1) - 1 : t
  } catch (err) {
    if (err instanceof ImportError) throw new MdqError('BAD_PARAM', `${flag}: ${err.reason}`)
    throw err
  }
}

export interface RangeArgs {
  readonly symbol: string
  readonly from?: string
  readonly to?: string
}

/** The canonical symbol and the inclusive epoch-ms range of --from / --to (absent = open). */
export function rangeOf(a: RangeArgs): { symbol: string; fromMs?: number; toMs?: number } {
  const parts = parseSymbol(a.symbol, '--symbol')
  const market = marketOfParts(parts)
  const fromMs = a.from === undefined ? undefined : parseTimeArg(a.from, market, '--from')
  const toMs = a.to === undefined ? undefined : parseTimeArg(a.to, market, '--to')
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
    throw new MdqError('BAD_PARAM', `--from ${a.from} is after --to ${a.to}`)
  return { symbol: parts.symbol, ...(fromMs !== undefined && { fromMs }), ...(toMs !== undefined && { toMs }) }
}

/** Nothing to delete of a symbol the store does not know is a mistyped symbol, not a success. */
async function refuseUnknown(store: MarketStore, symbol: string): Promise<void> {
  if ((await store.readInstruments([symbol])).length === 0)
    throw new MdqError('UNKNOWN_SYMBOL', `unknown instrument ${symbol}: nothing deleted`)
}

/** Deletes the bars of one symbol and stored period in a range; returns how many there were. */
export async function deleteBars(store: MarketStore, range: BarRange): Promise<number> {
  const n = barCount(await store.readBars({ ...range, limit: ALL }))
  if (n > 0) await store.write({ deleteBars: [range] })
  else await refuseUnknown(store, range.symbol)
  return n
}

/** Deletes the ex-factor events of one symbol in a range; returns how many there were. */
export async function deleteExFactors(store: MarketStore, range: EventRange): Promise<number> {
  const n = (await store.readExFactors([range.symbol], range.fromMs, range.toMs)).get(range.symbol)?.length ?? 0
  if (n > 0) await store.write({ deleteExFactors: [range] })
  else await refuseUnknown(store, range.symbol)
  return n
}

export interface InstrumentDeletion {
  readonly instruments: number
  readonly bars: number
  readonly events: number
}

/** Deletes instruments with everything stored under them (bars of every period, ex-factors); unknown symbols refuse the whole delete. */
export async function deleteInstruments(store: MarketStore, inputs: readonly string[]): Promise<InstrumentDeletion> {
  const symbols = [...new Set(inputs.map((s) => parseSymbol(s, 'symbols').symbol))]
  const known = new Set((await store.readInstruments(symbols)).map((i) => i.symbol))
  const unknown = symbols.filter((s) => !known.has(s))
  if (unknown.length > 0)
    throw new MdqError(
      'UNKNOWN_SYMBOL',
      `unknown instrument ${unknown.join(', ')}: nothing deleted (see mdq delete bars for bars without an instrument)`,
    )
  let bars = 0
  let events = 0
  const periods = STORED_PERIODS
  for (const symbol of symbols) {
    for (const period of periods) bars += barCount(await store.readBars({ symbol, period, limit: ALL }))
    events += (await store.readExFactors([symbol])).get(symbol)?.length ?? 0
  }
  await store.write({
    deleteBars: symbols.flatMap((symbol) => periods.map((period) => ({ symbol, period }))),
    deleteExFactors: symbols.map((symbol) => ({ symbol })),
    deleteInstruments: symbols,
  })
  return { instruments: symbols.length, bars, events }
}
