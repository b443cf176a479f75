/** @module Financial statements (TickFlow's financials models): the five statements, their fields, and which version of a period is served. */

/** The statements, as their routes (`/v1/financials/<statement>`) and `mdq import financials <statement>` name them. */
export const STATEMENTS = ['income', 'balance-sheet', 'cash-flow', 'metrics', 'shares'] as const
export type Statement = (typeof STATEMENTS)[number]

export function isStatement(value: string): value is Statement {
  return (STATEMENTS as readonly string[]).includes(value)
}

/**
 * The value fields of each statement: the SDK models' fields (`IncomeRecord`, `BalanceSheetRecord`,
 * `CashFlowRecord`, `MetricsRecord`, `SharesRecord`) besides `period_end` and `announce_date`, in
 * the models' order. Every one is a number or null.
 */
export const STATEMENT_FIELDS = {
  income: [
    'admin_expense',
    'basic_eps',
    'diluted_eps',
    'financial_expense',
    'income_tax',
    'net_income',
    'net_income_attributable',
    'non_operating_expense',
    'non_operating_income',
    'operating_cost',
    'operating_profit',
    'rd_expense',
    'revenue',
    'selling_expense',
    'total_profit',
  ],
  'balance-sheet': [
    'accounts_payable',
    'accounts_receivable',
    'cash_and_equivalents',
    'equity_attributable',
    'fixed_assets',
    'goodwill',
    'intangible_assets',
    'inventory',
    'long_term_borrowing',
    'minority_interest',
    'retained_earnings',
    'short_term_borrowing',
    'total_assets',
    'total_current_assets',
    'total_current_liabilities',
    'total_equity',
    'total_liabilities',
    'total_non_current_assets',
    'total_non_current_liabilities',
  ],
  'cash-flow': [
    'capex',
    'net_cash_change',
    'net_financing_cash_flow',
    'net_investing_cash_flow',
    'net_operating_cash_flow',
  ],
  metrics: [
    'bps',
    'debt_to_asset_ratio',
    'eps_basic',
    'eps_diluted',
    'gross_margin',
    'inventory_turnover',
    'net_income_yoy',
    'net_margin',
    'ocfps',
    'operating_cash_to_revenue',
    'revenue_yoy',
    'roa',
    'roe',
    'roe_diluted',
  ],
  shares: ['float_shares', 'total_shares'],
} as const satisfies Record<Statement, readonly string[]>

/**
 * One version of one period of a statement: `periodEnd` and `announceDate` as `YYYY-MM-DD` (so they
 * order as text); `values` by field name, a field absent or null when the source had no value.
 * A restatement is another version: the same period, a later announce date.
 */
export interface StatementRecord {
  readonly periodEnd: string
  readonly announceDate: string
  readonly values: Readonly<Record<string, number | null>>
}

/** What a statement query asks: period_end within [fromPeriod, toPeriod] (inclusive, absent = open). */
export interface PeriodRange {
  readonly fromPeriod?: string
  readonly toPeriod?: string
}

/**
 * The served records of one symbol from all its stored versions (ascending by period, then
 * announce date): per period the latest version announced on or before `knownOn` (a `YYYY-MM-DD`;
 * absent: the latest of all), periods with none left out; `latest`: only the last period.
 */
export function servedVersions(
  versions: readonly StatementRecord[],
  knownOn?: string,
  latest = false,
): StatementRecord[] {
  const out: StatementRecord[] = []
  for (const v of versions) {
    if (knownOn !== undefined && v.announceDate > knownOn) continue
    const last = out.at(-1)
    if (last && last.periodEnd === v.periodEnd) out[out.length - 1] = v
    else out.push(v)
  }
  return latest ? out.slice(-1) : out
}

/**
 * The shares in force on `day` (`YYYY-MM-DD`) by a shares history: the newest period on or before
 * that day among the versions announced on or before it; undefined when none is.
 */
export function sharesOn(
  history: readonly StatementRecord[],
  day: string,
): { totalShares: number | null; floatShares: number | null } | undefined {
  const known = servedVersions(
    history.filter((v) => v.periodEnd <= day),
    day,
  ).at(-1)
  if (!known) return undefined
  return { totalShares: known.values.total_shares ?? null, floatShares: known.values.float_shares ?? null }
}

/**
 * A record's values as stored: a JSON object of the non-null fields. JSON's shortest round-trip form
 * of a double reads back as the same double, and a statement's fields can grow without a migration.
 */
export function valuesJson(values: StatementRecord['values']): string {
  const kept: Record<string, number> = {}
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined) kept[k] = v
  return JSON.stringify(kept)
}

export function valuesOfJson(text: string): Record<string, number> {
  return JSON.parse(text) as Record<string, number>
}
