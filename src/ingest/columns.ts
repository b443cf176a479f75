/** @module The columns of each import kind, and a file's header fitted to them with every problem named at once. */
import { hintFor } from './column-aliases.js'
import type { CsvFile } from './csv-reader.js'
import { ImportError } from './import-error.js'
import type { ImportKind } from './import-file.js'

/** The kinds of one fixed layout (a financials file's columns depend on its statement: ingest/financials-import.ts). */
export type CsvKind = Exclude<ImportKind, 'financials'>

/** The columns of one kind of import file: `C` every column it knows, `R` those it requires. */
export interface ColumnLayout<C extends string = string, R extends C = C> {
  readonly kind: CsvKind
  /** Every column the kind knows, in the order help and errors show them. */
  readonly columns: readonly C[]
  readonly required: readonly R[]
  /** Columns a command-line flag stands in for (bars' symbol: --symbol): required unless it is given. */
  readonly flags?: Partial<Record<C, string>>
  /** Of these (optional) columns at least one must be there: a file without any says nothing. */
  readonly anyOf?: readonly C[]
}

function layout<const C extends string, const R extends C>(
  kind: CsvKind,
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
    ['universe_id', 'symbol', 'name', 'region', 'category', 'description', 'in_date', 'out_date'],
    ['universe_id', 'symbol'],
  ),
} as const satisfies Record<CsvKind, ColumnLayout>

/** Separators of other CSV dialects: a header split on none of its commas holds one of them. */
const SEPARATORS = [
  { char: ';', name: "';' separators" },
  { char: '\t', name: 'tabs' },
  { char: '|', name: "'|' separators" },
]

/** A field of a data row rather than a column name: a number, a date or a time. */
const DATA = /^[+-]?[\d.:/ -]+$/

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
  const separator = header.length === 1 ? SEPARATORS.find((s) => header[0].includes(s.char)) : undefined
  if (separator)
    throw new ImportError(
      file.path,
      1,
      1,
      `the header has no ',' but ${separator.name}: mdq reads comma-separated files (convert the separators to ',')`,
    )
  if (header.length >= 2 && header.filter((name) => DATA.test(name)).length * 2 > header.length)
    throw new ImportError(
      file.path,
      1,
      1,
      `line 1 is a row of data, not a header (LEAN files have none): put a header line first (${l.kind} columns: ${describeLayout(l)})`,
    )
  header.forEach((name, k) => {
    const first = header.indexOf(name)
    if (name !== '' && first < k)
      throw new ImportError(file.path, 1, k + 1, `column '${name}' is named twice (columns ${first + 1} and ${k + 1})`)
  })
  const found = { rename: [] as string[], drop: [] as string[], unknown: [] as string[] }
  const unnamed: number[] = []
  /** Columns a rename already points at: not reported missing as well. */
  const renamed: string[] = []
  let first = -1
  header.forEach((name, k) => {
    if (known.includes(name)) return
    if (first < 0) first = k
    if (name === '') return unnamed.push(k + 1)
    const hint = hintFor(name, known, header)
    if (hint.column) renamed.push(hint.column)
    found[hint.action].push(hint.text)
  })
  const absent = (name: string) => !header.includes(name) && !renamed.includes(name)
  const missing: string[] = []
  for (const name of l.columns) {
    const flag = l.flags?.[name]
    if ((l.required as readonly string[]).includes(name) && absent(name)) missing.push(`'${name}'`)
    else if (flag !== undefined && !given.includes(flag) && absent(name)) missing.push(`'${name}' (or give ${flag})`)
  }
  const s = (list: readonly unknown[]) => (list.length > 1 ? 's' : '')
  const problems = [
    found.rename.length ? `rename ${found.rename.join(', ')}` : '',
    found.drop.length ? `drop ${found.drop.join(', ')}` : '',
    found.unknown.length ? `unknown column${s(found.unknown)} ${found.unknown.join(', ')}` : '',
    unnamed.length ? `column${s(unnamed)} ${unnamed.join(', ')} without a name` : '',
    missing.length ? `missing column${s(missing)} ${missing.join(', ')}` : '',
    l.anyOf?.every(absent) ? `no column of ${l.anyOf.join(', ')}: ${a(l.kind)} file gives at least one` : '',
  ].filter(Boolean)
  if (problems.length > 0)
    throw new ImportError(
      file.path,
      1,
      Math.max(first, 0) + 1,
      `the header does not fit ${a(l.kind)} file: ${problems.join('; ')} (${l.kind} columns: ${describeLayout(l)})`,
    )
  const out: Record<string, number | undefined> = {}
  for (const name of l.columns) {
    const i = header.indexOf(name)
    out[name] = i < 0 ? undefined : i
  }
  return out as Record<R, number> & Record<Exclude<C, R>, number | undefined>
}
