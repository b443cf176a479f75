/** @module The columns of each import kind, and a file's header fitted to them with every problem named at once. */
import type { CsvFile } from './csv-reader.js'
import { ImportError } from './import-error.js'
import type { ImportKind } from './import-file.js'

/** The columns of one kind of import file: `C` every column it knows, `R` those it requires. */
export interface ColumnLayout<C extends string = string, R extends C = C> {
  readonly kind: ImportKind
  /** Every column the kind knows, in the order help and errors show them. */
  readonly columns: readonly C[]
  readonly required: readonly R[]
  /** Columns a command-line flag stands in for (bars' symbol: --symbol): required unless it is given. */
  readonly flags?: Partial<Record<C, string>>
  /** Of these (optional) columns at least one must be there: a file without any says nothing. */
  readonly anyOf?: readonly C[]
}

function layout<const C extends string, const R extends C>(
  kind: ImportKind,
  columns: readonly C[],
  required: readonly R[],
  more: Pick<ColumnLayout<C, R>, 'flags' | 'anyOf'> = {},
): ColumnLayout<C, R> {
  return { kind, columns, required, ...more }
}

const ACTION_COLUMNS = ['cash_dividend', 'bonus_ratio', 'rights_ratio', 'rights_price', 'split_ratio'] as const

/** The one list of what each import file holds (contract "Import formats"); help text is made from it too. */
export const LAYOUTS = {
  instruments: layout(
    'instruments',
    [
      'symbol',
      'name',
      'type',
      'listing_date',
      'tick_size',
      'total_shares',
      'float_shares',
      'limit_up',
      'limit_down',
      'name_en',
      'lot_size',
    ],
    ['symbol'],
  ),
  bars: layout(
    'bars',
    ['symbol', 'time', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'],
    ['time', 'open', 'high', 'low', 'close', 'volume'],
    { flags: { symbol: '--symbol' } },
  ),
  'ex-factors': layout('ex-factors', ['symbol', 'ex_date', 'ex_factor'], ['symbol', 'ex_date', 'ex_factor']),
  actions: layout('actions', ['symbol', 'ex_date', ...ACTION_COLUMNS], ['symbol', 'ex_date'], {
    anyOf: ACTION_COLUMNS,
  }),
  universes: layout(
    'universes',
    ['universe_id', 'symbol', 'name', 'region', 'category', 'description'],
    ['universe_id', 'symbol'],
  ),
} as const satisfies Record<ImportKind, ColumnLayout>

/** The kind with its article: 'a bars', 'an actions'. */
const a = (kind: string) => `${/^[aeio]/.test(kind) ? 'an' : 'a'} ${kind}`

/** `symbol,time,...,volume[,amount][,prev_close]`: the columns, optional ones in brackets. */
export function describeLayout(l: ColumnLayout): string {
  return l.columns
    .map((c, k) => {
      const needed = (l.required as readonly string[]).includes(c) || l.flags?.[c] !== undefined
      return needed ? `${k === 0 ? '' : ','}${c}` : `[${k === 0 ? '' : ','}${c}]`
    })
    .join('')
}

/**
 * Positions of the layout's columns in the file's header. A header that does not fit (a required
 * column missing, a column the kind does not know, one without a name) is one error at line 1 naming
 * every problem. `given` lists the flags given on the command line (e.g. `--symbol`).
 */
export function columnsOf<C extends string, R extends C>(
  file: CsvFile,
  l: ColumnLayout<C, R>,
  given: readonly string[] = [],
): Record<R, number> & Record<Exclude<C, R>, number | undefined> {
  const header = file.header
  const known: readonly string[] = l.columns
  const problems: string[] = []
  let column = 0
  const problem = (at: number, text: string) => {
    if (problems.length === 0) column = at
    problems.push(text)
  }
  header.forEach((name, k) => {
    const first = header.indexOf(name)
    if (name !== '' && first < k)
      throw new ImportError(file.path, 1, k + 1, `column '${name}' is named twice (columns ${first + 1} and ${k + 1})`)
  })
  header.forEach((name, k) => {
    if (name === '') problem(k, `column ${k + 1} has no name`)
    else if (!known.includes(name)) problem(k, `unknown column '${name}'`)
  })
  const missing = (name: string) => !header.includes(name)
  for (const name of l.columns) {
    const flag = l.flags?.[name]
    if ((l.required as readonly string[]).includes(name) && missing(name)) problem(0, `missing column '${name}'`)
    else if (flag !== undefined && !given.includes(flag) && missing(name))
      problem(0, `missing column '${name}' (or give ${flag})`)
  }
  if (l.anyOf && l.anyOf.every(missing))
    problem(0, `no column of ${l.anyOf.join(', ')}: ${a(l.kind)} file gives at least one`)
  if (problems.length > 0)
    throw new ImportError(
      file.path,
      1,
      column + 1,
      `the header does not fit ${a(l.kind)} file: ${problems.join('; ')} (${l.kind} columns: ${describeLayout(l)})`,
    )
  const out: Record<string, number | undefined> = {}
  for (const name of l.columns) {
    const i = header.indexOf(name)
    out[name] = i < 0 ? undefined : i
  }
  return out as Record<R, number> & Record<Exclude<C, R>, number | undefined>
}
