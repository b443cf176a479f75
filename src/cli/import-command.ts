/** @module `mdq import instruments|bars|ex-factors|actions|universes FILE.csv [options]`, `mdq import financials STATEMENT FILE.csv`. */
import { SingleBar } from 'cli-progress'
import { Argument, InvalidArgumentError, Option, type Command } from 'commander'
import { formatSummary, importFile, IMPORT_KINDS, type ImportKind, type ImportProgress } from '../ingest/import-file.js'
import { SECURITY_TYPES } from '../domain/instrument.js'
import { describeLayout, LAYOUTS } from '../ingest/columns.js'
import { isStatement, STATEMENTS, type Statement } from '../domain/financials.js'
import { withStores } from '../store/backends.js'
import { pauseAt } from './pause-at.js'
import { storeFlags } from './store-flags.js'
import { FORMATS, type Format } from '../ingest/presets/presets.js'

export function positiveNumber(value: string): number {
  const n = Number(value)
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a positive number')
  return n
}

/** A progress bar on a terminal only; pipes and CI logs get just the summary line. */
function terminalProgress(): ImportProgress | undefined {
  if (!process.stderr.isTTY) return undefined
  const bar = new SingleBar({
    format: 'importing [{bar}] {percentage}% | {value}/{total} MB',
    stream: process.stderr,
    hideCursor: true,
  })
  const mb = (b: number) => Math.round(b / 1e5) / 10
  return { start: (total) => bar.start(mb(total), 0), update: (read) => bar.update(mb(read)), stop: () => bar.stop() }
}

/** What `mdq import --help` adds to each kind's columns (from ingest/columns.ts). */
const NOTES: Record<ImportKind, string> = {
  instruments: `type: ${SECURITY_TYPES.join(', ')}; only symbol required`,
  bars: 'time: epoch ms, or local YYYY-MM-DD / YYYYMMDD [HH:MM[:SS]]; no symbol column: give --symbol',
  'ex-factors': 'ex_factor: the per-event ratio P/R; ex_date: YYYY-MM-DD or YYYYMMDD',
  actions: 'per share, at least one action column (10送3派1.6 = cash_dividend 0.16, bonus_ratio 0.3)',
  universes: 'a file replaces the members of each universe it lists; in_date/out_date date its members',
  financials: `mdq import financials STATEMENT FILE: symbol,period_end,announce_date and the statement's fields (${STATEMENTS.join(', ')})`,
}

/** What each --format reads, for the help. */
const VENDOR_FILES =
  "A vendor's own file, as it comes (units converted): --format tushare (bars, ex-factors from adj_factor, financials income, balance-sheet, cash-flow), baostock (daily bars), lean (bars and factor files, zipped or not)"

function columnsHelp(): string {
  const width = Math.max(...IMPORT_KINDS.map((k) => k.length)) + 2
  const rows = IMPORT_KINDS.map((k) =>
    k === 'financials'
      ? `  ${k.padEnd(width)}${NOTES[k]}`
      : `  ${k.padEnd(width)}${describeLayout(LAYOUTS[k])}\n  ${' '.repeat(width)}${NOTES[k]}`,
  )
  return `\nColumns of each kind (a header row first, in any order; a column the kind does not know is refused):\n${rows.join('\n')}\n${VENDOR_FILES}\nEvery format, option and rule: docs/importing.md`
}

/** The file (and for financials the statement) of the positional arguments. */
function fileOf(kind: ImportKind, first: string, second: string | undefined): { file: string; statement?: Statement } {
  if (kind !== 'financials') {
    if (second !== undefined) throw new InvalidArgumentError(`import ${kind} takes one file (got also '${second}')`)
    return { file: first }
  }
  if (!isStatement(first))
    throw new InvalidArgumentError(`import financials: '${first}' is not a statement; one of ${STATEMENTS.join(', ')}`)
  if (second === undefined)
    throw new InvalidArgumentError(`import financials ${first}: give the CSV file after the statement`)
  return { file: second, statement: first }
}

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('import a CSV file into the store, all or nothing')
    .usage(`<kind> <file> [options], or financials <${STATEMENTS.join('|')}> <file> [options]`)
    .addArgument(new Argument('<kind>', 'what the file holds').choices(IMPORT_KINDS))
    .argument('<file>', 'CSV file with a header row (financials: the statement, then the file)')
    .argument('[statementFile]', "financials: the statement's CSV file")
    .addOption(
      new Option('--format <vendor>', "the file's shape: mdq's CSV, or a vendor's file as it comes (docs/importing.md)")
        .choices(FORMATS)
        .default('mdq'),
    )
    .addOption(new Option('--period <period>', 'bars: the base period of the file').choices(['1m', '1d']).default('1d'))
    .option('--symbol <symbol>', 'bars: the symbol, for files without a symbol column')
    .addOption(
      new Option('--stamp <which>', 'bars: minute times are bar starts or bar ends')
        .choices(['start', 'end'])
        .default('start'),
    )
    .option('--price-scale <k>', 'bars: divide prices by k (e.g. 10000 for deci-cents)', positiveNumber, 1)
    .addOption(
      new Option('--outside-sessions <what>', 'bars: what to do with minute bars outside the regular sessions')
        .choices(['abort', 'skip'])
        .default('abort'),
    )
    .option('--derive-ex-factors', 'bars: record an ex-factor where prev_close differs from the previous close', false)
    .option(
      '--replace',
      "bars: the file's bars replace the stored bars of each of its symbols (and this period) in the file's time range of that symbol; financials: every stored version of its symbols' periods in the file's period range",
      false,
    )
    .addHelpText('after', columnsHelp)
    .action(
      async (
        kind: ImportKind,
        first: string,
        second: string | undefined,
        o: {
          period: '1m' | '1d'
          symbol?: string
          stamp: 'start' | 'end'
          priceScale: number
          outsideSessions: 'abort' | 'skip'
          deriveExFactors: boolean
          replace: boolean
          format: Format
        },
        command: Command,
      ) => {
        const { file, statement } = fileOf(kind, first, second)
        if (o.format !== 'mdq' && command.getOptionValueSource('priceScale') === 'cli')
          throw new InvalidArgumentError(`--price-scale: the ${o.format} format converts its own units`)
        const periodGiven = command.getOptionValueSource('period') === 'cli'
        // An option of bars given for another kind would be silently ignored: refused instead.
        const barsOnly = ['period', 'symbol', 'stamp', 'priceScale', 'outsideSessions', 'deriveExFactors'] as const
        const misplaced = barsOnly.filter((name) => command.getOptionValueSource(name) === 'cli')
        if (kind !== 'bars' && o.format === 'mdq' && misplaced.length > 0)
          throw new InvalidArgumentError(
            `${misplaced.map((name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} ${misplaced.length === 1 ? 'applies' : 'apply'} to bars only, not to ${kind}`,
          )
        if (o.replace && kind !== 'bars' && kind !== 'financials')
          throw new InvalidArgumentError(
            '--replace applies to bars and financials only (correct other data with mdq delete)',
          )
        const summary = await withStores({ ...storeFlags(program), create: true }, ({ market }) =>
          importFile(
            market,
            kind,
            file,
            { ...o, periodGiven, ...(statement && { statement }) },
            terminalProgress(),
            pauseAt(process.env.MDQ_IMPORT_PAUSE_AT, 'import'),
          ),
        )
        process.stdout.write(formatSummary(summary) + '\n')
      },
    )
}
