/** @module Statement versions in the SQLite store: one row per (statement, symbol, period_end, announce_date), values as JSON. */
import {
  valuesJson,
  valuesOfJson,
  type PeriodRange,
  type Statement,
  type StatementRecord,
} from '../../domain/financials.js'
import type { StatementBatch, StatementRange } from '../market-store.js'
import type { Db } from './sqlite-db.js'

/** Bounds below and above every `YYYY-MM-DD`, for open ranges. */
const FIRST = '0000-00-00'
const LAST = '9999-99-99'

interface Row {
  symbol: string
  period_end: string
  announce_date: string
  data: string
}

/** Prepared statements of one connection. */
export function financialStatements(db: Db) {
  return {
    read: db.prepare<[Statement, string, string, string], Row>(
      `SELECT symbol, period_end, announce_date, data FROM financials
       WHERE statement = ? AND symbol = ? AND period_end >= ? AND period_end <= ? ORDER BY period_end, announce_date`,
    ),
    put: db.prepare<[Statement, string, string, string, string]>(
      'INSERT OR REPLACE INTO financials (statement, symbol, period_end, announce_date, data) VALUES (?, ?, ?, ?, ?)',
    ),
    delete: db.prepare<[Statement, string, string, string]>(
      'DELETE FROM financials WHERE statement = ? AND symbol = ? AND period_end >= ? AND period_end <= ?',
    ),
  }
}
type FinancialStatements = ReturnType<typeof financialStatements>

export function readFinancialsWith(
  st: FinancialStatements,
  statement: Statement,
  symbols: readonly string[],
  range: PeriodRange,
): Map<string, StatementRecord[]> {
  const out = new Map<string, StatementRecord[]>()
  for (const symbol of new Set(symbols)) {
    const rows = st.read.all(statement, symbol, range.fromPeriod ?? FIRST, range.toPeriod ?? LAST)
    if (rows.length)
      out.set(
        symbol,
        rows.map((r) => ({
          periodEnd: r.period_end,
          announceDate: r.announce_date,
          values: valuesOfJson(r.data),
        })),
      )
  }
  return out
}

export function putFinancialsWith(st: FinancialStatements, b: StatementBatch): void {
  for (const r of b.records) st.put.run(b.statement, b.symbol, r.periodEnd, r.announceDate, valuesJson(r.values))
}

export function deleteFinancialsWith(st: FinancialStatements, r: StatementRange): void {
  st.delete.run(r.statement, r.symbol, r.fromPeriod ?? FIRST, r.toPeriod ?? LAST)
}
