/** @module Reading statement versions from ClickHouse: the newest committed row per version key, tombstones applied. */
import { valuesOfJson, type PeriodRange, type Statement, type StatementRecord } from '../../domain/financials.js'
import type { UniverseSpell } from '../../domain/universe.js'
import { sql, type Connection } from './connection.js'
import type { Snapshot } from './snapshot.js'

/** Bounds below and above every `YYYY-MM-DD`, for open ranges. */
export const FIRST_PERIOD = '0000-00-00'
export const LAST_PERIOD = '9999-99-99'

/** What a statement read needs beyond the snapshot's filter: the tombstones of the visible imports, held in memory (metadata.ts). */
export class FinancialReads {
  constructor(private readonly meta: Connection) {}

  /** Every committed, not deleted version, ascending by period_end and announce_date per symbol. */
  async read(
    s: Snapshot,
    statement: Statement,
    symbols: readonly string[],
    range: PeriodRange,
  ): Promise<Map<string, StatementRecord[]>> {
    const out = new Map<string, StatementRecord[]>()
    const unique = [...new Set(symbols)]
    if (unique.length === 0) return out
    // A tombstone hides the rows of older imports, and of earlier operations of its own (a --replace).
    const hidden = unique
      .flatMap((symbol) => s.meta.financialTombstones.get(`${statement}|${symbol}`) ?? [])
      .map(
        (t) =>
          ` AND NOT (symbol = ${sql.str(t.symbol)} AND period_end >= ${sql.str(t.from)} AND period_end <= ${sql.str(t.to)} AND (import_id, seq) < (${sql.int(t.importId)}, ${sql.int(t.seq)}))`,
      )
      .join('')
    const rows = await this.meta.rows(
      `SELECT symbol, period_end, announce_date, argMax(data, (import_id, seq)) FROM financials
       WHERE statement = ${sql.str(statement)} AND symbol IN (${sql.list(unique.map(sql.str))})
         AND period_end >= ${sql.str(range.fromPeriod ?? FIRST_PERIOD)} AND period_end <= ${sql.str(range.toPeriod ?? LAST_PERIOD)}
         AND ${s.visibleSql}${hidden}
       GROUP BY symbol, period_end, announce_date ORDER BY symbol, period_end, announce_date`,
    )
    for (const [symbol, periodEnd, announceDate, data] of rows) {
      const list = out.get(symbol!) ?? []
      list.push({ periodEnd: periodEnd!, announceDate: announceDate!, values: valuesOfJson(data!) })
      out.set(symbol!, list)
    }
    return out
  }
}

/** The spells of a universe version from its symbols and its dates row ('' = open). */
export function spellsOf(
  symbols: readonly string[],
  dates: { inDates: string[]; outDates: string[] },
): UniverseSpell[] {
  return symbols.map((symbol, i) => ({
    symbol,
    inDate: dates.inDates[i] || null,
    outDate: dates.outDates[i] || null,
  }))
}
