/**
 * @module `--format baostock`: Baostock's `query_history_k_data_plus` daily bars, unadjusted
 * (adjustflag 3): code `sh.600000` -> 600000.SH, volume in shares and amount in CNY as mdq stores
 * them, `preclose` (the exchange's reference price) as prev_close; suspended days (tradestatus 0)
 * are left out.
 */
import { MdqError } from '../../domain/errors.js'
import type { ImportKind } from '../import-file.js'
import { convertedFile, openSource, type ConvertedRow, type PresetFile } from './converted-file.js'

const CODE = /^(sh|sz|bj)\.(\d{6})$/i
const ADJUST = { '1': 'backward-adjusted', '2': 'forward-adjusted' } as Record<string, string>

export async function openBaostock(kind: ImportKind, path: string, period: '1m' | '1d'): Promise<PresetFile> {
  if (kind !== 'bars') throw new MdqError('BAD_IMPORT', `--format baostock reads bars (daily), not ${kind}`)
  if (period !== '1d')
    throw new MdqError(
      'BAD_IMPORT',
      '--format baostock reads daily bars: Baostock has no 1-minute bars (its shortest are 5 minutes)',
    )
  const src = await openSource(
    path,
    'a Baostock daily k-data',
    ['date', 'code', 'open', 'high', 'low', 'close', 'volume'],
    ['amount', 'preclose', 'tradestatus', 'adjustflag', 'time'],
  )
  const { col } = src
  let suspended = 0
  async function* rows(): AsyncGenerator<ConvertedRow[]> {
    for await (const batch of src.rows()) {
      const out: ConvertedRow[] = []
      for (const r of batch) {
        if (col.adjustflag !== undefined) {
          const flag = r.text(col.adjustflag)
          if (flag !== '3')
            r.fail(
              col.adjustflag,
              `adjustflag ${flag} (${ADJUST[flag] ?? 'unknown'}): mdq stores raw bars and adjusts them itself; query Baostock with adjustflag="3"`,
            )
        }
        if (col.time !== undefined && r.text(col.time).length > 10)
          r.fail(col.time, 'a Baostock minute file (5 minutes or longer): mdq imports 1-minute and daily bars')
        if (col.tradestatus !== undefined && r.text(col.tradestatus) === '0') {
          suspended++
          continue
        }
        const code = r.text(col.code)
        const m =
          CODE.exec(code) ?? r.fail(col.code, `code '${code.slice(0, 40)}' is not a Baostock code such as sh.600000`)
        out.push({
          line: r.line,
          fields: [
            `${m[2]}.${m[1].toUpperCase()}`,
            r.text(col.date),
            r.text(col.open),
            r.text(col.high),
            r.text(col.low),
            r.text(col.close),
            r.text(col.volume),
            col.amount === undefined ? '' : r.text(col.amount),
            col.preclose === undefined ? '' : r.text(col.preclose),
          ],
        })
      }
      yield out
    }
  }
  const from = [col.code, col.date, col.open, col.high, col.low, col.close, col.volume, col.amount, col.preclose]
  return {
    file: convertedFile(
      src.file,
      ['symbol', 'time', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'],
      rows(),
    ),
    sourceColumn: (c) => (from[c - 1] ?? 0) + 1,
    note: () =>
      suspended ? `${suspended} suspended day${suspended > 1 ? 's' : ''} (tradestatus 0) left out` : undefined,
  }
}
