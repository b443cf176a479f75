/**
 * @module `--format lean`: QuantConnect LEAN's US equity files as they sit in its Data folder.
 * Bars (`daily/<t>.zip`, `minute/<t>/<yyyyMMdd>_trade.zip`, or the CSVs inside): no header, prices in
 * deci-cents (1/10000 USD), volume in shares, New York time at the bar's start; the ticker (and a
 * minute file's day) come from the file's name. Factor files (`factor_files/<t>.csv`): per-event
 * ex-factors from consecutive rows' price_factor x split_factor.
 */
import { MdqError } from '../../domain/errors.js'
import { MARKETS } from '../../domain/market.js'
import { daysFromCivil, isoWeekday, MINUTE_MS, DAY_MS, formatCivil, civilFromDays } from '../../domain/time-zone.js'
import type { MarketStore } from '../../store/market-store.js'
import type { ImportKind } from '../import-file.js'
import { convertedFile, shiftDecimal, VendorFileError, type ConvertedRow, type PresetFile } from './converted-file.js'
import { leanName, readLeanSource, type LeanCsv, type LeanSource } from './lean-files.js'

const NY = MARKETS.US.zone
const DAILY_ROW = 'yyyyMMdd HH:mm,open,high,low,close,volume'
const MINUTE_ROW = 'ms_since_midnight,open,high,low,close,volume'

export interface LeanContext {
  readonly store: MarketStore
  readonly period: '1m' | '1d'
  /** Whether --period was given (LEAN's file names say the period otherwise). */
  readonly periodGiven: boolean
  readonly symbol?: string
}

export async function openLean(kind: ImportKind, path: string, ctx: LeanContext): Promise<PresetFile> {
  if (kind !== 'bars' && kind !== 'ex-factors')
    throw new MdqError(
      'BAD_IMPORT',
      `--format lean reads bars (daily and minute) and ex-factors (factor files), not ${kind}`,
    )
  const source = await readLeanSource(path)
  return kind === 'bars' ? leanBars(source, ctx) : leanFactors(source, ctx)
}

const fail = (path: string, line: number, col: number, reason: string): never => {
  throw new VendorFileError(path, line, col, reason)
}

function dayOfYmd(ymd: string): number {
  return daysFromCivil(Number(ymd.slice(0, 4)), Number(ymd.slice(4, 6)), Number(ymd.slice(6, 8)))
}

function leanBars(source: LeanSource, ctx: LeanContext): PresetFile {
  const { path } = source
  if (source.csvs.length !== 1)
    fail(path, 0, 0, `a LEAN bars zip holds one CSV file; this one holds ${source.csvs.length}`)
  const csv = source.csvs[0]
  const name = leanName(csv.name)
  if (!name || name.kind === 'other')
    return fail(
      path,
      0,
      0,
      name
        ? `LEAN ${name.resolution} bars: mdq imports minute and daily bars`
        : `'${csv.name}' is not named as LEAN names bars (<ticker>.csv for daily, <yyyyMMdd>_<ticker>_minute_trade.csv)`,
    )
  if (name.kind === 'minute' && name.tickType !== 'trade')
    fail(
      path,
      0,
      0,
      `LEAN ${name.tickType} bars: mdq imports trade bars (the ${name.ymd}_${name.ticker}_minute_trade file)`,
    )
  const period = name.kind === 'minute' ? '1m' : '1d'
  if (ctx.periodGiven && ctx.period !== period)
    fail(path, 0, 0, `this LEAN file holds ${period === '1m' ? 'minute' : 'daily'} bars, not --period ${ctx.period}`)
  const symbol = ctx.symbol ?? `${name.ticker.toUpperCase()}.US`
  const rows: ConvertedRow[] = csv.lines.map(({ line, text }) => {
    const f = text.split(',')
    if (f.length !== 6)
      fail(
        path,
        line,
        1,
        `a LEAN ${period === '1m' ? 'minute' : 'daily'} row has 6 fields, ${period === '1m' ? MINUTE_ROW : DAILY_ROW} (prices in deci-cents); this one has ${f.length}`,
      )
    const time = name.kind === 'minute' ? minuteTime(path, line, name.ymd, f[0]) : dailyTime(path, line, f[0])
    const prices = f.slice(1, 5).map((p, k) => {
      const dollars = shiftDecimal(p.trim(), -4)
      if (dollars === undefined || dollars === '')
        fail(
          path,
          line,
          k + 2,
          `${['open', 'high', 'low', 'close'][k]} '${p.slice(0, 40)}' is not a price in deci-cents`,
        )
      return dollars!
    })
    return { line, fields: [time, ...prices, f[5].trim()] }
  })
  return {
    file: convertedFile(
      { path, sizeBytes: source.sizeBytes, bytesRead: () => source.sizeBytes, close: async () => {} },
      ['time', 'open', 'high', 'low', 'close', 'volume'],
      (async function* () {
        yield rows
      })(),
    ),
    sourceColumn: (c) => c,
    note: () => undefined,
    options: { period, symbol },
  }
}

function dailyTime(path: string, line: number, stamp: string): string {
  const m = /^(\d{8}) (\d{2}):(\d{2})$/.exec(stamp.trim())
  if (!m)
    return fail(path, line, 1, `'${stamp.slice(0, 40)}' is not a LEAN daily stamp yyyyMMdd HH:mm (row ${DAILY_ROW})`)
  if (m[2] !== '00' || m[3] !== '00')
    fail(
      path,
      line,
      1,
      `a bar at ${m[2]}:${m[3]}: LEAN hour bars; mdq imports minute and daily bars (and rolls up the rest)`,
    )
  return m[1]
}

function minuteTime(path: string, line: number, ymd: string, field: string): string {
  const ms = /^\d+$/.test(field.trim()) ? Number(field) : NaN
  if (!(ms >= 0 && ms < DAY_MS) || ms % MINUTE_MS !== 0)
    fail(
      path,
      line,
      1,
      `'${field.slice(0, 40)}' is not a whole minute in milliseconds since midnight (row ${MINUTE_ROW})`,
    )
  const minute = ms / MINUTE_MS
  const hh = String(Math.floor(minute / 60)).padStart(2, '0')
  const mm = String(minute % 60).padStart(2, '0')
  return `${ymd.slice(0, 4)}-${ymd.slice(4, 6)}-${ymd.slice(6, 8)} ${hh}:${mm}`
}

interface FactorRow {
  readonly line: number
  readonly day: number
  readonly factor: number
}

function factorRows(path: string, csv: LeanCsv): FactorRow[] {
  return csv.lines.map(({ line, text }) => {
    const f = text.split(',')
    if (f.length < 3 || !/^\d{8}$/.test(f[0].trim()))
      fail(
        path,
        line,
        1,
        `not a LEAN factor file row date,price_factor,split_factor,reference_price: '${text.slice(0, 60)}'`,
      )
    const [pf, sf] = [Number(f[1]), Number(f[2])]
    if (!(pf > 0) || !Number.isFinite(pf))
      fail(path, line, 2, `price_factor '${f[1].slice(0, 40)}' is not a positive number`)
    if (!(sf > 0) || !Number.isFinite(sf))
      fail(path, line, 3, `split_factor '${f[2].slice(0, 40)}' is not a positive number`)
    return { line, day: dayOfYmd(f[0].trim()), factor: pf * sf }
  })
}

/**
 * A factor file's row dated D holds the factor up to D: the event between rows i and i+1 has
 * f = factor(i+1) / factor(i) and its ex-date on the first trading day after D, the first stored
 * daily bar after D (the next weekday past the last stored bar).
 */
async function leanFactors(source: LeanSource, ctx: LeanContext): Promise<PresetFile> {
  const { path } = source
  const out: ConvertedRow[] = []
  for (const csv of source.csvs) {
    const name = leanName(csv.name)
    if (name?.kind !== 'series')
      fail(path, 0, 0, `'${csv.name}' is not named as LEAN names factor files (<ticker>.csv)`)
    const ticker = (name as { ticker: string }).ticker
    const symbol = source.csvs.length === 1 && ctx.symbol ? ctx.symbol : `${ticker.toUpperCase()}.US`
    const stored = await ctx.store.readBars({ symbol, period: '1d', limit: Number.MAX_SAFE_INTEGER })
    const days = Array.from(stored.timestamp, (t) => NY.localDay(t))
    const rows = factorRows(path, csv)
    for (let i = 0; i + 1 < rows.length; i++) {
      const [a, b] = [rows[i], rows[i + 1]]
      if (b.day <= a.day) fail(path, b.line, 1, 'factor file rows are not in ascending date order')
      const f = Number((b.factor / a.factor).toPrecision(12))
      if (f === 1) continue
      out.push({ line: a.line, fields: [symbol, formatCivil(civilFromDays(exDay(days, a.day))), String(f)] })
    }
  }
  return {
    file: convertedFile(
      { path, sizeBytes: source.sizeBytes, bytesRead: () => source.sizeBytes, close: async () => {} },
      ['symbol', 'ex_date', 'ex_factor'],
      (async function* () {
        yield out
      })(),
    ),
    sourceColumn: () => 1,
    note: () => undefined,
  }
}

/** The first of the ascending stored `days` after `day`, else the next weekday. */
function exDay(days: readonly number[], day: number): number {
  let lo = 0
  let hi = days.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (days[mid] <= day) lo = mid + 1
    else hi = mid
  }
  if (lo < days.length) return days[lo]
  let next = day + 1
  while (isoWeekday(next) >= 5) next++
  return next
}
