/**
 * @module `--format tushare`: Tushare Pro's daily bars (vol in lots of 100, amount in thousands of
 * CNY), `adj_factor` (a cumulative factor, turned into per-event ex-factors) and the consolidated
 * statements (`report_type` 1; other report types are left out).
 */
import { MdqError } from '../../domain/errors.js'
import type { Statement } from '../../domain/financials.js'
import type { ImportKind } from '../import-file.js'
import {
  convertedFile,
  openSource,
  shifted,
  VendorFileError,
  type ConvertedRow,
  type PresetFile,
} from './converted-file.js'
import { TUSHARE_STATEMENTS, tushareStatementOf } from './tushare-columns.js'

const TUSHARE_KINDS = 'bars (daily), ex-factors (adj_factor) and financials income, balance-sheet, cash-flow'

export async function openTushare(
  kind: ImportKind,
  path: string,
  statement: Statement | undefined,
): Promise<PresetFile> {
  if (kind === 'bars') return tushareBars(path)
  if (kind === 'ex-factors') return tushareAdjFactor(path)
  if (kind === 'financials' && statement && TUSHARE_STATEMENTS[statement]) return tushareStatement(path, statement)
  throw new MdqError(
    'BAD_IMPORT',
    `--format tushare reads ${TUSHARE_KINDS}, not ${kind}${statement ? ` ${statement}` : ''}`,
  )
}

async function tushareBars(path: string): Promise<PresetFile> {
  const src = await openSource(
    path,
    'a Tushare daily bars',
    ['ts_code', 'trade_date', 'open', 'high', 'low', 'close', 'vol'],
    ['amount', 'pre_close'],
  )
  const { col } = src
  // mdq's columns and where each comes from in Tushare's file.
  const from = [col.ts_code, col.trade_date, col.open, col.high, col.low, col.close, col.vol, col.amount, col.pre_close]
  async function* rows(): AsyncGenerator<ConvertedRow[]> {
    for await (const batch of src.rows())
      yield batch.map((r) => ({
        line: r.line,
        fields: [
          r.text(col.ts_code),
          r.text(col.trade_date),
          r.text(col.open),
          r.text(col.high),
          r.text(col.low),
          r.text(col.close),
          shifted(r, col.vol, 2, 'vol (lots of 100 shares)'),
          shifted(r, col.amount, 3, 'amount (thousands of CNY)'),
          col.pre_close === undefined ? '' : r.text(col.pre_close),
        ],
      }))
  }
  const header = ['symbol', 'time', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close']
  return {
    file: convertedFile(src.file, header, rows()),
    sourceColumn: (c) => (from[c - 1] ?? 0) + 1,
    note: () => undefined,
  }
}

/** adj_factor F(t) = the product of every event's ratio up to t: an event on each day F changes, f = F(t) / F(previous day). */
async function tushareAdjFactor(path: string): Promise<PresetFile> {
  const src = await openSource(path, 'a Tushare adj_factor', ['ts_code', 'trade_date', 'adj_factor'], [])
  const { col } = src
  async function* rows(): AsyncGenerator<ConvertedRow[]> {
    // Tushare lists the newest day first: each symbol's days are sorted before their ratios are taken.
    const bySymbol = new Map<string, { day: string; factor: number; line: number }[]>()
    for await (const batch of src.rows()) {
      for (const r of batch) {
        const text = r.text(col.adj_factor)
        const factor = Number(text)
        if (text === '' || !(factor > 0) || !Number.isFinite(factor))
          r.fail(col.adj_factor, `adj_factor '${text.slice(0, 40)}' is not a positive number`)
        const symbol = r.text(col.ts_code)
        let days = bySymbol.get(symbol)
        if (!days) bySymbol.set(symbol, (days = []))
        days.push({ day: r.text(col.trade_date).replaceAll('-', ''), factor, line: r.line })
      }
    }
    const out: ConvertedRow[] = []
    for (const [symbol, days] of bySymbol) {
      days.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
      for (let i = 1; i < days.length; i++) {
        if (days[i].factor === days[i - 1].factor) continue
        const f = Number((days[i].factor / days[i - 1].factor).toPrecision(12))
        out.push({ line: days[i].line, fields: [symbol, days[i].day, String(f)] })
      }
    }
    yield out
  }
  const from = [col.ts_code, col.trade_date, col.adj_factor]
  return {
    file: convertedFile(src.file, ['symbol', 'ex_date', 'ex_factor'], rows()),
    sourceColumn: (c) => (from[c - 1] ?? 0) + 1,
    note: () => undefined,
  }
}

async function tushareStatement(path: string, statement: Statement): Promise<PresetFile> {
  const spec = TUSHARE_STATEMENTS[statement]!
  const names = Object.keys(spec.fields)
  const src = await openSource(
    path,
    `a Tushare ${spec.api}`,
    ['ts_code', 'ann_date', 'end_date'],
    ['report_type', 'update_flag'],
  )
  const header = src.file.header
  const present = names.filter((n) => header.includes(spec.fields[n]))
  if (present.length === 0) {
    await src.file.close()
    const other = tushareStatementOf(header, statement)
    throw new VendorFileError(
      path,
      1,
      1,
      `not a Tushare ${spec.api} file: none of its columns ${Object.values(spec.fields).join(', ')}` +
        (other ? ` (this looks like a Tushare ${other} file)` : ''),
    )
  }
  const { col } = src
  let otherReports = 0
  async function* rows(): AsyncGenerator<ConvertedRow[]> {
    // A corrected row (update_flag 1) is written after the original of the same announcement, so it wins.
    const kept: { flag: string; row: ConvertedRow }[] = []
    for await (const batch of src.rows()) {
      for (const r of batch) {
        if (col.report_type !== undefined && r.text(col.report_type) !== '1') {
          otherReports++
          continue
        }
        kept.push({
          flag: col.update_flag === undefined ? '' : r.text(col.update_flag),
          row: {
            line: r.line,
            fields: [
              r.text(col.ts_code),
              r.text(col.end_date),
              r.text(col.ann_date),
              ...present.map((n) => r.text(header.indexOf(spec.fields[n]))),
            ],
          },
        })
      }
    }
    kept.sort((a, b) => (a.flag < b.flag ? -1 : a.flag > b.flag ? 1 : 0))
    yield kept.map((k) => k.row)
  }
  const from = [col.ts_code, col.end_date, col.ann_date, ...present.map((n) => header.indexOf(spec.fields[n]))]
  return {
    file: convertedFile(src.file, ['symbol', 'period_end', 'announce_date', ...present], rows()),
    sourceColumn: (c) => (from[c - 1] ?? 0) + 1,
    note: () =>
      otherReports
        ? `${otherReports} row${otherReports > 1 ? 's' : ''} of report types other than 1 (consolidated) left out`
        : undefined,
  }
}
