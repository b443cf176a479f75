/** @module Statements as TickFlow's JSON: `{"data": {"<symbol>": [records]}}`, every field of the statement present. */
import { STATEMENT_FIELDS, type Statement, type StatementRecord } from '../domain/financials.js'
import { formatFloat } from './wire.js'

/**
 * Each record: period_end, announce_date, then every field of the statement (the SDK model's), null
 * where there is no value; values always with a fraction part (the SDK types them float).
 */
export function statementsJson(statement: Statement, data: ReadonlyMap<string, readonly StatementRecord[]>): string {
  const fields: readonly string[] = STATEMENT_FIELDS[statement]
  const record = (r: StatementRecord) => {
    const parts = [`"period_end":${JSON.stringify(r.periodEnd)}`, `"announce_date":${JSON.stringify(r.announceDate)}`]
    for (const f of fields) {
      const v = r.values[f]
      parts.push(`"${f}":${v === null || v === undefined ? 'null' : formatFloat(v)}`)
    }
    return `{${parts.join(',')}}`
  }
  const members = [...data].map(([symbol, records]) => `${JSON.stringify(symbol)}:[${records.map(record).join(',')}]`)
  return `{"data":{${members.join(',')}}}`
}
