/**
 * @module Pushed rows (JSON objects: TickFlow `Quote`s, `MarketDepth`s, bars with the CSV's columns)
 * checked into domain values by the import's own rules and messages, each failure naming the row's
 * index (from 0, as in the array) and its field.
 */
import { allocBars, type Bars } from '../domain/bars.js'
import type { MarketDepth } from '../domain/depth.js'
import { MdqError } from '../domain/errors.js'
import { MARKETS, parseSymbol, type Market } from '../domain/market.js'
import type { QuoteSnapshot } from '../domain/minute-bars.js'
import type { StoredPeriod } from '../domain/period.js'
import { MINUTE_MS } from '../domain/time-zone.js'
import type { PushedQuote } from '../live/live-feed.js'
import {
  barRowProblem,
  barTimeProblem,
  countsProblem,
  outsideSessionsReason,
  priceProblem,
  weekendReason,
  wholeMinuteReason,
} from './bar-rows.js'
import { epochMsOf, timeOfText } from './fields.js'

/** Rows one push may hold (documented; more is a 413): a minute of a 10,000-symbol market in one batch. */
export const MAX_PUSH_ROWS = 10_000
/** Depth levels a side may hold. */
const MAX_DEPTH_LEVELS = 50
/** Members an `ext` object may hold. */
const MAX_EXT_MEMBERS = 32

/** A pushed bar row, checked: its symbol, period and bar (one row of Bars). */
export interface PushedBar {
  readonly symbol: string
  readonly period: StoredPeriod
  readonly bars: Bars
}

type Row = Record<string, unknown>

const badRow = (index: number, field: string, reason: string) =>
  new MdqError('BAD_PARAM', `Row ${index} ('${field}'): ${reason}.`)

/** The rows of a pushed body: a JSON array (or NDJSON, parsed to one), at most MAX_PUSH_ROWS of objects. */
export function pushedRows(body: unknown): Row[] {
  if (!Array.isArray(body))
    throw new MdqError('BAD_PARAM', 'The body must be a JSON array of rows (or NDJSON, one row a line).')
  if (body.length > MAX_PUSH_ROWS)
    throw new MdqError(
      'TOO_LARGE',
      `A push holds at most ${MAX_PUSH_ROWS} rows (got ${body.length}); send the rest in another request.`,
    )
  body.forEach((row, i) => {
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw new MdqError('BAD_PARAM', `Row ${i}: must be a JSON object.`)
  })
  return body as Row[]
}

/** Reads the fields of one row, each failure naming the row and the field. */
class RowReader {
  constructor(
    private readonly row: Row,
    readonly index: number,
  ) {}

  fail(field: string, reason: string): never {
    throw badRow(this.index, field, reason)
  }

  symbol(field = 'symbol'): { symbol: string; market: Market } {
    const v = this.row[field]
    if (typeof v !== 'string') return this.fail(field, 'is required, a string like 600000.SH')
    try {
      const parts = parseSymbol(v)
      return { symbol: parts.symbol, market: MARKETS[parts.exchange] }
    } catch (err) {
      if (err instanceof MdqError)
        return this.fail(field, err.message.replace("Parameter 'symbol': ", '').replace(/\.$/, ''))
      throw err
    }
  }

  /** A finite JSON number; `fallback` when absent or null (undefined: required). */
  number(field: string, fallback?: number): number {
    const v = this.row[field]
    if (v === undefined || v === null) {
      if (fallback !== undefined) return fallback
      return this.fail(field, `${field} is required`)
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(field, `${field} ${clip(v)} is not a number`)
    return v
  }

  /** Epoch milliseconds (seconds refused with a hint). */
  epochMs(field: string): number {
    const v = this.number(field)
    const ms = epochMsOf(v)
    return typeof ms === 'string' ? this.fail(field, ms) : ms
  }

  /**
   * Epoch milliseconds of a snapshot: not on a later day, in the exchange's zone, than `nowMs` (the
   * server's clock). The newest snapshot of a symbol is what later ones are measured against, so one
   * from the future (a feed's clock or date gone wrong) would have every real one ignored as older
   * until then; within today a feed may run ahead (a replay at N times real speed).
   */
  snapshotMs(field: string, market: Market, nowMs: number): number {
    const t = this.epochMs(field)
    const zone = market.zone
    if (zone.localDay(t) > zone.localDay(nowMs))
      this.fail(
        field,
        `${t} is ${zone.isoDate(t)} in ${zone.name}, a later day than this server's today (${zone.isoDate(nowMs)}); check the feed's clock`,
      )
    return t
  }

  /** A bar time: epoch milliseconds, or a local date/time string as a file's `time` column takes it. */
  time(field: string, market: Market): number {
    const v = this.row[field]
    const t = typeof v === 'string' ? timeOfText(v, market) : epochMsOf(this.number(field))
    return typeof t === 'string' ? this.fail(field, t) : t
  }

  numbers(field: string, integers: boolean): number[] {
    const v = this.row[field]
    if (!Array.isArray(v)) return this.fail(field, `${field} must be an array of numbers`)
    if (v.length > MAX_DEPTH_LEVELS)
      return this.fail(field, `${field} holds ${v.length} levels; at most ${MAX_DEPTH_LEVELS}`)
    for (const x of v) {
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || (integers && !Number.isSafeInteger(x)))
        return this.fail(field, `${field} must hold ${integers ? 'whole numbers' : 'numbers'} >= 0 (found ${clip(x)})`)
    }
    return v as number[]
  }

  /** TickFlow's `ext` object, kept as pushed: at most MAX_EXT_MEMBERS members of strings, numbers, booleans or null. */
  ext(): PushedQuote['ext'] {
    const v = this.row.ext
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'object' || Array.isArray(v)) return this.fail('ext', 'ext must be an object')
    const entries = Object.entries(v as Row)
    if (entries.length > MAX_EXT_MEMBERS) return this.fail('ext', `ext holds more than ${MAX_EXT_MEMBERS} members`)
    for (const [k, x] of entries)
      if (!(
        x === null ||
        typeof x === 'string' ||
        typeof x === 'boolean' ||
        (typeof x === 'number' && Number.isFinite(x))
      ))
        return this.fail('ext', `ext.${k.slice(0, 40)} must be a string, number, boolean or null`)
    return v as PushedQuote['ext']
  }
}

const clip = (v: unknown): string => {
  const s = typeof v === 'string' ? `'${v}'` : typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v))
  return s.length > 30 ? `${s.slice(0, 30)}...` : s
}

/**
 * TickFlow `Quote` rows checked: a symbol, an epoch-ms timestamp on a weekday and not after today
 * (`nowMs`: the server's clock), a last price and prev_close among the prices mdq keeps, the day's
 * cumulative volume (a whole number) and amount; once the day has traded (volume > 0), its open, high,
 * low and the last price meet a bar's rules.
 */
export function checkQuotes(rows: readonly Row[], nowMs: number): PushedQuote[] {
  return rows.map((row, i) => {
    const r = new RowReader(row, i)
    const { symbol, market } = r.symbol()
    const timestamp = r.snapshotMs('timestamp', market, nowMs)
    if (barTimeProblem(timestamp, '', market, true) === 'weekend')
      r.fail('timestamp', weekendReason(String(timestamp), market, timestamp))
    const lastPrice = r.number('last_price')
    const volume = r.number('volume')
    const amount = r.number('amount')
    const prevClose = r.number('prev_close')
    const open = r.number('open', 0)
    const high = r.number('high', 0)
    const low = r.number('low', 0)
    if (!(lastPrice > 0)) r.fail('last_price', `last_price ${lastPrice} is not a positive price`)
    if (!(prevClose > 0)) r.fail('prev_close', `prev_close ${prevClose} is not a positive price`)
    const problem =
      volume > 0
        ? barRowProblem(open, high, low, lastPrice, volume, amount, prevClose, 'last_price')
        : (countsProblem(volume, amount) ??
          priceProblem('close', lastPrice, 'last_price') ??
          priceProblem('prev_close', prevClose))
    if (problem) r.fail(problem[0] === 'close' ? 'last_price' : problem[0], problem[1])
    const snapshot: QuoteSnapshot = { symbol, timestamp, lastPrice, open, high, low, prevClose, volume, amount }
    const ext = r.ext()
    return ext === undefined ? { snapshot } : { snapshot, ext }
  })
}

/**
 * Bar rows (the bars CSV's columns, and `period` 1m or 1d) checked by the import's rules: `time` as
 * epoch ms or a local date/time, minute bars start-stamped on a whole minute inside the sessions.
 */
export function checkBars(rows: readonly Row[]): PushedBar[] {
  return rows.map((row, i) => {
    const r = new RowReader(row, i)
    const { symbol, market } = r.symbol()
    const period =
      row.period === '1m' || row.period === '1d' ? row.period : r.fail('period', "period must be '1m' or '1d'")
    const daily = period === '1d'
    const text = typeof row.time === 'string' ? row.time : String(row.time)
    let t = r.time('time', market)
    if (daily) t = market.zone.midnightUtc(market.zone.localDay(t))
    else if (t % MINUTE_MS !== 0) r.fail('time', wholeMinuteReason(text))
    const late = barTimeProblem(t, text, market, daily)
    if (late === 'weekend') r.fail('time', weekendReason(text, market, t))
    if (late === 'outside') r.fail('time', outsideSessionsReason(text, market, ''))
    const bars = allocBars(1)
    bars.timestamp[0] = t
    bars.open[0] = r.number('open')
    bars.high[0] = r.number('high')
    bars.low[0] = r.number('low')
    bars.close[0] = r.number('close')
    bars.volume[0] = r.number('volume')
    bars.amount[0] = r.number('amount', 0)
    bars.prevClose[0] = r.number('prev_close', NaN)
    const problem = barRowProblem(
      bars.open[0],
      bars.high[0],
      bars.low[0],
      bars.close[0],
      bars.volume[0],
      bars.amount[0],
      bars.prevClose[0],
    )
    if (problem) r.fail(problem[0], problem[1])
    return { symbol, period, bars }
  })
}

/**
 * TickFlow `MarketDepth` rows checked: a symbol, an epoch-ms timestamp not after today (`nowMs`: the
 * server's clock), per side prices (> 0) and whole volumes of one length.
 */
export function checkDepth(rows: readonly Row[], nowMs: number): MarketDepth[] {
  return rows.map((row, i) => {
    const r = new RowReader(row, i)
    const { symbol, market } = r.symbol()
    const timestamp = r.snapshotMs('timestamp', market, nowMs)
    const side = (prices: string, volumes: string) => {
      const p = r.numbers(prices, false)
      const v = r.numbers(volumes, true)
      if (p.length !== v.length) r.fail(volumes, `${volumes} holds ${v.length} levels and ${prices} ${p.length}`)
      if (p.some((x) => x === 0)) r.fail(prices, `${prices} must be positive prices`)
      return [p, v] as const
    }
    const [bidPrices, bidVolumes] = side('bid_prices', 'bid_volumes')
    const [askPrices, askVolumes] = side('ask_prices', 'ask_volumes')
    return { symbol, timestamp, bidPrices, bidVolumes, askPrices, askVolumes }
  })
}
