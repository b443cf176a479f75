/** @module Other tools' names for mdq's import columns, with what to do about each: the hints of a header that does not fit, and the renames of a format preset. */

/** A data source whose files use names of their own (a format preset renames by its entries). */
export type AliasSource = 'Tushare' | 'Baostock'

export interface ColumnAlias {
  /** The name as the tool writes it, in the form `normalName` gives. */
  readonly name: string
  /** mdq's column it stands for, or null for a column mdq does not import (derived, or of no use). */
  readonly column: string | null
  /** Whose name it is; absent for a name many tools use. */
  readonly source?: AliasSource
  /** What else to know when renaming or dropping it (units, forms). */
  readonly note?: string
}

/** Known spellings, most of them from Tushare's daily and Baostock's query_history_k_data_plus files. */
export const COLUMN_ALIASES: readonly ColumnAlias[] = [
  { name: 'ts_code', column: 'symbol', source: 'Tushare' },
  { name: 'trade_date', column: 'time', source: 'Tushare' },
  { name: 'pre_close', column: 'prev_close', source: 'Tushare' },
  {
    name: 'vol',
    column: 'volume',
    source: 'Tushare',
    note: 'its vol is in lots of 100 shares and its amount in thousands of yuan',
  },
  { name: 'change', column: null, source: 'Tushare', note: 'close - pre_close, which mdq derives' },
  {
    name: 'adj_factor',
    column: null,
    source: 'Tushare',
    note: 'a cumulative factor: mdq takes per-event ratios, adj_factor(d) / adj_factor(d-1) on each day it changes, as ex_factor',
  },
  { name: 'code', column: 'symbol', source: 'Baostock', note: 'write sh.600000 as 600000.SH' },
  { name: 'date', column: 'time', source: 'Baostock' },
  { name: 'preclose', column: 'prev_close', source: 'Baostock' },
  {
    name: 'pct_chg',
    column: null,
    note: 'a change in percent, which mdq derives',
  },
  { name: 'date', column: 'ex_date' },
  { name: 'datetime', column: 'time' },
  { name: 'timestamp', column: 'time' },
  { name: 'ticker', column: 'symbol' },
  { name: 'factor', column: 'ex_factor' },
]

/** A header name in one form: trimmed, camelCase split, lower case, runs of spaces, '.' and '-' as '_'. */
export function normalName(name: string): string {
  return name
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[\s.-]+/g, '_')
}

/** What to do about one header name: rename it to `column`, drop it, or nothing known but that it is unknown. */
export interface ColumnHint {
  readonly action: 'rename' | 'drop' | 'unknown'
  /** The column a rename gives (then not reported missing as well). */
  readonly column?: string
  /** `'ts_code' to 'symbol' (Tushare)`: what follows the action's word in the message. */
  readonly text: string
}

/**
 * What to tell about a header name the layout does not know: a rename to one of `columns` (its case
 * or separators differ, or it is another tool's name for it), dropping a column mdq does not import,
 * or that it is unknown. `present` are the names the header has.
 */
export function hintFor(name: string, columns: readonly string[], present: readonly string[]): ColumnHint {
  const normal = normalName(name)
  if (columns.includes(normal) && !present.includes(normal))
    return { action: 'rename', column: normal, text: `'${name}' to '${normal}'` }
  const known = COLUMN_ALIASES.filter((a) => a.name === normal && (a.column === null || columns.includes(a.column)))
  const alias = known.find((a) => a.column !== null && !present.includes(a.column)) ?? known[0]
  if (!alias) return { action: 'unknown', text: `'${name}'` }
  const why = [alias.source, alias.note].filter(Boolean).join('; ')
  if (alias.column === null) return { action: 'drop', text: `'${name}' (${why})` }
  if (present.includes(alias.column))
    return {
      action: 'unknown',
      text: `'${name}' (${alias.source ? `${alias.source}'s` : 'another'} name for '${alias.column}', which the header has too)`,
    }
  return { action: 'rename', column: alias.column, text: `'${name}' to '${alias.column}'${why ? ` (${why})` : ''}` }
}
