/** @module The ClickHouse tables (FORMAT.md) and where they live: one server, or bars sharded over a cluster. */
import { MdqError } from '../../domain/errors.js'
import { Connection, Health, PING_TIMEOUT_MS, WRITE_TIMEOUT_MS, sql, type Endpoint } from './connection.js'
import type { ClickHouseConfig } from './config.js'
import { FINANCIAL_TABLES, FINANCIAL_VERSIONED_TABLES } from './financials-schema.js'
import { LIVE_TABLES, LIVE_VERSIONED_TABLES } from './live-tables.js'
import { IMPORT_TABLES_COLUMN, IMPORT_STATE_TYPE } from './import-states.js'
import { INGEST_LOG_TABLE } from './ingest-log.js'
import { PERIOD_ENUM } from './row-binary.js'

/** Every versioned row carries the import that wrote it and its order inside that import. */
const VERSION = 'import_id UInt64, seq UInt32'

export const BAR_COLUMNS = [
  'symbol',
  'period',
  'ts',
  'pscale',
  'open',
  'high',
  'low',
  'close',
  'prev_close',
  'vscale',
  'volume',
  'amount',
  'import_id',
  'seq',
] as const
const BARS = `symbol String, period ${PERIOD_ENUM}, ts Int64,
  pscale UInt8, open Int64, high Int64, low Int64, close Int64, prev_close Int64,
  vscale UInt8, volume Int64, amount Int64, ${VERSION}`
/**
 * Rows a mark of the bars table indexes (ClickHouse's default is 8,192). A read decompresses and
 * scans whole granules of every column it names, and most reads here are small (the newest 100 bars,
 * a window of 1,000 minutes); a whole series costs a little more per granule. At 2,048 a latest-100
 * read costs the server about a fifth less CPU and a pull of whole histories takes an eighth longer
 * (1,024: a third less, a quarter longer; FORMAT.md). The index stays small.
 */
export const BARS_GRANULARITY = 2048
/**
 * Compressed blocks of about a granule of an Int64 column: a read decompresses the blocks its
 * granules are in, 64 KiB to 1 MiB each by default. A table setting on servers that have it
 * (`system.merge_tree_settings`); 18.16 takes these only from the server's profile (FORMAT.md, "Bars").
 */
export const BLOCK_SETTINGS = { min_compress_block_size: 4096, max_compress_block_size: 16384 } as const
/**
 * Parts a merge replaced are kept a minute (ClickHouse's default is 8): long enough for the kernel to
 * have written the merged part (dirty pages go out within about 30 s), so only an OS crash in the
 * first minute after a merge could need them, the trade SQLite's `synchronous = NORMAL` makes; a day
 * of one-minute appends then leaves a minute of replaced parts on disk, not eight.
 */
const BARS_MERGE_TREE = `ENGINE = MergeTree ORDER BY (symbol, period, ts) SETTINGS index_granularity = ${BARS_GRANULARITY}, old_parts_lifetime = 60`

/**
 * Whole puts again, as chunk BLOBs (../chunk-codec.ts) of at most BLOB_BARS bars: a read takes the
 * one or few rows that hold its bars where the bars table would decompress and scan granules of ten
 * columns (FORMAT.md, "Blobs"). A mark per row: a row is a few KB, and a read takes only its own.
 */
const BLOBS = `symbol String, period ${PERIOD_ENUM}, first_ts Int64, last_ts Int64, bars UInt32, data String, ${VERSION}`
export const BLOB_COLUMNS = ['symbol', 'period', 'first_ts', 'last_ts', 'bars', 'data', 'import_id', 'seq'] as const
const BLOBS_MERGE_TREE = 'ENGINE = MergeTree ORDER BY (symbol, period, first_ts) SETTINGS index_granularity = 1'
/** Tables added to the format since stores were first made: a store without them is upgraded on open (clickhouse-backend.ts). */
export const ADDED_TABLES: ReadonlySet<string> = new Set(['blobs', 'blobs_local', 'ingest_log'])
/** Bars per blob row: a read of a range takes whole blobs, so a short range of a long series reads few more. */
export const BLOB_BARS = 4096
/**
 * A put of fewer bars writes no blobs: a blob of a few bars costs a read what their rows cost, and an
 * append of one bar for each of 5,000 symbols would write twice the rows (reads take the bars table
 * from the first such put on: series-index.ts `unblobbedFrom`).
 */
export const BLOB_MIN_BARS = 64

/** Whether a 1m put stored its rollups (1 on other puts): a live put does not (clickhouse-writer.ts). */
const SERIES_ROLLUPS_COLUMN = 'rollups UInt8 DEFAULT 1'
/** Whether the put also wrote its bars to `blobs` (0 on rows from before blobs, on live puts and on puts of fewer than BLOB_MIN_BARS). */
const SERIES_BLOBS_COLUMN = 'blobs UInt8 DEFAULT 0'

/**
 * Per put its span (clickhouse-writer.ts), in the order readers ask for them: every poll reads the
 * rows of the imports that became visible (`import_id IN (...)`), so the table is sorted by import,
 * and a poll reads a few granules however many puts the store has had (a day of live pushes writes
 * millions of rows).
 */
const SERIES_TABLE = `CREATE TABLE IF NOT EXISTS series (symbol String, period Enum8('1m' = 1, '1d' = 2), first_ts Int64, last_ts Int64,
   ${VERSION}, bars UInt32, marks Array(Int64), ${SERIES_ROLLUPS_COLUMN}, ${SERIES_BLOBS_COLUMN}) ENGINE = MergeTree ORDER BY (import_id, seq)`
const SERIES_KEY = 'import_id, seq'

/** Small tables on the metadata server (the single server, or the cluster's first shard). */
const META_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS imports (import_id UInt64, state ${IMPORT_STATE_TYPE}, at_ms Int64, ${IMPORT_TABLES_COLUMN})
   ENGINE = MergeTree ORDER BY import_id`,
  SERIES_TABLE,
  `CREATE TABLE IF NOT EXISTS instruments (symbol String, code String, exchange String, name Nullable(String), type Nullable(String),
   listing_date Nullable(String), tick_size Nullable(Float64), total_shares Nullable(Float64), float_shares Nullable(Float64),
   limit_up Nullable(Float64), limit_down Nullable(Float64), name_en Nullable(String), lot_size Nullable(Float64), ${VERSION})
   ENGINE = MergeTree ORDER BY symbol`,
  `CREATE TABLE IF NOT EXISTS ex_factors (symbol String, ts Int64, ex_factor Float64, ${VERSION}) ENGINE = MergeTree ORDER BY (symbol, ts)`,
  `CREATE TABLE IF NOT EXISTS deletes (kind Enum8('bars' = 1, 'ex_factors' = 2, 'instruments' = 3), symbol String, period String,
   from_ts Int64, to_ts Int64, ${VERSION}) ENGINE = MergeTree ORDER BY (kind, symbol)`,
  `CREATE TABLE IF NOT EXISTS universes (id String, name String, region Nullable(String), category Nullable(String),
   description Nullable(String), symbols Array(String), ${VERSION}) ENGINE = MergeTree ORDER BY id`,
  `CREATE TABLE IF NOT EXISTS api_keys (id UInt32, name String, hash String, created_ms Int64, revoked_ms Nullable(Int64),
   rate_per_min Nullable(Float64), burst Nullable(Float64), ver UInt64, scope String DEFAULT 'read') ENGINE = MergeTree ORDER BY id`,
  ...FINANCIAL_TABLES,
  ...LIVE_TABLES,
  INGEST_LOG_TABLE,
]

/**
 * Columns added to tables of an existing store (neither 18.16 nor ClickHouse's ALTER before 19 takes
 * `ADD COLUMN IF NOT EXISTS`): added where `system.columns` lacks them, in order.
 */
const META_COLUMNS: readonly { readonly table: string; readonly column: string; readonly definition: string }[] = [
  // Scopes: every key made before them reads only.
  { table: 'api_keys', column: 'scope', definition: "scope String DEFAULT 'read'" },
  // Per put its bar count and marks (0 and [] on old rows: readers then estimate bounds from time).
  { table: 'series', column: 'bars', definition: 'bars UInt32' },
  { table: 'series', column: 'marks', definition: 'marks Array(Int64)' },
  // Which polled tables a committed import wrote (all of them on rows from before the mask).
  { table: 'imports', column: 'tables', definition: IMPORT_TABLES_COLUMN },
  // Whether a 1m put stored its rollups (every put before live puts stopped storing them did).
  { table: 'series', column: 'rollups', definition: SERIES_ROLLUPS_COLUMN },
  // Whether a put wrote blobs (no put before blobs did).
  { table: 'series', column: 'blobs', definition: SERIES_BLOBS_COLUMN },
]

/** A series row marks the timestamp of every this-many-th bar of its put, for readers' exact bounds. */
export const MARK_EVERY = 256

/** A `series` row per put: its span, how many bars, and the timestamp of every MARK_EVERY-th (clickhouse-writer.ts). */
export const SERIES_COLUMNS = [
  'symbol',
  'period',
  'first_ts',
  'last_ts',
  'bars',
  'marks',
  'import_id',
  'seq',
  'rollups',
  'blobs',
] as const

/** Versioned tables on the metadata server whose rows an unfinished import may leave behind. */
export const META_VERSIONED_TABLES = [
  'series',
  'instruments',
  'ex_factors',
  'deletes',
  'universes',
  ...FINANCIAL_VERSIONED_TABLES,
  ...LIVE_VERSIONED_TABLES,
] as const

/** The servers a store talks to. */
export interface Topology {
  /** Bars are read and written here (`bars`: MergeTree, or Distributed over `bars_local`). */
  readonly entry: Connection
  /** Imports, instruments, ex-factors, deletes, universes and keys. */
  readonly meta: Connection
  /** Long statements (inserts of bar blocks, ALTERs) to the entry and the metadata server. */
  readonly entryWriter: Connection
  readonly metaWriter: Connection
  /** Every server holding bars: the one server, or each host of the cluster (for DDL and vacuum). */
  readonly barHosts: readonly Endpoint[]
  /** Table the bars of the whole store are in, as the entry sees it; `bars_local` per host in a cluster. */
  readonly barsLocal: string
  /** The same for the blobs: `blobs`, or `blobs_local` per host. */
  readonly blobsLocal: string
  readonly cluster?: string
  /** Pings every server; an outage aborts the requests of every connection above. */
  readonly health: Health
  readonly pingers: readonly Connection[]
}

interface ClusterHost {
  shard_num: number
  replica_num: number
  host_name: string
}

/**
 * Finds the servers: with a cluster, its hosts as the entry server's `system.clusters` lists them,
 * reached over HTTP on the entry's port (every host of a cluster serves HTTP on the same port).
 */
export async function connect(config: ClickHouseConfig): Promise<Topology> {
  const base = { username: config.username, password: config.password }
  const entryEp: Endpoint = { ...base, url: config.url, database: config.database }
  const watched = (hosts: readonly Endpoint[]) => {
    const pingers = [...new Map(hosts.map((ep) => [ep.url, ep])).values()].map(
      (ep) => new Connection(ep, PING_TIMEOUT_MS),
    )
    const health = new Health(pingers)
    return {
      pingers,
      health,
      connection: (ep: Endpoint, timeoutMs?: number) => new Connection(ep, timeoutMs, health),
      writer: (ep: Endpoint) => new Connection(ep, WRITE_TIMEOUT_MS, health, true),
    }
  }
  if (!config.cluster) {
    const { pingers, health, connection, writer: writerOf } = watched([entryEp])
    const entry = connection(entryEp)
    const writer = writerOf(entryEp)
    return {
      entry,
      meta: entry,
      entryWriter: writer,
      metaWriter: writer,
      barHosts: [entryEp],
      barsLocal: 'bars',
      blobsLocal: 'blobs',
      health,
      pingers,
    }
  }
  const probe = new Connection({ ...base, url: config.url })
  let hosts: ClusterHost[]
  try {
    hosts = await probe.json<ClusterHost>(
      `SELECT shard_num, replica_num, host_name FROM system.clusters WHERE cluster = ${sql.str(config.cluster)} ORDER BY shard_num, replica_num`,
    )
  } finally {
    await probe.close()
  }
  if (hosts.length === 0) throw await noSuchCluster(config)
  const port = new URL(config.url).port
  const barHosts = hosts.map((h): Endpoint => ({
    ...base,
    url: `http://${h.host_name.includes(':') ? `[${h.host_name}]` : h.host_name}:${port}`,
    database: config.database,
  }))
  const metaEp = barHosts[0]
  const { pingers, health, connection, writer } = watched([entryEp, ...barHosts])
  return {
    entry: connection(entryEp),
    meta: connection(metaEp),
    entryWriter: writer(entryEp),
    metaWriter: writer(metaEp),
    barHosts,
    barsLocal: 'bars_local',
    blobsLocal: 'blobs_local',
    cluster: config.cluster,
    health,
    pingers,
  }
}

/** A `?cluster=` the entry server does not know: a mistake in the URL or in the servers' config, named with the clusters it does know. */
async function noSuchCluster(config: ClickHouseConfig): Promise<MdqError> {
  const probe = new Connection({ url: config.url, username: config.username, password: config.password })
  try {
    const known = (await probe.rows('SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster')).map((r) => r[0])
    return new MdqError(
      'BAD_PARAM',
      `ClickHouse at ${config.url} has no cluster '${config.cluster}' in its remote_servers config (${known.length ? `its clusters: ${known.join(', ')}` : 'it has none'})`,
    )
  } finally {
    await probe.close()
  }
}

/** The tables of the current schema on one host, each with the statement that creates it. */
interface HostPlan {
  readonly ep: Endpoint
  readonly statements: readonly string[]
}

/** Where every table belongs: the single server, or each host of the cluster (the metadata tables on the first). */
function plan(t: Topology, config: ClickHouseConfig): HostPlan[] {
  if (!t.cluster)
    return [
      {
        ep: t.barHosts[0],
        statements: [
          ...META_TABLES,
          `CREATE TABLE IF NOT EXISTS bars (${BARS}) ${BARS_MERGE_TREE}`,
          `CREATE TABLE IF NOT EXISTS blobs (${BLOBS}) ${BLOBS_MERGE_TREE}`,
        ],
      },
    ]
  // No ZooKeeper, so no ON CLUSTER: every host gets its tables through its own connection. Blobs are
  // sharded as bars are, by symbol.
  const distributed = (table: string, columns: string) =>
    `CREATE TABLE IF NOT EXISTS ${table} (${columns}) ENGINE = Distributed(${t.cluster}, ${config.database}, ${table}_local, cityHash64(symbol))`
  return t.barHosts.map((ep, i) => ({
    ep,
    statements: [
      ...(i === 0 ? META_TABLES : []),
      `CREATE TABLE IF NOT EXISTS bars_local (${BARS}) ${BARS_MERGE_TREE}`,
      distributed('bars', BARS),
      `CREATE TABLE IF NOT EXISTS blobs_local (${BLOBS}) ${BLOBS_MERGE_TREE}`,
      distributed('blobs', BLOBS),
    ],
  }))
}

const tableOf = (statement: string): string => /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(statement)![1]

/** What one host of a store lacks: its database, and the tables of the current schema not there (in creation order). */
export interface HostSchema {
  /** `host:port`, for messages. */
  readonly host: string
  readonly database: boolean
  readonly tables: readonly string[]
  /** What would make the host's small bar reads cheaper that mdq cannot do itself (`mdq migrate` says it). */
  readonly advice?: readonly string[]
}

async function lacking(ep: Endpoint, database: string, statements: readonly string[]): Promise<HostSchema> {
  const admin = new Connection({ url: ep.url, username: ep.username, password: ep.password })
  try {
    const present = new Set(
      (await admin.rows(`SELECT name FROM system.tables WHERE database = ${sql.str(database)}`)).map((r) => r[0]),
    )
    const hasDatabase =
      present.size > 0 ||
      (await admin.rows(`SELECT 1 FROM system.databases WHERE name = ${sql.str(database)}`)).length > 0
    return {
      host: new URL(ep.url).host,
      database: !hasDatabase,
      tables: statements.map(tableOf).filter((name) => !present.has(name)),
    }
  } finally {
    await admin.close()
  }
}

/** What each host lacks of the current schema (nothing anywhere: the store is there, whole). */
export async function missingSchema(t: Topology, config: ClickHouseConfig): Promise<HostSchema[]> {
  return Promise.all(plan(t, config).map((h) => lacking(h.ep, config.database, h.statements)))
}

/**
 * Creates the database and every table where it belongs; idempotent (`CREATE ... IF NOT EXISTS`).
 * Returns what each host lacked before, so what this call created (another process migrating at the
 * same moment may have made some of it).
 */
export async function migrate(t: Topology, config: ClickHouseConfig): Promise<HostSchema[]> {
  const created: HostSchema[] = []
  for (const { ep, statements } of plan(t, config)) {
    const before = await lacking(ep, config.database, statements)
    created.push(before)
    const whole = !before.database && before.tables.length === 0
    // Columns and Enum values added since a table was made go in even when every table is there.
    const admin = new Connection({ url: ep.url, username: ep.username, password: ep.password }, WRITE_TIMEOUT_MS)
    const c = new Connection(ep, WRITE_TIMEOUT_MS)
    try {
      if (ep === t.barHosts[0] && !before.database) await repairSeriesSwap(c, config.database)
      if (!whole) {
        await admin.command(`CREATE DATABASE IF NOT EXISTS ${config.database}`)
        const tuned = await withBlockSettings(admin, statements)
        for (const s of tuned) await c.command(s)
      }
      await upgrade(c, config.database, ep === t.barHosts[0], t.cluster ? ['bars_local', 'bars'] : ['bars'])
    } finally {
      await Promise.all([admin.close(), c.close()])
    }
  }
  return created
}

/**
 * Per bar host, in plan order, what its small reads would gain from: a bars table made before its
 * granules were BARS_GRANULARITY rows, and compressed blocks of 64 KiB and up where the table cannot
 * set its own (18.16: the server's profile).
 */
export async function advice(t: Topology, config: ClickHouseConfig): Promise<string[][]> {
  return Promise.all(
    t.barHosts.map(async (ep) => {
      const c = new Connection({ url: ep.url, username: ep.username, password: ep.password })
      try {
        const lines: string[] = []
        const one = async (query: string) => (await c.rows(query))[0]?.[0] ?? ''
        const engine = await one(
          `SELECT engine_full FROM system.tables WHERE database = ${sql.str(config.database)} AND name = ${sql.str(t.barsLocal)}`,
        )
        const granules = Number(/index_granularity = (\d+)/.exec(engine)?.[1] ?? 8192)
        if (granules !== BARS_GRANULARITY)
          lines.push(
            `its ${t.barsLocal} table has granules of ${granules} rows, a new store's ${BARS_GRANULARITY}: small reads cost the server more (mdq copy into a new database gives the new layout)`,
          )
        const min = Number(await one("SELECT value FROM system.settings WHERE name = 'min_compress_block_size'"))
        if (!engine.includes('min_compress_block_size') && min > 2 * BLOCK_SETTINGS.min_compress_block_size)
          lines.push(
            `it compresses blocks of ${min} bytes and up: min_compress_block_size = ${BLOCK_SETTINGS.min_compress_block_size} and max_compress_block_size = ${BLOCK_SETTINGS.max_compress_block_size} in its default profile cost small reads about a third less of its CPU (docs/design/scaling-out.md)`,
          )
        return lines
      } finally {
        await c.close()
      }
    }),
  )
}

/** The bars table's statement with BLOCK_SETTINGS where the server takes them as table settings. */
async function withBlockSettings(c: Connection, statements: readonly string[]): Promise<readonly string[]> {
  const names = Object.keys(BLOCK_SETTINGS)
  const known = await c.rows(
    `SELECT count() FROM system.merge_tree_settings WHERE name IN (${names.map((n) => sql.str(n)).join(', ')})`,
  )
  if (Number(known[0][0]) !== names.length) return statements
  const extra = Object.entries(BLOCK_SETTINGS)
    .map(([k, v]) => `, ${k} = ${v}`)
    .join('')
  return statements.map((s) => (s.endsWith(BARS_MERGE_TREE) ? s + extra : s))
}

/** META_COLUMNS missing on the metadata server, added; another instance adding one at the same time is no failure. */
async function addMissingColumns(c: Connection, database: string): Promise<void> {
  for (const { table, column, definition } of META_COLUMNS) {
    const has = async () =>
      (
        await c.rows(
          `SELECT count() FROM system.columns WHERE database = ${sql.str(database)} AND table = ${sql.str(table)} AND name = ${sql.str(column)}`,
        )
      )[0][0] === '1'
    if (await has()) continue
    try {
      await c.command(`ALTER TABLE ${table} ADD COLUMN ${definition}`)
    } catch (err) {
      if (!(await has())) throw err
    }
  }
}

/**
 * A store made by an earlier mdq gets what this one adds, each a metadata-only ALTER: the commit
 * protocol's import states and the META_COLUMNS on the metadata server, the rollup periods on every
 * bars table (Enum values added keep the data).
 */
async function upgrade(c: Connection, database: string, meta: boolean, bars: readonly string[]): Promise<void> {
  const type = async (table: string, name: string) =>
    (
      await c.rows(
        `SELECT type FROM system.columns WHERE database = ${sql.str(database)} AND table = ${sql.str(table)} AND name = ${sql.str(name)}`,
      )
    )[0]?.[0] ?? ''
  if (meta) {
    if (!(await type('imports', 'state')).includes("'vacuuming'"))
      await c.command(`ALTER TABLE imports MODIFY COLUMN state ${IMPORT_STATE_TYPE}`)
    await addMissingColumns(c, database)
    await resortSeries(c, database)
  }
  for (const table of bars)
    if (!(await type(table, 'period')).includes("'60m'"))
      await c.command(`ALTER TABLE ${table} MODIFY COLUMN period ${PERIOD_ENUM}`)
}

/** Where a re-sort of `series` keeps the table it replaces until the new one is in its place. */
const SERIES_BEFORE = 'series_before_resort'
const SERIES_RESORTED = 'series_resorted'

/** Which of `series` and the tables a re-sort keeps beside it exist, with their sort keys. */
async function seriesTables(c: Connection, database: string): Promise<Map<string, string>> {
  const rows = await c.rows(
    `SELECT name, sorting_key FROM system.tables WHERE database = ${sql.str(database)} AND name IN ('series', '${SERIES_BEFORE}', '${SERIES_RESORTED}')`,
  )
  return new Map(rows.map(([name, key]) => [name!, key!]))
}

/** Before any table is created: a re-sort that stopped half way (the old table aside, the new one not in place) is undone, so it starts again. */
async function repairSeriesSwap(c: Connection, database: string): Promise<void> {
  const tables = await seriesTables(c, database)
  if (tables.has(SERIES_BEFORE) && !tables.has('series')) await c.command(`RENAME TABLE ${SERIES_BEFORE} TO series`)
}

/**
 * `series` of an earlier store was sorted by `(symbol, period)`, so every poll read the whole table:
 * copied into a table sorted by import (SERIES_TABLE) and swapped in, then the rows written to the old
 * one while it was copied are copied after it.
 */
async function resortSeries(c: Connection, database: string): Promise<void> {
  const tables = await seriesTables(c, database)
  if (tables.get('series') === SERIES_KEY) {
    for (const left of [SERIES_BEFORE, SERIES_RESORTED]) if (tables.has(left)) await c.command(`DROP TABLE ${left}`)
    return
  }
  const columns = SERIES_COLUMNS.join(', ')
  await c.command(`DROP TABLE IF EXISTS ${SERIES_RESORTED}`)
  await c.command(SERIES_TABLE.replace('EXISTS series', `EXISTS ${SERIES_RESORTED}`))
  await c.command(`INSERT INTO ${SERIES_RESORTED} (${columns}) SELECT ${columns} FROM series`)
  await c.command(`RENAME TABLE series TO ${SERIES_BEFORE}, ${SERIES_RESORTED} TO series`)
  await c.command(
    `INSERT INTO series (${columns}) SELECT ${columns} FROM ${SERIES_BEFORE} WHERE import_id NOT IN (SELECT import_id FROM series)`,
  )
  await c.command(`DROP TABLE ${SERIES_BEFORE}`)
}

export async function closeTopology(t: Topology): Promise<void> {
  t.health.stop()
  await Promise.all([...new Set([t.entry, t.meta, t.entryWriter, t.metaWriter, ...t.pingers])].map((c) => c.close()))
}
