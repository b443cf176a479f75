/** @module `mdq import instruments|ex-factors|actions`: the small reference files, each in one transaction. */
import { exFactorOfAction, referencePrice, type CorporateAction, type ExFactorEvent } from '../domain/ex-factors.js'
import { isSecurityType, SECURITY_TYPES, type Instrument } from '../domain/instrument.js'
import { MARKETS } from '../domain/market.js'
import { civilFromDays, formatCivil } from '../domain/time-zone.js'
import type { ImportCounts, ImportTarget } from './import-target.js'
import { columnsOf, LAYOUTS } from './columns.js'
import type { CsvFile } from './csv-reader.js'
import { checkFactorSpan } from './factor-span.js'
import { FieldReader, marketOfParts } from './fields.js'
import { ImportError } from './import-error.js'

const counts = (): ImportCounts => ({ rows: 0, skipped: 0, symbols: 0, events: 0 })

/**
 * Instruments by symbol: the columns the file has set their fields (an empty field clears one); the
 * columns it leaves out keep what the store holds for a known symbol (a file of `symbol,lot_size`
 * changes lot sizes alone).
 */
export async function importInstruments(file: CsvFile, { store, writer }: ImportTarget): Promise<ImportCounts> {
  const cols = columnsOf(file, LAYOUTS.instruments)
  const r = new FieldReader(file)
  const out = new Map<string, Instrument>()
  const c = counts()
  const optional = (col: number | undefined, name: string) => {
    const v = r.number(col, name, NaN)
    if (v < 0) r.fail(col!, `${name} ${v} is negative`)
    return Number.isNaN(v) ? null : v
  }
  const lotSize = () => {
    const v = optional(cols.lot_size, 'lot_size')
    if (v !== null && !Number.isInteger(v)) r.fail(cols.lot_size!, `lot_size ${v} is not a whole number of shares`)
    return v
  }
  for await (const batch of file.batches) {
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      c.rows++
      const parts = r.symbol(cols.symbol)
      const type = r.text(cols.type)
      if (type !== '' && !isSecurityType(type))
        r.fail(cols.type!, `type '${type}' is not one of ${SECURITY_TYPES.join(', ')}`)
      const listing =
        r.text(cols.listing_date) === '' ? null : formatCivil(civilFromDays(r.date(cols.listing_date!, 'listing_date')))
      out.set(parts.symbol, {
        symbol: parts.symbol,
        code: parts.code,
        exchange: parts.exchange,
        region: MARKETS[parts.exchange].region,
        name: r.text(cols.name) || null,
        type: type === '' ? null : (type as Instrument['type']),
        listingDate: listing,
        tickSize: optional(cols.tick_size, 'tick_size'),
        totalShares: optional(cols.total_shares, 'total_shares'),
        floatShares: optional(cols.float_shares, 'float_shares'),
        limitUp: optional(cols.limit_up, 'limit_up'),
        limitDown: optional(cols.limit_down, 'limit_down'),
        nameEn: r.text(cols.name_en) || null,
        lotSize: lotSize(),
      })
    }
  }
  await writer.putInstruments(await keepingAbsentColumns([...out.values()], cols, store))
  c.symbols = out.size
  return c
}

/** The instrument fields and the columns that set them. */
const INSTRUMENT_COLUMNS = {
  name: 'name',
  type: 'type',
  listingDate: 'listing_date',
  tickSize: 'tick_size',
  totalShares: 'total_shares',
  floatShares: 'float_shares',
  limitUp: 'limit_up',
  limitDown: 'limit_down',
  nameEn: 'name_en',
  lotSize: 'lot_size',
} as const satisfies Partial<Record<keyof Instrument, string>>

/** `read`, with each field whose column the file lacks taken from the stored instrument, if any. */
async function keepingAbsentColumns(
  read: Instrument[],
  cols: Readonly<Record<string, number | undefined>>,
  store: ImportTarget['store'],
): Promise<Instrument[]> {
  const fields = Object.keys(INSTRUMENT_COLUMNS) as (keyof typeof INSTRUMENT_COLUMNS)[]
  const absent = fields.filter((field) => cols[INSTRUMENT_COLUMNS[field]] === undefined)
  if (absent.length === 0 || read.length === 0) return read
  const stored = new Map((await store.readInstruments(read.map((x) => x.symbol))).map((x) => [x.symbol, x]))
  return read.map((x) => {
    const held = stored.get(x.symbol)
    if (held === undefined) return x
    const kept = { ...x }
    for (const field of absent) Object.assign(kept, { [field]: held[field] })
    return kept
  })
}

/** Shared loop of the two event formats: symbol must be known, ex_date a date; `factor` gives f. */
async function importEvents(
  file: CsvFile,
  { store, writer }: ImportTarget,
  cols: { readonly symbol: number; readonly ex_date: number },
  factor: (r: FieldReader, exDateUtc: number, symbol: string) => Promise<number>,
): Promise<ImportCounts> {
  const r = new FieldReader(file)
  const events = new Map<string, Map<number, ExFactorEvent>>()
  /** The line of each event, by symbol and ex-date. */
  const lines = new Map<string, Map<number, number>>()
  const known = new Map<string, boolean>()
  const c = counts()
  for await (const batch of file.batches) {
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      c.rows++
      const parts = r.symbol(cols.symbol)
      if (!known.has(parts.symbol)) known.set(parts.symbol, (await store.readInstruments([parts.symbol])).length > 0)
      if (!known.get(parts.symbol))
        r.fail(cols.symbol, `unknown symbol ${parts.symbol}: import its instrument or bars first`)
      const market = marketOfParts(parts)
      const ts = market.zone.midnightUtc(r.date(cols.ex_date, 'ex_date'))
      const f = await factor(r, ts, parts.symbol)
      if (!(f > 0) || !Number.isFinite(f))
        r.fail(cols.ex_date, `the ex-factor of this row is ${f}, not a positive number`)
      let bySymbol = events.get(parts.symbol)
      if (!bySymbol) {
        events.set(parts.symbol, (bySymbol = new Map()))
        lines.set(parts.symbol, new Map())
      }
      bySymbol.set(ts, { timestamp: ts, exFactor: f })
      lines.get(parts.symbol)!.set(ts, r.line)
    }
  }
  for (const [symbol, bySymbol] of events)
    await checkFactorSpan(store, symbol, [...bySymbol.values()], (message, worst) => {
      throw new ImportError(file.path, lines.get(symbol)!.get(worst.timestamp)!, cols.ex_date + 1, message)
    })
  for (const [symbol, bySymbol] of events) {
    await writer.putExFactors(symbol, [...bySymbol.values()])
    c.events += bySymbol.size
  }
  c.symbols = events.size
  return c
}

export function importExFactors(file: CsvFile, target: ImportTarget): Promise<ImportCounts> {
  const cols = columnsOf(file, LAYOUTS['ex-factors'])
  return importEvents(file, target, cols, async (r) => r.number(cols.ex_factor, 'ex_factor'))
}

/** Corporate actions -> ex-factors with the exchange formula; P is the committed raw close before the ex-date. */
export function importActions(file: CsvFile, target: ImportTarget): Promise<ImportCounts> {
  const at = columnsOf(file, LAYOUTS.actions)
  const names = ['cash_dividend', 'bonus_ratio', 'rights_ratio', 'rights_price', 'split_ratio'] as const
  return importEvents(file, target, at, async (r, ts, symbol) => {
    // A row without any action would store a factor of 1.0 over whatever event the ex-date had.
    if (names.every((name) => r.text(at[name]) === ''))
      r.fail(at.ex_date, `this row gives no action: fill at least one of ${names.join(', ')}`)
    const nonNegative = (name: (typeof names)[number], fallback: number) => {
      const v = r.number(at[name], name, fallback)
      if (v < 0) r.fail(at[name]!, `${name} ${v} is negative`)
      return v
    }
    const action: CorporateAction = {
      cashDividend: nonNegative('cash_dividend', 0),
      bonusRatio: nonNegative('bonus_ratio', 0),
      rightsRatio: nonNegative('rights_ratio', 0),
      rightsPrice: nonNegative('rights_price', 0),
      splitRatio: nonNegative('split_ratio', 1),
    }
    if (action.splitRatio === 0) r.fail(at.split_ratio!, 'split_ratio must be positive')
    // A rights issue is bought at its price: none given would be read as free shares (a bonus issue).
    if (action.rightsRatio > 0 && r.text(at.rights_price) === '')
      r.fail(at.rights_ratio!, 'a rights issue needs its rights_price (a bonus issue without one is bonus_ratio)')
    const before = await target.store.readBars({ symbol, period: '1d', toMs: ts - 1, limit: 1 })
    if (before.close.length === 0)
      r.fail(
        at.ex_date,
        `no daily bar of ${symbol} before this ex_date to take the last close P from: import its daily bars first`,
      )
    const p = before.close[0]
    if (!(referencePrice(p, action) > 0))
      r.fail(at.cash_dividend ?? at.ex_date, `the reference price is not positive (last close ${p})`)
    return exFactorOfAction(p, action)
  })
}
