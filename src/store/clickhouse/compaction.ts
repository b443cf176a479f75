/**
 * @module Compaction (`mdq vacuum`): removes committed rows no reader can see any more (superseded by a
 * newer committed row of their key, or hidden by a committed tombstone), then the tombstones that hide
 * nothing. FORMAT.md "Vacuum" gives the rules that keep every answer unchanged while it runs.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, withoutRange, type Bars } from '../../domain/bars.js'
import type { StoredPeriod } from '../../domain/period.js'
import { ROLLUP_PERIODS } from '../../domain/rollups.js'
import { ChunkCorruptError, decodeChunk, encodeChunk } from '../chunk-codec.js'
import { blobRow, decodeBlobRows } from './row-binary.js'
import { Connection, WRITE_TIMEOUT_MS, sql, type Endpoint } from './connection.js'
import { BLOB_COLUMNS, type Topology } from './schema.js'
import { hiddenBy } from './snapshot.js'
import { newer, type Tombstone } from './metadata.js'
import { VISIBLE } from './import-states.js'
import { LIVE_VERSIONED_TABLES } from './live-tables.js'

export interface CompactionReport {
  /** Committed rows removed because a newer committed row of their key exists. */
  readonly supersededRows: number
  /** Committed rows removed because a committed tombstone hides them. */
  readonly hiddenRows: number
  /** Tombstones removed once the rows they hid were gone. */
  readonly tombstones: number
  /** True when the removal mutations had not finished within the wait: the tombstones stay for the next run. */
  readonly pending: boolean
}

interface Tomb {
  kind: 'bars' | 'ex_factors' | 'instruments'
  symbol: string
  period: string
  fromTs: string
  toTs: string
  importId: string
  seq: string
}

/** The metadata tables whose rows are versioned by key; `kind`: the tombstones that apply to them. */
const META_KEYS = [
  { table: 'instruments', key: ['symbol'], kind: 'instruments', ts: false },
  { table: 'ex_factors', key: ['symbol', 'ts'], kind: 'ex_factors', ts: true },
  { table: 'universes', key: ['id'], kind: undefined, ts: false },
] as const

const version = (id: string, seq: string) => `(${sql.int(id)}, ${sql.int(seq)})`

/** The rows tombstone `t` hides in a table: its key's columns, then the readers' own predicate (snapshot.ts). */
function hides(t: Tomb, withTs: boolean, withPeriod: boolean): string {
  const period = withPeriod ? ` AND period = ${sql.str(t.period)}` : ''
  return `(symbol = ${sql.str(t.symbol)}${period} AND ${hiddenBy(t, withTs ? 'ts' : null)})`
}

/**
 * Only rows that every reader's snapshot already hides are removed: a row must lose to a row, or be
 * hidden by a tombstone, of an import committed at least `graceMs` ago (readers poll every 250 ms), and
 * only rows of imports committed when the run starts are touched. A tombstone goes last, once the rows
 * it hid are gone and no import older than it is still open (one that commits later would be hidden by it).
 */
export async function compact(
  t: Topology,
  { graceMs, waitMs = 600_000 }: { graceMs: number; waitMs?: number },
): Promise<CompactionReport> {
  const none: CompactionReport = { supersededRows: 0, hiddenRows: 0, tombstones: 0, pending: false }
  const meta = t.metaWriter
  const cutoff = Date.now() - graceMs
  const committed: string[] = []
  const old: string[] = []
  for (const [id, at] of await meta.rows(
    `SELECT import_id, minIf(at_ms, state = 'committed') FROM imports GROUP BY import_id HAVING ${VISIBLE} ORDER BY import_id`,
  )) {
    committed.push(id!)
    if (Number(at) <= cutoff) old.push(id!)
  }
  if (old.length === 0) return none
  const C = `import_id IN (${sql.list(committed)})`
  const O = `import_id IN (${sql.list(old)})`
  const tombs = (
    await meta.rows(`SELECT kind, symbol, period, from_ts, to_ts, import_id, seq FROM deletes WHERE ${O}`)
  ).map(([kind, symbol, period, from, to, importId, seq]): Tomb => ({
    kind: kind as Tomb['kind'],
    symbol: symbol!,
    period: period!,
    fromTs: from!,
    toTs: to!,
    importId: importId!,
    seq: seq!,
  }))

  let supersededRows = 0
  let hiddenRows = 0
  for (const { table, key, kind, ts } of META_KEYS) {
    const k = key.join(', ')
    // A key's newest old row: every committed row below it is invisible to every reader.
    const superseded = await meta.rows(
      `SELECT import_id, seq FROM ${table} ANY INNER JOIN (SELECT ${k}, max((import_id, seq)) AS top FROM ${table} WHERE ${O} GROUP BY ${k}) USING (${k})
       WHERE ${C} AND (import_id, seq) < top`,
    )
    const mine = tombs.filter((x) => x.kind === kind)
    const hidden = mine.length
      ? await meta.rows(
          `SELECT import_id, seq FROM ${table} WHERE ${C} AND (${mine.map((x) => hides(x, ts, false)).join(' OR ')})`,
        )
      : []
    const gone = new Set([...superseded, ...hidden].map(([id, seq]) => version(id!, seq!)))
    supersededRows += superseded.length
    hiddenRows += gone.size - superseded.length
    if (gone.size) await meta.command(`ALTER TABLE ${table} DELETE WHERE (import_id, seq) IN (${[...gone].join(', ')})`)
  }

  supersededRows += (await compactLive(meta, graceMs)).removed

  const candidates = await overlappingSeries(meta, C, new Set(old))
  /** Tombstones over a damaged blob: they stay (cutHiddenBlobs). */
  const kept = new Set<Tomb>()
  const barTombs = tombs.filter((x) => x.kind === 'bars')
  for (const ep of t.barHosts) {
    const removed = await compactBars(ep, t.barsLocal, C, O, candidates, barTombs)
    supersededRows += removed.superseded
    hiddenRows += removed.hidden
    for (const x of await cutHiddenBlobs(ep, t.blobsLocal, C, barTombs)) kept.add(x)
  }

  // Tombstones may go only once no row they hid is left on disk: wait for every mutation.
  const hosts = [...new Map([...t.barHosts, meta.endpoint].map((ep) => [ep.url, ep])).values()]
  if (!(await mutationsDone(hosts, waitMs))) return { supersededRows, hiddenRows, tombstones: 0, pending: true }
  const open = (
    await meta.rows(
      `SELECT import_id FROM imports WHERE NOT ${C} GROUP BY import_id HAVING countIf(state = 'vacuumed') = 0 ORDER BY import_id LIMIT 1`,
    )
  ).map((r) => BigInt(r[0]!))[0]
  const removable = tombs.filter(
    (x) => (open === undefined || BigInt(x.importId) < open) && !kept.has(x) && !rollsUpItsDays(x),
  )
  if (removable.length)
    await meta.command(
      `ALTER TABLE deletes DELETE WHERE (import_id, seq) IN (${removable.map((x) => version(x.importId, x.seq)).join(', ')})`,
    )
  return { supersededRows, hiddenRows, tombstones: removable.length, pending: false }
}

/**
 * A tombstone of 1m bars stays once the rows it hid are gone: the stored rollups of the days it meets
 * still hold the deleted minutes (each put stores partial rollups of its own minutes), and readers
 * roll those days up from the 1m bars instead only while a 1m tombstone meets them (bar-reads.ts).
 */
const rollsUpItsDays = (x: Tomb) => x.kind === 'bars' && x.period === '1m'

/** Where a live compaction left off: its X, and the imports at or below X it left out. */
export interface LiveMark {
  readonly x: bigint
  readonly others: readonly string[]
}

/**
 * The live tables take a row per pushed symbol and write, and readers take each symbol's newest
 * (live-tables.ts: `argMax` over all of a symbol's rows, so a day of pushes would make every read of
 * them slower): all but the newest go. Considered are the rows of imports at or below X, the newest
 * import visible for at least `graceMs`, leaving out by name the imports at or below X that are not
 * (open, failed, or committed since); of those each symbol's newest row is kept, named by its key in
 * the mutation (literals: 18.16 fails a subquery there). A table whose last removal is unfinished is
 * left for the next run. Returns the rows removed and where this run left off.
 *
 * Given the last run's mark (with the same grace), a run reads only the imports that can have moved
 * since: X only grows, an import old then is old now, and every import at or below the last X was
 * there for the last run to see (X had committed a grace before it, and an import begun later draws
 * an id above every committed one). So the next X is looked for from the last one on, and the
 * imports to leave out among the last run's left-out ones and those above its X.
 */
export async function compactLive(
  meta: Connection,
  graceMs: number,
  last?: LiveMark,
): Promise<{ readonly removed: number; readonly mark: LiveMark | undefined }> {
  const old = `${VISIBLE} AND minIf(at_ms, state = 'committed') <= ${sql.int(Date.now() - graceMs)}`
  const [[x]] = await meta.rows(
    `SELECT max(import_id) FROM (SELECT import_id FROM imports WHERE import_id >= ${sql.int(last?.x ?? 0n)} GROUP BY import_id HAVING ${old})`,
  )
  // None from the last X on: another store now (the tables made again); the next run looks at all.
  if (x === '0') return { removed: 0, mark: undefined }
  const upToX = `import_id <= ${sql.int(x!)}`
  const moved = last
    ? `(import_id > ${sql.int(last.x)} AND ${upToX})${last.others.length ? ` OR import_id IN (${sql.list(last.others.map(sql.int))})` : ''}`
    : upToX
  const others = (
    await meta.rows(`SELECT import_id FROM imports WHERE ${moved} GROUP BY import_id HAVING NOT (${old})`)
  ).map((r) => r[0]!)
  const scope = `${upToX}${others.length ? ` AND import_id NOT IN (${sql.list(others.map(sql.int))})` : ''}`
  let removed = 0
  for (const table of LIVE_VERSIONED_TABLES) {
    const [[unfinished]] = await meta.rows(
      `SELECT count() FROM system.mutations WHERE database = currentDatabase() AND table = ${sql.str(table)} AND is_done = 0`,
    )
    if (unfinished !== '0') continue
    const newest = await meta.rows(
      `SELECT symbol, top.1, top.2, rows FROM (
         SELECT symbol, max((import_id, seq)) AS top, count() AS rows FROM ${table} WHERE ${scope} GROUP BY symbol)`,
    )
    const gone = newest.reduce((n, r) => n + Number(r[3]), 0) - newest.length
    if (gone === 0) continue
    const kept = newest.map(([symbol, id, seq]) => `(${sql.str(symbol!)}, ${sql.int(id!)}, ${sql.int(seq!)})`)
    await meta.command(
      `ALTER TABLE ${table} DELETE WHERE ${scope} AND (symbol, import_id, seq) NOT IN (${kept.join(', ')})`,
    )
    removed += gone
  }
  return { removed, mark: { x: BigInt(x!), others } }
}

/**
 * Series where a committed import's span meets an old import's span: only there can a row be
 * superseded. As `(symbol = .. AND period IN (..) AND ts >= .. AND ts <= ..)` terms, one per series;
 * a 1m series' term names its rollup periods too (two puts of the same minutes store partials of the
 * same stamps, which reads of those days never fold: they roll up the 1m bars where puts overlap).
 */
async function overlappingSeries(meta: Connection, C: string, old: ReadonlySet<string>): Promise<string[]> {
  const spans = new Map<string, { first: number; last: number; id: string }[]>()
  for (const [symbol, period, first, last, id] of await meta.rows(
    `SELECT symbol, period, first_ts, last_ts, import_id FROM series WHERE ${C}`,
  )) {
    const k = `${symbol}\t${period}`
    const list = spans.get(k) ?? []
    list.push({ first: Number(first), last: Number(last), id: id! })
    spans.set(k, list)
  }
  const terms: string[] = []
  for (const [k, list] of spans) {
    let lo = Infinity
    let hi = -Infinity
    for (const a of list) {
      if (!old.has(a.id)) continue
      for (const b of list) {
        if (b === a || Math.max(a.first, b.first) > Math.min(a.last, b.last)) continue
        lo = Math.min(lo, Math.max(a.first, b.first))
        hi = Math.max(hi, Math.min(a.last, b.last))
      }
    }
    const [symbol, period] = k.split('\t')
    const periods = period === '1m' ? [period, ...ROLLUP_PERIODS] : [period]
    if (lo <= hi)
      terms.push(
        `(symbol = ${sql.str(symbol)} AND period IN (${sql.list(periods.map(sql.str))}) AND ts >= ${sql.int(lo)} AND ts <= ${sql.int(hi)})`,
      )
  }
  return terms
}

/**
 * One host's bars: superseded rows as one ts range per (series, import, operation) when the rows it
 * covers are exactly the superseded ones, else as a list of timestamps; hidden rows by the tombstones'
 * own terms. One mutation (`ALTER TABLE ... DELETE WHERE` with literals only: 18.16 fails a mutation
 * that holds a subquery, and a failed mutation blocks every later one on that table).
 */
async function compactBars(
  ep: Endpoint,
  table: string,
  C: string,
  O: string,
  candidates: readonly string[],
  tombs: readonly Tomb[],
): Promise<{ superseded: number; hidden: number }> {
  const c = new Connection(ep, WRITE_TIMEOUT_MS)
  try {
    const terms: string[] = []
    let superseded = 0
    if (candidates.length) {
      const losers = `SELECT symbol, period, ts, v.1 AS id, v.2 AS sq FROM (
          SELECT symbol, period, ts, groupArray((import_id, seq)) AS vs, maxIf((import_id, seq), ${O}) AS top
          FROM ${table} WHERE ${C} AND (${candidates.join(' OR ')}) GROUP BY symbol, period, ts HAVING count() > 1
        ) ARRAY JOIN vs AS v WHERE v < top`
      // Per (series, import, operation): its superseded rows' first and last ts and count, and how many of
      // its rows lie in that range (one join, not a condition per group: a re-import may touch thousands).
      const groups = await c.rows(
        `SELECT symbol, period, id, sq, a, b, c, countIf(ts >= a AND ts <= b) FROM (
           SELECT symbol, period, import_id AS id, seq AS sq, ts FROM ${table} WHERE ${C} AND (${candidates.join(' OR ')})
         ) ANY INNER JOIN (
           SELECT symbol, period, id, sq, min(ts) AS a, max(ts) AS b, count() AS c FROM (${losers}) GROUP BY symbol, period, id, sq
         ) USING (symbol, period, id, sq) GROUP BY symbol, period, id, sq, a, b, c`,
      )
      const series = (g: (string | null)[]) => `symbol = ${sql.str(g[0]!)} AND period = ${sql.str(g[1]!)}`
      const exact = (g: (string | null)[]) =>
        `${series(g)} AND import_id = ${sql.int(g[2]!)} AND seq = ${sql.int(g[3]!)}`
      const ranges = groups.map((g) => `${exact(g)} AND ts >= ${sql.int(g[4]!)} AND ts <= ${sql.int(g[5]!)}`)
      for (let i = 0; i < groups.length; i++) {
        const g = groups[i]
        superseded += Number(g[6])
        if (g[7] === g[6]) terms.push(`(${ranges[i]})`)
        else {
          const ts = (
            await c.rows(
              `SELECT ts FROM (${losers}) WHERE ${series(g)} AND id = ${sql.int(g[2]!)} AND sq = ${sql.int(g[3]!)}`,
            )
          ).map((r) => sql.int(r[0]!))
          terms.push(`(${exact(g)} AND ts IN (${ts.join(', ')}))`)
        }
      }
    }
    let hidden = 0
    if (tombs.length) {
      const hiddenTerm = `(${C} AND (${tombs.map((x) => hides(x, true, true)).join(' OR ')}))`
      // Counted apart from the superseded rows: a row both superseded and hidden counts once, as superseded.
      const notSuperseded = terms.length ? ` AND NOT (${terms.join(' OR ')})` : ''
      hidden = Number((await c.rows(`SELECT count() FROM ${table} WHERE ${hiddenTerm}${notSuperseded}`))[0][0])
      if (hidden) terms.push(hiddenTerm)
    }
    if (terms.length) await c.command(`ALTER TABLE ${table} DELETE WHERE ${terms.join(' OR ')}`)
    return { superseded, hidden }
  } finally {
    await c.close()
  }
}

/** The blob rows a bars tombstone may hide bars of: older than it, their range meeting its. */
function blobsUnder(x: Tomb): string {
  return `(symbol = ${sql.str(x.symbol)} AND period = ${sql.str(x.period)} AND first_ts <= ${sql.int(x.toTs)} AND last_ts >= ${sql.int(x.fromTs)} AND ${hiddenBy(x, null)})`
}

/** A tombstone as readers hold it (metadata.ts), to test rows against. */
const held = (x: Tomb): Tombstone => ({
  fromTs: Number(x.fromTs),
  toTs: Number(x.toTs),
  importId: BigInt(x.importId),
  seq: Number(x.seq),
})

/**
 * One host's blob rows cut to what no committed tombstone hides: one that keeps some bars is written
 * again under its own version with those only, then the whole one is removed (meanwhile a reader that
 * holds the tombstone sees it hide part of the whole one and reads the bars table: blob-reads.ts); one
 * that keeps none is removed. After that no blob holds a bar a tombstone hides, so the tombstones may
 * go; a tombstone over a blob that fails its checksum stays (readers take the bars table there).
 * Returns the tombstones that must stay.
 */
async function cutHiddenBlobs(ep: Endpoint, table: string, C: string, tombs: readonly Tomb[]): Promise<Set<Tomb>> {
  const stay = new Set<Tomb>()
  if (tombs.length === 0) return stay
  const c = new Connection(ep, WRITE_TIMEOUT_MS)
  try {
    const gone: string[] = []
    for (const period of new Set(tombs.map((x) => x.period))) {
      const mine = tombs.filter((x) => x.period === period)
      const exactly = (symbol: string, importId: bigint, seq: number, first: number, last: number, count: number) =>
        `(symbol = ${sql.str(symbol)} AND period = ${sql.str(period)} AND import_id = ${importId} AND seq = ${seq} AND first_ts = ${sql.int(first)} AND last_ts = ${sql.int(last)} AND bars = ${count})`
      // Their spans first (no data): a blob hidden whole goes without being read.
      const spans = await c.rows(
        `SELECT symbol, first_ts, last_ts, bars, import_id, seq FROM ${table}
         WHERE period = ${sql.str(period)} AND ${C} AND (${mine.map(blobsUnder).join(' OR ')})`,
      )
      const partly: string[] = []
      for (const [symbol, first, last, bars, importId, seq] of spans) {
        const v = { importId: BigInt(importId!), seq: Number(seq) }
        const hiding = mine.filter(
          (x) =>
            x.symbol === symbol &&
            Number(x.fromTs) <= Number(last) &&
            Number(first) <= Number(x.toTs) &&
            newer(held(x), v),
        )
        const key = exactly(symbol!, v.importId, v.seq, Number(first), Number(last), Number(bars))
        if (hiding.length === 0) continue
        if (hiding.some((x) => Number(x.fromTs) <= Number(first) && Number(last) <= Number(x.toTs))) gone.push(key)
        else partly.push(key)
      }
      // Then the data of those hidden in part, to cut.
      const rows = partly.length
        ? await c.read(
            `SELECT symbol, first_ts, last_ts, bars, import_id, seq, data FROM ${table} WHERE ${partly.join(' OR ')} FORMAT RowBinary`,
            {},
            decodeBlobRows,
          )
        : []
      for (const row of rows) {
        const hiding = mine.filter((x) => x.symbol === row.symbol && newer(held(x), row))
        let bars: Bars
        try {
          bars = decodeChunk(row.data)
        } catch (err) {
          if (!(err instanceof ChunkCorruptError)) throw err
          for (const x of hiding) stay.add(x)
          continue
        }
        const kept = hiding.reduce((b, x) => withoutRange(b, Number(x.fromTs), Number(x.toTs)), bars)
        const n = barCount(kept)
        if (n === barCount(bars)) continue
        const k = kept.timestamp
        if (n > 0) {
          // Written already by a run that stopped before removing the whole one: not twice.
          const [[there]] = await c.rows(
            `SELECT count() FROM ${table} WHERE ${exactly(row.symbol, row.importId, row.seq, k[0], k[n - 1], n)}`,
          )
          if (there === '0') {
            const body = blobRow(
              row.symbol,
              period as StoredPeriod,
              k[0],
              k[n - 1],
              n,
              encodeChunk(kept),
              row.importId,
              row.seq,
            )
            await c.insert(table, BLOB_COLUMNS, 'RowBinary', body)
          }
        }
        gone.push(exactly(row.symbol, row.importId, row.seq, row.first, row.last, row.bars))
      }
    }
    if (gone.length) await c.command(`ALTER TABLE ${table} DELETE WHERE ${gone.join(' OR ')}`)
    return stay
  } finally {
    await c.close()
  }
}

/** Polls every host until none has an unfinished mutation in the store's database; false at the deadline. */
async function mutationsDone(hosts: readonly Endpoint[], waitMs: number): Promise<boolean> {
  const t0 = Date.now()
  for (const ep of hosts) {
    const c = new Connection(ep)
    try {
      for (;;) {
        const [[n]] = await c.rows(
          'SELECT count() FROM system.mutations WHERE database = currentDatabase() AND is_done = 0',
        )
        if (n === '0') break
        if (Date.now() - t0 > waitMs) return false
        await sleep(100)
      }
    } finally {
      await c.close()
    }
  }
  return true
}
