/**
 * @module `mdq import financials <statement> FILE`: `symbol,period_end,announce_date` and the
 * statement's fields (domain/financials.ts); every version kept, a version of an existing
 * (symbol, period_end, announce_date) replaced.
 */
import { STATEMENT_FIELDS, STATEMENTS, type Statement, type StatementRecord } from '../domain/financials.js'
import { civilFromDays, formatCivil } from '../domain/time-zone.js'
import type { ImportCounts, ImportTarget } from './import-target.js'
import type { CsvFile } from './csv-reader.js'
import { FieldReader } from './fields.js'
import { ImportError } from './import-error.js'

const KEYS = ['symbol', 'period_end', 'announce_date'] as const

export interface FinancialsImportOptions {
  readonly statement: Statement
  /** The file's versions replace every stored version of each of its symbols in the file's period range of that symbol. */
  readonly replace?: boolean
}

/** The column of each key and field of the header; unknown and missing columns are one error naming them all. */
function statementColumns(file: CsvFile, statement: Statement) {
  const fields: readonly string[] = STATEMENT_FIELDS[statement]
  const header = file.header
  const problems: string[] = []
  const missing = KEYS.filter((k) => !header.includes(k))
  if (missing.length) problems.push(`missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`)
  const unknown = header.filter((h) => !(KEYS as readonly string[]).includes(h) && !fields.includes(h))
  if (unknown.length) {
    // A file of another statement is the likely mistake: say which one it looks like.
    const other = STATEMENTS.find(
      (s) => s !== statement && unknown.every((u) => (STATEMENT_FIELDS[s] as readonly string[]).includes(u)),
    )
    problems.push(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} for ${statement}` +
        (other ? ` (they are ${other} fields: is this a ${other} file?)` : ` (its fields: ${fields.join(', ')})`),
    )
  }
  const present = fields.filter((f) => header.includes(f))
  if (!missing.length && !unknown.length && present.length === 0)
    problems.push(`no ${statement} field among the columns (its fields: ${fields.join(', ')})`)
  if (problems.length) throw new ImportError(file.path, 1, 1, problems.join('; '))
  const duplicated = header.find((h, i) => header.indexOf(h) !== i)
  if (duplicated)
    throw new ImportError(
      file.path,
      1,
      header.indexOf(duplicated, header.indexOf(duplicated) + 1) + 1,
      `column ${duplicated} appears twice`,
    )
  return {
    symbol: header.indexOf('symbol'),
    periodEnd: header.indexOf('period_end'),
    announceDate: header.indexOf('announce_date'),
    fields: present.map((name) => ({ name, col: header.indexOf(name) })),
  }
}

export async function importFinancials(
  file: CsvFile,
  { store, writer }: ImportTarget,
  { statement, replace = false }: FinancialsImportOptions,
): Promise<ImportCounts> {
  const cols = statementColumns(file, statement)
  const r = new FieldReader(file)
  const date = (col: number, name: string) => formatCivil(civilFromDays(r.date(col, name)))
  const bySymbol = new Map<string, Map<string, StatementRecord>>()
  const known = new Map<string, boolean>()
  let rows = 0
  for await (const batch of file.batches) {
    for (let i = 0; i < batch.rows; i++) {
      r.at(batch, i)
      rows++
      const { symbol } = r.symbol(cols.symbol)
      if (!known.has(symbol)) known.set(symbol, (await store.readInstruments([symbol])).length > 0)
      if (!known.get(symbol)) r.fail(cols.symbol, `unknown symbol ${symbol}: import its instrument or bars first`)
      const periodEnd = date(cols.periodEnd, 'period_end')
      const announceDate = date(cols.announceDate, 'announce_date')
      // Shares may be announced before they take effect; a statement never is.
      if (statement !== 'shares' && announceDate < periodEnd)
        r.fail(
          cols.announceDate,
          `announce_date ${announceDate} is before period_end ${periodEnd}: a statement is announced after its period ends (are the two columns swapped?)`,
        )
      const values: Record<string, number | null> = {}
      for (const { name, col } of cols.fields) {
        const x = r.number(col, name, NaN)
        // Stored as a double: a value with more digits than one keeps would be stored as another number.
        if (!Number.isNaN(x) && decimalKey(r.text(col)) !== decimalKey(String(x)))
          r.fail(
            col!,
            `${name} ${r.text(col)} has more digits than mdq keeps exactly (it would be ${x}); round it to 15 significant digits`,
          )
        values[name] = Number.isNaN(x) ? null : x
      }
      let versions = bySymbol.get(symbol)
      if (!versions) bySymbol.set(symbol, (versions = new Map()))
      versions.set(`${periodEnd} ${announceDate}`, { periodEnd, announceDate, values })
    }
  }
  for (const [symbol, versions] of bySymbol) {
    const records = [...versions.values()]
    if (replace) {
      const periods = records.map((v) => v.periodEnd).sort()
      await writer.deleteFinancials({ statement, symbol, fromPeriod: periods[0], toPeriod: periods.at(-1) })
    }
    await writer.putFinancials({ statement, symbol, records })
  }
  return { rows, skipped: 0, symbols: bySymbol.size, events: 0 }
}

/** A decimal's value as its significant digits and exponent (`-12.30` and `-1.23e1` alike), to compare two spellings of a number. */
export function decimalKey(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim())
  if (!m) return text
  const fraction = m[3] ?? ''
  let digits = (m[2] + fraction).replace(/^0+/, '')
  if (digits === '') return '0'
  let exponent = Number(m[4] ?? 0) - fraction.length
  const trailing = digits.length - digits.replace(/0+$/, '').length
  digits = digits.slice(0, digits.length - trailing)
  exponent += trailing
  return `${m[1] === '-' ? '-' : ''}${digits}e${exponent}`
}
