/** @module The committed state readers filter by: committed imports and tombstones; per series, the spans imports wrote. */
import type { StoredPeriod } from '../../domain/period.js'
import { sql, type Connection } from './connection.js'
import { VISIBLE } from './import-states.js'

export interface Tombstone {
  readonly fromTs: number
  readonly toTs: number
  readonly importId: string
  readonly seq: number
}

export interface Snapshot {
  /** What the imports table said when this was loaded (the next poll reloads when it differs). */
  readonly head: string
  /** Changes with every commit (any process). */
  readonly version: string
  readonly importCount: number
  /** `import_id IN (...)` of every committed import; NULL when none. */
  readonly committedSql: string
  /** Tombstones by `${kind}|${symbol}|${period}`. */
  readonly tombstones: ReadonlyMap<string, readonly Tombstone[]>
}

/** The span of bars one committed putBars wrote to a series (deletes ignored: a superset). */
export interface Interval {
  readonly first: number
  readonly last: number
  readonly importId: string
}

export const OPEN_FROM = -8.64e15
export const OPEN_TO = 8.64e15

export const tombstoneKey = (
  kind: 'bars' | 'ex_factors' | 'instruments',
  symbol: string,
  period: StoredPeriod | '' = '',
) => `${kind}|${symbol}|${period}`

/** Reloads only when the commit count, the newest committed import or the vacuumed count moved. */
export async function loadSnapshot(meta: Connection, previous: Snapshot | undefined): Promise<Snapshot> {
  const [head] = await meta.rows(
    "SELECT countIf(state = 'committed'), maxIf(import_id, state = 'committed'), countIf(state = 'vacuumed') FROM imports",
  )
  if (previous && previous.head === head.join('.')) return previous
  const ids = (
    await meta.rows(`SELECT import_id FROM imports GROUP BY import_id HAVING ${VISIBLE} ORDER BY import_id`)
  ).map((r) => r[0]!)
  // The version comes from the list actually read, so the filters below match it exactly.
  const version = `ch${ids.length}.${ids.length ? ids[ids.length - 1] : 0}`
  const committedSql = `import_id IN (${sql.list(ids)})`
  const tombstones = new Map<string, Tombstone[]>()
  if (ids.length) {
    for (const [kind, symbol, period, from, to, id, seq] of await meta.rows(
      `SELECT kind, symbol, period, from_ts, to_ts, import_id, seq FROM deletes WHERE ${committedSql}`,
    )) {
      const key = `${kind}|${symbol}|${period}`
      const list = tombstones.get(key) ?? []
      list.push({ fromTs: Number(from), toTs: Number(to), importId: id!, seq: Number(seq) })
      tombstones.set(key, list)
    }
  }
  return { head: head.join('.'), version, importCount: ids.length, committedSql, tombstones }
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
    readonly importId: string
    readonly seq: number | string
  },
  tsColumn: string | null,
): string {
  const range =
    tsColumn === null ? '' : `${tsColumn} >= ${sql.int(t.fromTs)} AND ${tsColumn} <= ${sql.int(t.toTs)} AND `
  return `${range}(import_id, seq) < (${sql.int(t.importId)}, ${sql.int(t.seq)})`
}

/** `AND NOT (...)` for each tombstone of a key. */
export function tombstoneFilter(list: readonly Tombstone[] | undefined, tsColumn: string | null): string {
  if (!list) return ''
  return list.map((t) => ` AND NOT (${hiddenBy(t, tsColumn)})`).join('')
}

/** The committed spans of one series, oldest import first. */
export async function loadIntervals(
  meta: Connection,
  s: Snapshot,
  symbol: string,
  period: StoredPeriod,
): Promise<Interval[]> {
  const rows = await meta.rows(
    `SELECT first_ts, last_ts, import_id FROM series WHERE symbol = ${sql.str(symbol)} AND period = ${sql.str(period)} AND ${s.committedSql} ORDER BY import_id, seq`,
  )
  return rows.map(([first, last, id]) => ({ first: Number(first), last: Number(last), importId: id! }))
}

/** Whether spans clipped to [from, to] overlap: only then can two rows of one timestamp be in the window. */
export function overlapping(spans: readonly Interval[], from: number, to: number): boolean {
  const clipped = spans.map((i) => [Math.max(i.first, from), Math.min(i.last, to)] as const).sort((a, b) => a[0] - b[0])
  for (let k = 1; k < clipped.length; k++) if (clipped[k][0] <= clipped[k - 1][1]) return true
  return false
}
