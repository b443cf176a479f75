/**
 * @module A vendor's file seen as an mdq CSV: its rows converted to mdq's columns and units, kept
 * with the vendor file's path and line numbers, so the ordinary importers check and store them and
 * every error still points into the file the user has.
 */
import { fieldText, openCsv, type CsvFile } from '../csv-reader.js'
import { ImportError } from '../import-error.js'
import { batchOfRows } from '../row-batch.js'

/** An error found in the vendor's file itself: its line and column are already the vendor file's. */
export class VendorFileError extends ImportError {}

/** A converted row: mdq's fields, and the line of the vendor file it came from. */
export interface ConvertedRow {
  readonly line: number
  readonly fields: readonly string[]
}

/** What a format makes of a vendor file: mdq's CSV and how to point back into the vendor's. */
export interface PresetFile {
  readonly file: CsvFile
  /** The vendor file's column (1-based) of the converted file's column (1-based), for errors. */
  sourceColumn(column: number): number
  /** What was left out of the vendor file and why (e.g. "2 suspended days left out"), after reading. */
  note(): string | undefined
  /** Bar options the vendor file implies (LEAN's file names give the period and the ticker). */
  readonly options?: { readonly period: '1m' | '1d'; readonly symbol: string }
}

/** A CsvFile over converted rows, arriving in batches. */
export function convertedFile(
  source: Pick<CsvFile, 'path' | 'sizeBytes' | 'bytesRead' | 'close'>,
  header: readonly string[],
  rows: AsyncIterable<readonly ConvertedRow[]>,
): CsvFile {
  async function* batches() {
    for await (const list of rows)
      if (list.length)
        yield batchOfRows(
          list.map((r) => r.fields),
          list.map((r) => r.line),
        )
  }
  return {
    path: source.path,
    header,
    sizeBytes: source.sizeBytes,
    batches: batches(),
    bytesRead: source.bytesRead,
    close: source.close,
  }
}

/** One row of a vendor file being read: its line and its fields' text by column. */
export interface SourceRow {
  line: number
  text(col: number): string
  /** Throws an ImportError at this row's field `col` (0-based). */
  fail(col: number, reason: string): never
}

/** A vendor CSV with a header row, its named columns located. */
export interface SourceFile<R extends string, O extends string> {
  readonly file: CsvFile
  readonly col: Record<R, number> & Record<O, number | undefined>
  /** Rows batch by batch; the view is reused from row to row. */
  rows(): AsyncGenerator<SourceRow[]>
}

/**
 * Opens a vendor CSV that must hold the `required` columns: a file of another format or kind is an
 * error naming the columns this one expects.
 */
export async function openSource<R extends string, O extends string>(
  path: string,
  what: string,
  required: readonly R[],
  optional: readonly O[],
): Promise<SourceFile<R, O>> {
  const file = await openCsv(path)
  const missing = required.filter((c) => !file.header.includes(c))
  if (missing.length) {
    await file.close()
    throw new VendorFileError(
      path,
      1,
      1,
      `not ${what} file: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (expected ${required.join(', ')}` +
        (optional.length ? `, optionally ${optional.join(', ')}` : '') +
        `; header: ${file.header.join(',')})`,
    )
  }
  const col: Record<string, number | undefined> = {}
  for (const c of [...required, ...optional]) col[c] = file.header.includes(c) ? file.header.indexOf(c) : undefined
  const width = file.header.length
  async function* rows(): AsyncGenerator<SourceRow[]> {
    for await (const batch of file.batches) {
      const out: SourceRow[] = []
      for (let i = 0; i < batch.rows; i++) {
        const base = i * width * 2
        const line = batch.lines[i]
        out.push({
          line,
          text: (c) => fieldText(batch.bytes, batch.bounds[base + 2 * c], batch.bounds[base + 2 * c + 1]),
          fail: (c, reason) => {
            throw new VendorFileError(path, line, c + 1, reason)
          },
        })
      }
      yield out
    }
  }
  return { file, col: col as Record<R, number> & Record<O, number | undefined>, rows }
}

const PLAIN_DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/

/**
 * The decimal text times 10^k, as text and exactly (lots to shares, thousands to units, deci-cents
 * to dollars without float noise): shiftDecimal('12345.67', 2) = '1234567', shiftDecimal('6448000', -4)
 * = '644.8'. '' stays '' (a missing value); undefined when the text is not a plain decimal.
 */
export function shiftDecimal(text: string, k: number): string | undefined {
  if (text === '') return ''
  const m = PLAIN_DECIMAL.exec(text)
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined
  let digits = m[2] + (m[3] ?? '')
  let point = m[2].length + k
  if (point > digits.length) digits = digits.padEnd(point, '0')
  if (point < 0) {
    digits = '0'.repeat(-point) + digits
    point = 0
  }
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0'
  const fraction = digits.slice(point).replace(/0+$/, '')
  return m[1] + whole + (fraction ? '.' + fraction : '')
}

/** shiftDecimal of a row's field, or an error naming the field and its unit. */
export function shifted(row: SourceRow, col: number | undefined, k: number, name: string): string {
  if (col === undefined) return ''
  const text = row.text(col)
  const out = shiftDecimal(text, k)
  if (out === undefined) row.fail(col, `${name} '${text.slice(0, 40)}' is not a plain decimal number`)
  return out
}
