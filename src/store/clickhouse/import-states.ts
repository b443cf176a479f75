/**
 * @module The imports table's protocol: an import's rows become visible by its `committed` row, and a
 * vacuum removes them only after a `vacuumed` row; the two never both happen (FORMAT.md "Commit and
 * vacuum"). ClickHouse has no compare-and-set, so each side writes its intent and then reads the
 * other's: a commit writes `committing` before its conditional `committed`, a vacuum `vacuuming`
 * before it looks for `committing`.
 */
import { sql, type Connection } from './connection.js'

export const IMPORT_STATE_TYPE =
  "Enum8('begun' = 1, 'committed' = 2, 'aborted' = 3, 'vacuumed' = 4, 'committing' = 5, 'vacuuming' = 6)"

/**
 * The small tables readers reload as imports become visible (snapshot.ts), each a bit of the
 * `tables` mask an import's `committed` row carries: a poll queries only the tables its newly visible
 * imports wrote (a one-minute append or a live push: `series` alone). Rows written without a mask
 * (other states, or by an mdq from before it) have every bit set.
 */
export const POLLED_TABLES = [
  'series',
  'instruments',
  'ex_factors',
  'universes',
  'universe_dates',
  'deletes',
  'financial_deletes',
] as const
export type PolledTable = (typeof POLLED_TABLES)[number]
export const ALL_TABLES = (1 << POLLED_TABLES.length) - 1
export const IMPORT_TABLES_COLUMN = 'tables UInt16 DEFAULT 65535'

/** The mask naming those of `tables` that are polled. */
export function tablesMask(tables: Iterable<string>): number {
  let mask = 0
  for (const t of tables) {
    const bit = POLLED_TABLES.indexOf(t as PolledTable)
    if (bit >= 0) mask |= 1 << bit
  }
  return mask
}

/** Whether `mask` names `table`. */
export const wrote = (mask: number, table: PolledTable): boolean => (mask & (1 << POLLED_TABLES.indexOf(table))) !== 0

/**
 * The bits of a mask whose tables change answers about any symbol (instruments, events, tombstones,
 * universes): an import that wrote only bars (named by its `series` rows) and live data changes only
 * its own symbols' (snapshot.ts, symbolVersion).
 */
export const EVERY_SYMBOL_TABLES = ALL_TABLES & ~(1 << POLLED_TABLES.indexOf('series'))

export type ImportState = 'begun' | 'committed' | 'aborted' | 'vacuumed' | 'committing' | 'vacuuming'

/** A live writer re-inserts its `begun` row this often, so vacuum can tell it from a dead one. */
export const HEARTBEAT_MS = 5_000
/**
 * The shortest grace a vacuum may give running imports: two heartbeats. A shorter one would take a
 * live import for a dead one between two of its heartbeats (the import would then fail to commit).
 */
export const MIN_GRACE_MS = 2 * HEARTBEAT_MS

/** Per import (GROUP BY import_id): the imports readers see. A `vacuumed` row hides an import for good. */
export const VISIBLE = "countIf(state = 'committed') > 0 AND countIf(state = 'vacuumed') = 0"

/** Rows of `states` (one INSERT) for each of `ids`. */
export async function recordState(
  meta: Connection,
  ids: readonly (bigint | string)[],
  states: ImportState | readonly ImportState[],
): Promise<void> {
  await recordStates(
    meta,
    ids.flatMap((id) => [states].flat().map((state) => [id, state] as const)),
  )
}

/** Rows of `imports`, each an import and its state, in one INSERT (atomic: all of them or none). */
export async function recordStates(
  meta: Connection,
  rows: readonly (readonly [id: bigint | string, state: ImportState])[],
): Promise<void> {
  const now = Date.now()
  const body = rows.map(([id, state]) => `${sql.int(id)}\t${state}\t${now}\n`).join('')
  await meta.insert('imports', ['import_id', 'state', 'at_ms'], 'TabSeparated', body)
}

/**
 * Makes an import visible unless a vacuum has claimed it; true when it is visible. Its `committing`
 * row must be in first (recordState; it may go with the import's last data). The `committed` row
 * goes in by one INSERT ... SELECT that finds no `vacuuming` row: the server reads and writes in one
 * statement, so no pause of this process can fall between the check and the row. It names the
 * polled tables the import wrote (`tables`: tablesMask).
 */
export async function commitImport(meta: Connection, id: bigint, tables: number): Promise<boolean> {
  const i = sql.int(id)
  await meta.command(
    `INSERT INTO imports (import_id, state, at_ms, tables) SELECT ${i}, 'committed', ${sql.int(Date.now())}, ${sql.int(tables)} FROM system.one
     WHERE (SELECT count() FROM imports WHERE import_id = ${i} AND state IN ('vacuuming', 'vacuumed')) = 0`,
  )
  const [[committed, vacuumed]] = await meta.rows(
    `SELECT countIf(state = 'committed'), countIf(state = 'vacuumed') FROM imports WHERE import_id = ${i}`,
  )
  return committed !== '0' && vacuumed === '0'
}

/** What a claim left: the imports it claimed, and where the next claim may start looking. */
export interface Claimed {
  readonly claimed: string[]
  /**
   * Every import below it was settled (committed or claimed) when the claim looked, and none that
   * begins later can be there unsettled (an id drawn below is given up and claimed at once,
   * beginImport): the lowest one unsettled, or above the newest committed one.
   */
  readonly floor: bigint
}

/**
 * Claims the imports that will never commit: rolled back, or with no sign of life for `graceMs`.
 * Returns the ids whose `vacuumed` row is in: their rows may be removed, no reader will see them and
 * their commits fail. An import that had begun to commit when claimed is left until its claim is
 * older than the grace (and MIN_GRACE_MS): its conditional `committed` insert, if it saw no claim,
 * has long landed by then, and a later one sees the claim. Only imports at or above `from` (a
 * previous claim's floor) are looked at: a live feed adds an import with every write.
 */
export async function claimDeadImports(meta: Connection, graceMs: number, from = 0n): Promise<Claimed> {
  const now = Date.now()
  // Read before the imports: an import begun later than this read gets an id above it (beginImport).
  const [[newest]] = await meta.rows(
    `SELECT max(import_id) FROM imports WHERE import_id >= ${sql.int(from)} AND state = 'committed'`,
  )
  const unsettled = await meta.rows(
    `SELECT import_id, countIf(state = 'aborted') > 0 OR maxIf(at_ms, state IN ('begun', 'committing')) < ${sql.int(now - graceMs)}
     FROM imports WHERE import_id >= ${sql.int(from)} GROUP BY import_id
     HAVING countIf(state IN ('committed', 'vacuumed')) = 0`,
  )
  let floor = BigInt(newest ?? 0) + 1n
  if (floor < from) floor = from
  for (const [id] of unsettled) if (BigInt(id!) < floor) floor = BigInt(id!)
  const candidates = unsettled.filter((r) => r[1] === '1').map((r) => r[0]!)
  if (candidates.length === 0) return { claimed: [], floor }
  await recordState(meta, candidates, 'vacuuming')
  const settled = now - Math.max(graceMs, MIN_GRACE_MS)
  const claimed = (
    await meta.rows(
      `SELECT import_id FROM imports WHERE import_id IN (${sql.list(candidates.map(sql.int))}) GROUP BY import_id
       HAVING countIf(state IN ('committed', 'vacuumed')) = 0
          AND (countIf(state = 'committing') = 0 OR minIf(at_ms, state = 'vacuuming') <= ${sql.int(settled)})`,
    )
  ).map((r) => r[0]!)
  if (claimed.length) await recordState(meta, claimed, 'vacuumed')
  return { claimed, floor }
}

/**
 * Draws an import id above every committed one and records it `begun`: readers hide the rows of
 * imports at or below their newest visible id that are not visible (snapshot.ts), so an import that
 * starts later must not get an id below that mark. Its `begun` row goes in first, then the newest
 * committed id is read: an id at or below it is given up and a higher one drawn. A given-up id wrote
 * nothing and can never commit, so it is recorded `aborted` and claimed (`vacuumed`) at once: no
 * vacuum needs to find it (claimDeadImports' floor may already lie above it).
 */
export async function beginImport(meta: Connection, newId: (floor: bigint) => bigint): Promise<bigint> {
  let floor = 0n
  for (;;) {
    const id = newId(floor)
    await recordState(meta, [id], 'begun')
    const max = await committedFrom(meta, id)
    if (max < id) return id
    await recordState(meta, [id], ['aborted', 'vacuumed'])
    floor = max
  }
}

/** The newest committed import at or above `id` (0 if none). */
export async function committedFrom(meta: Connection, id: bigint): Promise<bigint> {
  // Only ids at or above `id` matter: the sort key reads those granules, not every import since the store began.
  const [[max]] = await meta.rows(
    `SELECT max(import_id) FROM imports WHERE import_id >= ${sql.int(id)} AND state = 'committed'`,
  )
  return BigInt(max ?? 0)
}
