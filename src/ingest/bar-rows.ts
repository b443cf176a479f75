/** @module A bars CSV read into checked column blocks: parsing and row checks only, no store, so a worker thread can run it. */
import { allocBars, sliceBars, type Bars } from '../domain/bars.js'
import { parseSymbol, type Market, type SymbolParts } from '../domain/market.js'
import type { StoredPeriod } from '../domain/period.js'
import { MINUTE_MS } from '../domain/time-zone.js'
import { MAX_AMOUNT, MAX_PRICE, MAX_VOLUME, MIN_PRICE } from '../domain/value-bounds.js'
import { columnsOf, LAYOUTS } from './columns.js'
import type { CsvFile } from './csv-reader.js'
import { FieldReader, inSession, isWeekday, marketOfParts } from './fields.js'
import { ImportError } from './import-error.js'

/** What reading rows needs of the import's options (plain data: it crosses to a worker). */
export interface BarRowOptions {
  readonly period: StoredPeriod
  /** For files without a symbol column. */
  readonly symbol?: string
  /** Whether minute times are bar starts or bar ends (end-stamped 09:31 is the 09:30 bar). */
  readonly stamp: 'start' | 'end'
  /** Prices (not amount) are divided by this, e.g. 10000 for LEAN's deci-cents. */
  readonly priceScale: number
  readonly outsideSessions: 'abort' | 'skip'
}

/** The checked rows of one CSV batch, in file order. */
export interface BarBlock {
  /** Rows read, skipped ones included. */
  readonly rows: number
  readonly skipped: number
  /** Symbols first met in this block: their ids count on from those of the blocks before. */
  readonly newSymbols: readonly string[]
  /** The symbol id of each kept row. */
  readonly symbolIds: Int32Array
  /** The kept rows' bars (all columns in one ArrayBuffer, so a block crosses threads as two buffers). */
  readonly bars: Bars
  /** Bytes of the file read so far (progress). */
  readonly bytesRead: number
}

/** A bar's fields as the rules name them (the CSV columns, and the pushed rows' fields). */
export type BarField = 'time' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount' | 'prev_close'

/**
 * The rules every bar meets, from a file or pushed: the first one broken, as the field and the
 * reason; undefined when none is. `close` names the close field (a quote's is `last_price`),
 * `volumeText` the volume as given.
 */
export function barRowProblem(
  open: number,
  high: number,
  low: number,
  close: number,
  volume: number,
  amount: number,
  prevClose: number,
  closeName = 'close',
  volumeText = String(volume),
  scaleHint = '',
): readonly [BarField, string] | undefined {
  if (high < low) return ['high', `high ${high} is below low ${low}`]
  if (open < low || open > high) return ['open', `open ${open} is outside [low ${low}, high ${high}]`]
  if (close < low || close > high) return ['close', `${closeName} ${close} is outside [low ${low}, high ${high}]`]
  // low and high bound the others; the bounds keep every adjust mode and aggregate exact (domain/value-bounds.ts).
  if (!(low >= MIN_PRICE)) return ['low', `low ${low} is below ${MIN_PRICE}, the smallest price mdq keeps`]
  if (high > MAX_PRICE) return ['high', `high ${high} is above ${MAX_PRICE}, the largest price mdq keeps${scaleHint}`]
  return countsProblem(volume, amount, volumeText) ?? priceProblem('prev_close', prevClose)
}

/** The volume and amount rules (a quote before its day's first trade meets these, not the price rules). */
export function countsProblem(
  volume: number,
  amount: number,
  volumeText = String(volume),
): readonly [BarField, string] | undefined {
  if (volume < 0) return ['volume', `volume ${volume} is negative`]
  if (!Number.isInteger(volume) || volume > MAX_VOLUME)
    return [
      'volume',
      `volume ${volumeText} is not a whole number up to ${MAX_VOLUME} (volumes are integers, in the source's unit)`,
    ]
  if (amount < 0) return ['amount', `amount ${amount} is negative`]
  if (amount > MAX_AMOUNT) return ['amount', `amount ${amount} is above the largest amount, ${MAX_AMOUNT}`]
  return undefined
}

/** A price, when given (NaN: not given), lies within the prices mdq keeps; `name`: the field as the row names it. */
export function priceProblem(
  field: BarField,
  price: number,
  name: string = field,
): readonly [BarField, string] | undefined {
  return price < MIN_PRICE || price > MAX_PRICE
    ? [field, `${name} ${price} is outside ${MIN_PRICE} .. ${MAX_PRICE}, the prices mdq keeps`]
    : undefined
}

/** Why a bar at `t` (stamped as stored) cannot be stored, by the time rules; `text` is the time as given. */
export function barTimeProblem(
  t: number,
  text: string,
  market: Market,
  daily: boolean,
): 'weekend' | 'outside' | undefined {
  if (!isWeekday(market, t)) return 'weekend'
  if (!daily && !inSession(market, t)) return 'outside'
  return undefined
}

export const weekendReason = (text: string, market: Market, t: number): string =>
  `${text} falls on a weekend (${market.zone.isoDate(t)}, ${market.zone.name})`
export const outsideSessionsReason = (text: string, market: Market, hint: string): string =>
  `bar at ${text} is outside the regular sessions of ${market.exchange}${hint}`
export const wholeMinuteReason = (text: string): string => `minute bar time ${text} is not on a whole minute`

/** The columns a bars file must have; a missing one, or no symbol at all, is an error at line 1. */
export function barColumns(file: CsvFile, opts: BarRowOptions) {
  const fixed: SymbolParts | undefined = opts.symbol ? parseSymbol(opts.symbol, '--symbol') : undefined
  const cols = columnsOf(file, LAYOUTS.bars, fixed ? ['--symbol'] : [])
  // Which would name the rows' symbol? Neither is taken over the other unsaid.
  if (fixed && cols.symbol !== undefined)
    throw new ImportError(
      file.path,
      1,
      cols.symbol + 1,
      `the file has a symbol column and --symbol ${opts.symbol} was given: --symbol is for files without one`,
    )
  return { cols, fixed }
}

/** Every row parsed and checked (the first bad one throws ImportError naming line and column). */
export async function* barBlocks(file: CsvFile, opts: BarRowOptions): AsyncGenerator<BarBlock> {
  const { cols, fixed } = barColumns(file, opts)
  const r = new FieldReader(file)
  const scale = opts.priceScale
  const scaleHint = scale === 1 ? ' (prices in deci-cents? give --price-scale 10000)' : ''
  const daily = opts.period === '1d'
  const shift = opts.stamp === 'end' && !daily ? MINUTE_MS : 0
  const ids = new Map<string, number>()
  let lastParts: SymbolParts | undefined
  let lastId = -1
  // A daily file's previous row per symbol (its day and its time as written): a second row of the day at
  // another time means a minute file read as daily, which would silently keep one bar a day.
  const lastDay: number[] = []
  const lastRaw: number[] = []
  for await (const batch of file.batches) {
    const bars = allocBars(batch.rows)
    const { timestamp, open: os, high: hs, low: ls, close: cs, volume: vs, amount: as, prevClose: pcs } = bars
    const symbolIds = new Int32Array(batch.rows)
    const newSymbols: string[] = []
    let n = 0
    let skipped = 0
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      const parts = r.symbol(cols.symbol, fixed)
      const market = marketOfParts(parts)
      let t = r.time(cols.time, market)
      const raw = t
      if (daily) t = market.zone.midnightUtc(market.zone.localDay(t))
      else {
        if (t % MINUTE_MS !== 0) r.fail(cols.time, wholeMinuteReason(r.text(cols.time)))
        t -= shift
      }
      const late = barTimeProblem(t, '', market, daily)
      if (late === 'weekend') r.fail(cols.time, weekendReason(r.text(cols.time), market, t))
      if (late === 'outside') {
        if (opts.outsideSessions === 'skip') {
          skipped++
          continue
        }
        r.fail(
          cols.time,
          outsideSessionsReason(r.text(cols.time), market, ' (use --outside-sessions skip to drop such bars)'),
        )
      }
      const open = r.number(cols.open, 'open') / scale
      const high = r.number(cols.high, 'high') / scale
      const low = r.number(cols.low, 'low') / scale
      const close = r.number(cols.close, 'close') / scale
      const volume = r.number(cols.volume, 'volume')
      const amount = r.number(cols.amount, 'amount', 0)
      const prevClose = r.number(cols.prev_close, 'prev_close', NaN) / scale
      const problem = barRowProblem(open, high, low, close, volume, amount, prevClose, 'close', undefined, scaleHint)
      if (problem) {
        // A volume as written in the file (the number read may be rounded).
        const [field, reason] =
          (problem[0] === 'volume' && countsProblem(volume, amount, r.text(cols.volume))) || problem
        r.fail(cols[field]!, reason)
      }
      if (parts !== lastParts) {
        let id = ids.get(parts.symbol)
        if (id === undefined) {
          ids.set(parts.symbol, (id = ids.size))
          newSymbols.push(parts.symbol)
        }
        lastParts = parts
        lastId = id
      }
      if (daily) {
        if (lastDay[lastId] === t && lastRaw[lastId] !== raw) {
          r.fail(
            cols.time,
            `a second ${parts.symbol} bar on ${market.zone.isoDate(t)} at another time (${r.text(cols.time)}): a daily file holds one bar a day (for minute bars give --period 1m)`,
          )
        }
        lastDay[lastId] = t
        lastRaw[lastId] = raw
      }
      symbolIds[n] = lastId
      timestamp[n] = t
      os[n] = open
      hs[n] = high
      ls[n] = low
      cs[n] = close
      vs[n] = volume
      as[n] = amount
      pcs[n] = prevClose
      n++
    }
    yield {
      rows: batch.rows,
      skipped,
      newSymbols,
      symbolIds: symbolIds.subarray(0, n),
      bars: sliceBars(bars, 0, n),
      bytesRead: file.bytesRead(),
    }
  }
}
