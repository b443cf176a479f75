/**
 * @module Tushare Pro's column names for mdq's: daily bars (`daily`, `pro_bar`), `adj_factor`, and
 * the consolidated statements (`income`, `balancesheet`, `cashflow`), in CNY as mdq stores them.
 */
import type { Statement } from '../../domain/financials.js'

/** The statements Tushare's files give, each field as mdq names it and as Tushare does. */
export const TUSHARE_STATEMENTS: Partial<Record<Statement, { api: string; fields: Readonly<Record<string, string>> }>> =
  {
    income: {
      api: 'income',
      fields: {
        admin_expense: 'admin_exp',
        basic_eps: 'basic_eps',
        diluted_eps: 'diluted_eps',
        financial_expense: 'fin_exp',
        income_tax: 'income_tax',
        net_income: 'n_income',
        net_income_attributable: 'n_income_attr_p',
        non_operating_expense: 'non_oper_exp',
        non_operating_income: 'non_oper_income',
        operating_cost: 'oper_cost',
        operating_profit: 'operate_profit',
        rd_expense: 'rd_exp',
        revenue: 'total_revenue',
        selling_expense: 'sell_exp',
        total_profit: 'total_profit',
      },
    },
    'balance-sheet': {
      api: 'balancesheet',
      fields: {
        accounts_payable: 'accounts_pay',
        accounts_receivable: 'accounts_receiv',
        cash_and_equivalents: 'money_cap',
        equity_attributable: 'total_hldr_eqy_exc_min_int',
        fixed_assets: 'fix_assets',
        goodwill: 'goodwill',
        intangible_assets: 'intan_assets',
        inventory: 'inventories',
        long_term_borrowing: 'lt_borr',
        minority_interest: 'minority_int',
        retained_earnings: 'undistr_porfit',
        short_term_borrowing: 'st_borr',
        total_assets: 'total_assets',
        total_current_assets: 'total_cur_assets',
        total_current_liabilities: 'total_cur_liab',
        total_equity: 'total_hldr_eqy_inc_min_int',
        total_liabilities: 'total_liab',
        total_non_current_assets: 'total_nca',
        total_non_current_liabilities: 'total_ncl',
      },
    },
    'cash-flow': {
      api: 'cashflow',
      fields: {
        capex: 'c_pay_acq_const_fiolta',
        net_cash_change: 'n_incr_cash_cash_equ',
        net_financing_cash_flow: 'n_cash_flows_fnc_act',
        net_investing_cash_flow: 'n_cashflow_inv_act',
        net_operating_cash_flow: 'n_cashflow_act',
      },
    },
  }

/** Columns that only one statement's file has: a file with one of them and none of the asked statement's is that statement's. */
export function tushareStatementOf(header: readonly string[], not: Statement): string | undefined {
  for (const [statement, spec] of Object.entries(TUSHARE_STATEMENTS)) {
    if (statement === not || !spec) continue
    const mine = new Set(Object.values(TUSHARE_STATEMENTS[not]?.fields ?? {}))
    if (Object.values(spec.fields).some((c) => !mine.has(c) && header.includes(c))) return `${spec.api} (${statement})`
  }
  return undefined
}
