/** @module Corrections: deletes of bars, ex-factors and instruments, each one all-or-nothing write, counted from committed data. */
import { barCount } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { parseSymbol, type Market } from '../domain/market.js'
import { STATEMENTS } from '../domain/financials.js'
import { STORED_PERIODS } from '../domain/period.js'
import { civilFromDays, formatCivil } from '../domain/time-zone.js'
import type { BarRange, EventRange, MarketStore, StatementRange } from '../store/market-store.js'
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
  const r = argReader(text, flag)
  try {
    const t = r.time(0, market)
    const dateOnly = !/^\d+$/.test(text.trim()) && !/[ T]\d/.test(text.trim())
    return flag === '--to' && dateOnly ? market.zone.midnightUtc(market.zone.localDay(t) + 1) - 1 : t
  } catch (err) {
    if (err instanceof ImportError) throw new MdqError('BAD_PARAM', `${flag}: ${err.reason}`)
    throw err
  }
}

/** A FieldReader over one command-line value, so it is read exactly as the files' fields are. */
function argReader(text: string, flag: string): FieldReader {
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
  return r
}

/** A --from / --to period end: `YYYY-MM-DD` or `YYYYMMDD`, as `YYYY-MM-DD`. */
export function parseDateArg(text: string, flag: '--from' | '--to'): string {
  try {
    return formatCivil(civilFromDays(argReader(text, flag).date(0, 'the date')))
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

/** The statement versions of one symbol in a period_end range of --from / --to (inclusive, absent = open). */
export function periodRangeOf(a: RangeArgs): { symbol: string; fromPeriod?: string; toPeriod?: string } {
  const { symbol } = parseSymbol(a.symbol, '--symbol')
  const fromPeriod = a.from === undefined ? undefined : parseDateArg(a.from, '--from')
  const toPeriod = a.to === undefined ? undefined : parseDateArg(a.to, '--to')
  if (fromPeriod !== undefined && toPeriod !== undefined && fromPeriod > toPeriod)
    throw new MdqError('BAD_PARAM', `--from ${a.from} is after --to ${a.to}`)
  return { symbol, ...(fromPeriod && { fromPeriod }), ...(toPeriod && { toPeriod }) }
}

/** Deletes every version of one symbol's statement with a period_end in range; returns how many there were. */
export async function deleteFinancials(store: MarketStore, range: StatementRange): Promise<number> {
  const n = (await store.readFinancials(range.statement, [range.symbol], range)).get(range.symbol)?.length ?? 0
  if (n > 0) await store.write({ deleteFinancials: [range] })
  return n
}

export interface InstrumentDeletion {
  readonly instruments: number
  readonly bars: number
  readonly events: number
  /** Statement versions, of every statement. */
  readonly statements: number
}

/** Deletes instruments with everything stored under them (bars of every period, ex-factors, statements); unknown symbols refuse the whole delete. */
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
  let statements = 0
  const periods = STORED_PERIODS
  for (const symbol of symbols) {
    for (const period of periods) bars += barCount(await store.readBars({ symbol, period, limit: ALL }))
    events += (await store.readExFactors([symbol])).get(symbol)?.length ?? 0
  }
  for (const statement of STATEMENTS)
    for (const list of (await store.readFinancials(statement, symbols)).values()) statements += list.length
  await store.write({
    deleteBars: symbols.flatMap((symbol) => periods.map((period) => ({ symbol, period }))),
    deleteExFactors: symbols.map((symbol) => ({ symbol })),
    deleteFinancials: symbols.flatMap((symbol) => STATEMENTS.map((statement) => ({ statement, symbol }))),
    deleteInstruments: symbols,
  })
  return { instruments: symbols.length, bars, events, statements }
}
