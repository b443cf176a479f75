/** @module `mdq delete bars|ex-factors|financials|instruments`: corrections, each all or nothing, with a one-line summary. */
import { Argument, Option, type Command } from 'commander'
import { STATEMENTS, type Statement } from '../domain/financials.js'
import type { StoredPeriod } from '../domain/period.js'
import type { MarketStore } from '../store/market-store.js'
import {
  deleteBars,
  deleteExFactors,
  deleteFinancials,
  deleteInstruments,
  periodRangeOf,
  rangeOf,
  type RangeArgs,
} from '../ingest/corrections.js'
import { withStores } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

const between = (o: RangeArgs) =>
  o.from === undefined && o.to === undefined ? 'all' : `${o.from ?? 'the first'} .. ${o.to ?? 'the last'}`

export function registerCorrections(program: Command): void {
  const del = program
    .command('delete')
    .description('correct the store: delete bars, ex-factors, statements or instruments (each all or nothing)')
  const market = <T>(fn: (m: MarketStore) => Promise<T>) =>
    withStores({ ...storeFlags(program), create: false }, (s) => fn(s.market))
  const ranged = (cmd: Command) =>
    cmd
      .requiredOption('--symbol <symbol>', 'the symbol, e.g. 600000.SH')
      .option(
        '--from <time>',
        'first time deleted (inclusive): epoch ms, YYYY-MM-DD or YYYY-MM-DD HH:MM local to the exchange; default: the first',
      )
      .option('--to <time>', 'last time deleted (inclusive; a bare date includes the whole day); default: the last')

  ranged(del.command('bars').description('delete the stored bars of one symbol and period in a time range'))
    .addOption(
      new Option('--period <period>', 'the stored period, as mdq import bars takes it')
        .choices(['1m', '1d'])
        .default('1d'),
    )
    .action(async (o: RangeArgs & { period: StoredPeriod }) => {
      const range = { ...rangeOf(o), period: o.period }
      const n = await market((m) => deleteBars(m, range))
      process.stdout.write(`deleted ${n.toLocaleString('en-US')} ${o.period} bars of ${range.symbol} (${between(o)})\n`)
    })

  ranged(del.command('ex-factors').description('delete the ex-factor events of one symbol in a time range')).action(
    async (o: RangeArgs) => {
      const range = rangeOf(o)
      const n = await market((m) => deleteExFactors(m, range))
      process.stdout.write(`deleted ${n.toLocaleString('en-US')} ex-factor events of ${range.symbol} (${between(o)})\n`)
    },
  )

  del
    .command('financials')
    .description("delete every version of one symbol's statement with a period_end in a range")
    .addArgument(new Argument('<statement>', 'the statement').choices(STATEMENTS))
    .requiredOption('--symbol <symbol>', 'the symbol, e.g. 600000.SH')
    .option('--from <date>', 'first period_end deleted (inclusive): YYYY-MM-DD; default: the first')
    .option('--to <date>', 'last period_end deleted (inclusive); default: the last')
    .action(async (statement: Statement, o: RangeArgs) => {
      const range = { ...periodRangeOf(o), statement }
      const n = await market((m) => deleteFinancials(m, range))
      process.stdout.write(
        `deleted ${n.toLocaleString('en-US')} ${statement} versions of ${range.symbol} (${between(o)})\n`,
      )
    })

  del
    .command('instruments')
    .description('delete instruments with all their bars, ex-factors and statements')
    .argument('<symbols...>', 'the symbols, e.g. 600000.SH AAPL.US')
    .action(async (symbols: string[]) => {
      const d = await market((m) => deleteInstruments(m, symbols))
      process.stdout.write(
        `deleted ${d.instruments} instruments with ${d.bars.toLocaleString('en-US')} bars, ${d.events.toLocaleString('en-US')} ex-factor events and ${d.statements.toLocaleString('en-US')} statement versions\n`,
      )
    })
}
