/**
 * @module The committed state readers use, held in memory and polled: which imports are visible (a
 * watermark and the few below it that are not), the small tables (metadata.ts) and every series'
 * spans (series-index.ts). The first load reads every row of the small tables but of the imports
 * only the count of the visible ones, the newest of them and the others (and the count and newest of
 * those that moved every symbol's version: symbolVersion); each poll after reads only
 * the imports at or above the oldest one still open, and the rows of those that became visible.
 */
import { MARKETS, parseSymbol } from '../../domain/market.js'
import type { SecurityType } from '../../domain/instrument.js'
import type { StoredPeriod } from '../../domain/period.js'
import { sql, type Connection } from './connection.js'
import { ALL_TABLES, EVERY_SYMBOL_TABLES, VISIBLE, wrote, type PolledTable } from './import-states.js'
import { Metadata, tombstoneKey, type Rows, type Tombstone, type Version } from './metadata.js'
import { SeriesState, type SpanRow } from './series-index.js'
import { spellsOf } from './financials-reads.js'
import { universeOfRows } from '../../domain/universe.js'

export const OPEN_FROM = -8.64e15
export const OPEN_TO = 8.64e15

export interface Snapshot {
  /** Changes with every commit (any process): `ch<visible imports>.<watermark>`. */
  readonly version: string
  readonly importCount: number
  /** The newest visible import: rows of imports above it are not read. */
  readonly watermark: bigint
  /** Imports at or below the watermark that are not visible (open, rolled back, removed), and whether they can still commit. */
  readonly hidden: ReadonlyMap<bigint, 'open' | 'closed'>
  /** The rows readers may see, as SQL: `import_id <= watermark AND import_id NOT IN (hidden)`. */
  readonly visibleSql: string
  readonly meta: Metadata
  /** Per `${symbol}|${period}`. */
  readonly series: ReadonlyMap<string, SeriesState>
  /** The visible imports that wrote instruments, events, tombstones or universes (EVERY_SYMBOL_TABLES): they may change any symbol's answers. */
  readonly everySymbol: Imports
  /** Per symbol, the visible imports that wrote its bars. */
  readonly bySymbol: ReadonlyMap<string, Imports>
}

/** Some visible imports: how many, and the newest. */
export interface Imports {
  readonly count: number
  readonly newest: bigint
}

const NO_IMPORTS: Imports = { count: 0, newest: 0n }
const withImport = (held: Imports, id: bigint): Imports => ({
  count: held.count + 1,
  newest: id > held.newest ? id : held.newest,
})

export const seriesKey = (symbol: string, period: StoredPeriod) => `${symbol}|${period}`

/** The `series` rows an import of this process wrote, in the order it wrote them (ClickHouseWriter): known without reading them back. */
export interface WrittenSpans {
  readonly importId: bigint
  readonly spans: readonly (readonly [key: string, span: SpanRow])[]
}

/**
 * The version of the answers about `symbol` (readVersions().of): `chs` with the count and newest id
 * of the visible imports that may have changed every symbol's answers, then of those that wrote its
 * bars. Imports only ever become visible, so both sets only grow: a count with its newest id names
 * one set, on any process or thread, and another symbol's bars and live pushes leave it as it is.
 */
export function symbolVersion(s: Snapshot, symbol: string): string {
  const { everySymbol: all } = s
  const own = s.bySymbol.get(symbol) ?? NO_IMPORTS
  return `chs${all.count}.${all.newest}.${own.count}.${own.newest}`
}

let revisions = 0

interface ImportStates {
  readonly committed: boolean
  readonly vacuumed: boolean
  readonly aborted: boolean
  /** The polled tables it wrote (import-states.ts tablesMask), from its committed row. */
  readonly tables: number
}
type States = Map<bigint, ImportStates>

/** What the imports table says: the newly visible imports (every visible one on a first load) and the rest. */
interface Loaded {
  readonly fresh: readonly bigint[]
  readonly importCount: number
  readonly watermark: bigint
  readonly hidden: Map<bigint, 'open' | 'closed'>
  /** The polled tables the fresh imports wrote (a tablesMask). */
  readonly tables: number
  /** The visible imports that may have changed every symbol's answers (EVERY_SYMBOL_TABLES). */
  readonly everySymbol: Imports
}

/**
 * Loads the state anew, or moves `previous` forward by the imports that became visible since (the
 * spans of those in `written`, this process's own, taken from there rather than read back).
 */
export async function loadSnapshot(
  meta: Connection,
  previous: Snapshot | undefined,
  written: ReadonlyMap<bigint, WrittenSpans> = new Map(),
): Promise<Snapshot> {
  const { fresh, importCount, watermark, hidden, tables, everySymbol } = previous
    ? await polledImports(meta, previous)
    : await allImports(meta)
  if (previous && fresh.length === 0 && sameKeys(hidden, previous.hidden)) return previous
  const visibleSql = `import_id <= ${watermark}${hidden.size ? ` AND import_id NOT IN (${[...hidden.keys()].join(', ')})` : ''}`
  if (previous && fresh.length === 0) return { ...previous, hidden, visibleSql }
  // The rows of the newly visible imports (all visible ones on the first load), of the tables they wrote.
  const rowsOf = previous ? `import_id IN (${sql.list(fresh.map(String))})` : visibleSql
  const rows = await loadRows(meta, rowsOf, tables)
  const metadata = (previous?.meta ?? Metadata.empty()).with(rows)
  const series = new Map(previous?.series ?? [])
  const bySymbol = new Map(previous?.bySymbol ?? [])
  /** The last import counted for each symbol: the rows come in import order, so each import is counted once. */
  const counted = new Map<string, bigint>()
  const spans = !wrote(tables, 'series')
    ? []
    : previous
      ? await freshSpans(meta, fresh, written)
      : await loadSpans(meta, rowsOf)
  for (const [key, span, importId] of spans) {
    const bar = key.indexOf('|')
    const period = key.slice(bar + 1) as StoredPeriod
    series.set(key, (series.get(key) ?? SeriesState.empty(period)).with(span, ++revisions))
    const symbol = key.slice(0, bar)
    if (counted.get(symbol) === importId) continue
    counted.set(symbol, importId)
    bySymbol.set(symbol, withImport(bySymbol.get(symbol) ?? NO_IMPORTS, importId))
  }
  for (const t of rows.tombstones) {
    const [kind, symbol, period] = t.key.split('|')
    const key = seriesKey(symbol, period as StoredPeriod)
    if (kind === 'bars' && series.has(key)) series.set(key, series.get(key)!.touched(++revisions))
  }
  return {
    version: versionOf(importCount, watermark),
    importCount,
    watermark,
    hidden,
    visibleSql,
    meta: metadata,
    series,
    everySymbol,
    bySymbol,
  }
}

const versionOf = (count: number, watermark: bigint) => `ch${count}.${watermark}`

/**
 * The first load: the visible imports counted and the newest of them found by the server, and only
 * the others listed (a live feed adds an import with every write, so the table grows all day).
 */
async function allImports(meta: Connection): Promise<Loaded> {
  const [all] = await meta.json<{
    visible: string
    watermark: string
    others: [string, number][]
    every: string
    newestEvery: string
  }>(
    `SELECT countIf(v) AS visible, maxIf(import_id, v) AS watermark, groupArrayIf((import_id, gone), NOT v) AS others,
       countIf(v AND bitAnd(mask, ${EVERY_SYMBOL_TABLES}) != 0) AS every,
       maxIf(import_id, v AND bitAnd(mask, ${EVERY_SYMBOL_TABLES}) != 0) AS newestEvery
     FROM (SELECT import_id, ${VISIBLE} AS v, max(state IN ('aborted', 'vacuumed')) AS gone,
       groupBitOrIf(tables, state = 'committed') AS mask FROM imports GROUP BY import_id)`,
  )
  const watermark = BigInt(all.watermark)
  const hidden = new Map<bigint, 'open' | 'closed'>()
  for (const [id, gone] of all.others) if (BigInt(id) <= watermark) hidden.set(BigInt(id), gone ? 'closed' : 'open')
  const everySymbol = { count: Number(all.every), newest: BigInt(all.newestEvery) }
  return {
    fresh: [],
    importCount: Number(all.visible),
    watermark,
    hidden,
    tables: ALL_TABLES,
    everySymbol,
  }
}

/** The imports at or above the poll floor that became visible since `previous`, and those still hidden. */
async function polledImports(meta: Connection, previous: Snapshot): Promise<Loaded> {
  const states: States = new Map()
  for (const [id, committed, vacuumed, aborted, tables] of await meta.rows(
    `SELECT import_id, max(state = 'committed'), max(state = 'vacuumed'), max(state = 'aborted'),
       groupBitOrIf(tables, state = 'committed') FROM imports
     WHERE import_id >= ${pollFloor(previous)} GROUP BY import_id`,
  ))
    states.set(BigInt(id!), {
      committed: committed === '1',
      vacuumed: vacuumed === '1',
      aborted: aborted === '1',
      tables: Number(tables),
    })
  const isVisible = (s: ImportStates) => s.committed && !s.vacuumed
  const seen = (id: bigint) => id <= previous.watermark && !previous.hidden.has(id)
  const fresh = [...states].filter(([id, s]) => isVisible(s) && !seen(id)).map(([id]) => id)
  let watermark = previous.watermark
  for (const id of fresh) if (id > watermark) watermark = id
  const hidden = new Map<bigint, 'open' | 'closed'>()
  for (const [id, kind] of previous.hidden) if (!fresh.includes(id)) hidden.set(id, kind)
  for (const [id, s] of states)
    if (id <= watermark && !isVisible(s)) hidden.set(id, s.aborted || s.vacuumed ? 'closed' : 'open')
  const every = fresh.filter((id) => (states.get(id)!.tables & EVERY_SYMBOL_TABLES) !== 0)
  return {
    fresh,
    importCount: previous.importCount + fresh.length,
    watermark,
    hidden,
    tables: fresh.reduce((mask, id) => mask | states.get(id)!.tables, 0),
    everySymbol: every.reduce(withImport, previous.everySymbol),
  }
}

/** Polls start at the oldest import that may still become visible (else just above the watermark). */
function pollFloor(s: Snapshot): bigint {
  let floor = s.watermark + 1n
  for (const [id, kind] of s.hidden) if (kind === 'open' && id < floor) floor = id
  return floor
}

function sameKeys(a: ReadonlyMap<bigint, string>, b: ReadonlyMap<bigint, string>): boolean {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

type InstrumentTuple = [
  string,
  string,
  string | null,
  string | null,
  string | null,
  number | null,
  number | null,
  number | null,
  number | null,
  number | null,
  string | null,
  number | null,
]

/** The small tables' rows matching `where`, of the tables in `tables` (a tablesMask). */
async function loadRows(meta: Connection, where: string, tables: number): Promise<Rows> {
  const v = (r: { import_id: string; seq: number }): Version => ({ importId: BigInt(r.import_id), seq: Number(r.seq) })
  /** The matching rows of `table` as JSON objects, none when the imports did not write it. */
  const select = <T>(table: PolledTable, columns: string): Promise<T[]> =>
    wrote(tables, table) ? meta.json<T>(`SELECT ${columns} FROM ${table} WHERE ${where}`) : Promise.resolve([])
  const [instruments, events, universes, deletes, statementDeletes, universeDates] = await Promise.all([
    select<{ symbol: string; r: InstrumentTuple; import_id: string; seq: number }>(
      'instruments',
      `symbol, (code, exchange, name, type, listing_date, tick_size, total_shares, float_shares, limit_up, limit_down, name_en, lot_size) AS r, import_id, seq`,
    ),
    select<{ symbol: string; ts: string; ex_factor: number; import_id: string; seq: number }>(
      'ex_factors',
      'symbol, ts, ex_factor, import_id, seq',
    ),
    select<{
      id: string
      name: string
      region: string | null
      category: string | null
      description: string | null
      symbols: string[]
      import_id: string
      seq: number
    }>('universes', 'id, name, region, category, description, symbols, import_id, seq'),
    select<{
      kind: string
      symbol: string
      period: string
      from_ts: string
      to_ts: string
      import_id: string
      seq: number
    }>('deletes', 'kind, symbol, period, from_ts, to_ts, import_id, seq'),
    wrote(tables, 'financial_deletes')
      ? meta.rows(
          `SELECT statement, symbol, from_period, to_period, import_id, seq FROM financial_deletes WHERE ${where}`,
        )
      : Promise.resolve([]),
    select<{ id: string; in_dates: string[]; out_dates: string[]; import_id: string; seq: number }>(
      'universe_dates',
      'id, in_dates, out_dates, import_id, seq',
    ),
  ])
  // A dated universe version's dates have its (import_id, seq), and come from the same import.
  const datesOf = new Map(universeDates.map((d) => [`${d.id}|${d.import_id}|${d.seq}`, d]))
  return {
    instruments: instruments.map((r) => ({ ...v(r), row: toInstrument(r.symbol, r.r) })),
    events: events.map((r) => ({ ...v(r), symbol: r.symbol, ts: Number(r.ts), exFactor: r.ex_factor })),
    universes: universes.map((r) => {
      const fields = { id: r.id, name: r.name, region: r.region, category: r.category, description: r.description }
      const dates = datesOf.get(`${r.id}|${r.import_id}|${r.seq}`)
      const row = dates
        ? universeOfRows(fields, spellsOf(r.symbols, { inDates: dates.in_dates, outDates: dates.out_dates }))
        : { ...fields, symbols: r.symbols }
      return { ...v(r), row: Object.freeze(row) }
    }),
    tombstones: deletes.map((r): Tombstone & { key: string } => ({
      ...v(r),
      key: tombstoneKey(r.kind as 'bars', r.symbol, r.period),
      fromTs: Number(r.from_ts),
      toTs: Number(r.to_ts),
    })),
    financialTombstones: statementDeletes.map(([statement, symbol, from, to, importId, seq]) => ({
      statement: statement!,
      symbol: symbol!,
      from: from!,
      to: to!,
      importId: BigInt(importId!),
      seq: Number(seq),
    })),
  }
}

/** Spans of the puts of the imports `fresh`, in import and operation order: those in `written` as written, the others read. */
async function freshSpans(
  meta: Connection,
  fresh: readonly bigint[],
  written: ReadonlyMap<bigint, WrittenSpans>,
): Promise<[string, SpanRow, bigint][]> {
  const unknown = fresh.filter((id) => !written.has(id))
  const read = unknown.length ? await loadSpans(meta, `import_id IN (${sql.list(unknown.map(String))})`) : []
  if (unknown.length === fresh.length) return read
  // In import order, each import's puts in their order: those read come so, grouped by import.
  const readOf = new Map<bigint, [string, SpanRow, bigint][]>()
  for (const row of read) {
    const held = readOf.get(row[2])
    if (held) held.push(row)
    else readOf.set(row[2], [row])
  }
  const out: [string, SpanRow, bigint][] = []
  for (const id of [...fresh].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const own = written.get(id)
    if (own) for (const [key, span] of own.spans) out.push([key, span, id])
    else for (const row of readOf.get(id) ?? []) out.push(row)
  }
  return out
}

/** Spans of the puts of the matching imports, in import and operation order, each with its import. */
async function loadSpans(meta: Connection, where: string): Promise<[string, SpanRow, bigint][]> {
  const rows = await meta.rows(
    `SELECT symbol, period, first_ts, last_ts, bars, marks, import_id, rollups, blobs FROM series WHERE ${where} ORDER BY import_id, seq`,
  )
  return rows.map(([symbol, period, first, last, bars, marks, importId, rollups, blobs]) => [
    seriesKey(symbol!, period as StoredPeriod),
    {
      first: Number(first),
      last: Number(last),
      bars: Number(bars),
      marks: marks === '[]' ? [] : marks!.slice(1, -1).split(',').map(Number),
      rollups: rollups !== '0',
      blobs: blobs === '1',
    },
    BigInt(importId!),
  ])
}

function toInstrument(symbol: string, r: InstrumentTuple) {
  const { exchange } = parseSymbol(symbol)
  return Object.freeze({
    symbol,
    code: r[0],
    exchange,
    region: MARKETS[exchange].region,
    name: r[2],
    type: r[3] as SecurityType | null,
    listingDate: r[4],
    tickSize: r[5],
    totalShares: r[6],
    floatShares: r[7],
    limitUp: r[8],
    limitDown: r[9],
    nameEn: r[10],
    lotSize: r[11],
  })
}

/**
 * The rows a tombstone hides: those of older imports (and of earlier operations of its own import)
 * in its range (when `tsColumn` is given), so a delete then a put in one import keeps the put. Reads
 * leave them out (tombstoneFilter) and vacuum removes them (compaction.ts): one predicate for both.
 */
export function hiddenBy(
  t: {
    readonly fromTs: number | string
    readonly toTs: number | string
    readonly importId: bigint | string
    readonly seq: number | string
  },
  tsColumn: string | null,
): string {
  const range =
    tsColumn === null ? '' : `${tsColumn} >= ${sql.int(t.fromTs)} AND ${tsColumn} <= ${sql.int(t.toTs)} AND `
  return `${range}(import_id, seq) < (${sql.int(t.importId)}, ${sql.int(t.seq)})`
}

/** `AND NOT (...)` for each tombstone of a key (those of a range that misses [from, to] left out). */
export function tombstoneFilter(
  list: readonly Tombstone[] | undefined,
  tsColumn: string,
  from = OPEN_FROM,
  to = OPEN_TO,
): string {
  if (!list) return ''
  return list
    .filter((t) => t.fromTs <= to && from <= t.toTs)
    .map((t) => ` AND NOT (${hiddenBy(t, tsColumn)})`)
    .join('')
}

/** The SQL the compaction and the visible-set queries share. */
export { VISIBLE }
