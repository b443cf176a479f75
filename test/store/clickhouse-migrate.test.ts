// A store in the earlier ClickHouse format (imports filtered by a list of committed ids, no claim
// states, no stored rollups, series rows without counts or marks) is upgraded in place by `mdq
// migrate` (ClickHouseStores.migrate) or on open, and then answers what a store written in the current
// format answers, before and after new imports, on a real server.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { BAR_FIELDS, barCount, sliceBars, type Bars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import { ROLLUP_PERIODS } from '../../src/domain/rollups.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { ClickHouseStores, parseClickHouseUrl } from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { MarketStore, WriteBatch } from '../../src/store/market-store.js'
import { sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseServer, closeStores } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'

const need = requires(clickhouseServer())

const VERSION = 'import_id UInt64, seq UInt32'
const OLD_PERIOD = "Enum8('1m' = 1, '1d' = 2)"
const OLD_STATE = "Enum8('begun' = 1, 'committed' = 2, 'aborted' = 3, 'vacuumed' = 4)"
/** The tables as the earlier format made them (the tables whose definition is unchanged are copied as they are). */
const OLD_TABLES = [
  `CREATE TABLE imports (import_id UInt64, state ${OLD_STATE}, at_ms Int64) ENGINE = MergeTree ORDER BY import_id`,
  `CREATE TABLE series (symbol String, period ${OLD_PERIOD}, first_ts Int64, last_ts Int64, ${VERSION})
   ENGINE = MergeTree ORDER BY (symbol, period)`,
  `CREATE TABLE bars (symbol String, period ${OLD_PERIOD}, ts Int64, pscale UInt8, open Int64, high Int64, low Int64,
   close Int64, prev_close Int64, vscale UInt8, volume Int64, amount Int64, ${VERSION})
   ENGINE = MergeTree ORDER BY (symbol, period, ts) SETTINGS index_granularity = 8192`,
]
const SAME_TABLES = ['instruments', 'ex_factors', 'deletes', 'universes', 'api_keys']

const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
function assertBytesEqual(actual: Bars, expected: Bars, what: string): void {
  assert.equal(barCount(actual), barCount(expected), `${what}: bar count`)
  for (const f of BAR_FIELDS) assert.ok(bytes(actual[f]).equals(bytes(expected[f])), `${what}: ${f} differs`)
}

type Stores = { market: MarketStore; keys: KeyStore }

describe('clickhouse store of the earlier format', () => {
  let server: ClickHouseServer
  before(async () => {
    if (need.met) server = await ClickHouseServer.start()
  })
  after(() => server?.destroy())

  const sql = async (query: string) => {
    const res = await fetch(`${server.httpUrl}/?query=${encodeURIComponent(query)}`, { method: 'POST' })
    const text = await res.text()
    if (!res.ok) throw new Error(`${query.slice(0, 120)}: ${text}`)
    return text.trim()
  }

  need.it(
    'is upgraded by mdq migrate and answers what the current format answers, before and after new imports',
    async () => {
      const days = tradingDays('SH', 19_500, 6)
      const minutes = sessionMinutes('SH', days)
      const half = Math.floor(minutes.length / 2)
      const daily = walkBars(days, [0.3])
      daily.prevClose.fill(NaN)
      const minute = walkBars(minutes, [0.6, 0.1])
      const written: WriteBatch[] = [
        {
          instruments: [bareInstrument('600000.SH'), bareInstrument('600001.SH')],
          exFactors: [{ symbol: '600000.SH', events: [{ timestamp: days[3], exFactor: 1.25 }] }],
          bars: [{ symbol: '600000.SH', period: '1d', bars: daily }],
        },
        { bars: [{ symbol: '600000.SH', period: '1m', bars: sliceBars(minute, 0, half) }] },
        // A re-import over part of the first and a delete: superseded and hidden rows in the old store.
        { bars: [{ symbol: '600000.SH', period: '1m', bars: walkBars(minutes.slice(half - 50, half + 400), [0.9]) }] },
        { deleteBars: [{ symbol: '600000.SH', period: '1m', fromMs: minutes[100], toMs: minutes[180] }] },
      ]
      const fresh = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('fresh')))
      let old: Stores | undefined
      try {
        for (const b of written) await fresh.market.write(b)
        // An import that never committed: hidden in both.
        const open = await fresh.market.beginWrite()
        await open.putBars('600001.SH', '1d', walkBars(days, [0.5]))

        // The same rows in the earlier format: its tables, its periods (no rollup rows) and its import states.
        await sql('CREATE DATABASE old')
        for (const t of OLD_TABLES) await sql(t.replace('CREATE TABLE ', 'CREATE TABLE old.'))
        for (const t of SAME_TABLES) await sql(`CREATE TABLE old.${t} AS fresh.${t}`)
        const cast = (column: string, type: string) => `CAST(toString(${column}) AS ${type})`
        await sql(
          `INSERT INTO old.bars SELECT symbol, ${cast('period', OLD_PERIOD)}, ts, pscale, open, high, low, close, prev_close,
         vscale, volume, amount, import_id, seq FROM fresh.bars WHERE period IN ('1m', '1d')`,
        )
        await sql(
          `INSERT INTO old.series SELECT symbol, ${cast('period', OLD_PERIOD)}, first_ts, last_ts, import_id, seq FROM fresh.series`,
        )
        await sql(
          `INSERT INTO old.imports SELECT import_id, ${cast('state', OLD_STATE)}, at_ms FROM fresh.imports
         WHERE state IN ('begun', 'committed', 'aborted', 'vacuumed')`,
        )
        for (const t of SAME_TABLES) await sql(`INSERT INTO old.${t} SELECT * FROM fresh.${t}`)
        const rollupRows = () => sql("SELECT count() FROM old.bars WHERE period NOT IN ('1m', '1d')")

        await ClickHouseStores.migrate(parseClickHouseUrl(server.storeUrl('old')))
        const type = (table: string, column: string) =>
          sql(
            `SELECT type FROM system.columns WHERE database = 'old' AND table = '${table}' AND name = '${column}' FORMAT TabSeparatedRaw`,
          )
        assert.match(await type('imports', 'state'), /'vacuuming' = 6/)
        assert.match(await type('bars', 'period'), /'60m' = 7/)
        assert.equal(await type('series', 'marks'), 'Array(Int64)')
        assert.equal(await type('series', 'bars'), 'UInt32')
        assert.equal(await type('series', 'rollups'), 'UInt8')
        assert.equal(await sql('SELECT min(rollups) FROM old.series'), '1', 'every old put stored its rollups')
        assert.equal(await sql('SELECT max(blobs) FROM old.series'), '0', 'no old put wrote blobs')
        assert.equal(await sql('SELECT count() FROM old.blobs'), '0', 'the upgrade adds an empty blobs table')
        assert.equal(await rollupRows(), '0', 'the upgrade rewrites no bars')
        const sortingKey = (table: string) =>
          sql(
            `SELECT sorting_key FROM system.tables WHERE database = 'old' AND name = '${table}' FORMAT TabSeparatedRaw`,
          )
        assert.equal(await sortingKey('series'), 'import_id, seq', 'series re-sorted for the polls')
        assert.equal(
          await sql('SELECT count() FROM old.series'),
          await sql('SELECT count() FROM fresh.series'),
          'every span copied once',
        )
        assert.equal(
          await sql("SELECT count() FROM system.tables WHERE database = 'old' AND name LIKE 'series_%'"),
          '0',
        )

        old = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('old')))
        const compare = async (when: string) => {
          const [a, b] = [new SymbolContexts(old!.market), new SymbolContexts(fresh.market)]
          for (const symbol of ['600000.SH', '600001.SH'])
            for (const period of ['1d', '1m', ...ROLLUP_PERIODS] as const)
              for (const adjust of ADJUSTS)
                for (const window of [
                  {},
                  { endTime: minutes[half + 30] },
                  { startTime: minutes[90], endTime: minutes[700] },
                ]) {
                  const q = { symbol, period, adjust, count: 5000, ...window }
                  assertBytesEqual(
                    await readKlines(old!.market, a, q),
                    await readKlines(fresh.market, b, q),
                    `${when}: ${JSON.stringify(q)}`,
                  )
                }
          assert.deepEqual(
            await old!.market.readInstruments(['600000.SH', '600001.SH']),
            await fresh.market.readInstruments(['600000.SH', '600001.SH']),
          )
          assert.deepEqual(
            await old!.market.readExFactors(['600000.SH']),
            await fresh.market.readExFactors(['600000.SH']),
          )
        }
        await compare('as upgraded')
        assert.ok(
          barCount(await old.market.readBars({ symbol: '600000.SH', period: '1m', limit: 100_000 })) > 0,
          'the old 1m bars are read',
        )

        // New imports into both: the old store's new puts store their rollups beside the old 1m bars.
        const later: WriteBatch[] = [
          { bars: [{ symbol: '600000.SH', period: '1m', bars: sliceBars(minute, half + 400, minutes.length) }] },
          {
            deleteBars: [{ symbol: '600000.SH', period: '1m', fromMs: minutes[half + 500], toMs: minutes[half + 520] }],
            bars: [{ symbol: '600000.SH', period: '1m', bars: walkBars(minutes.slice(half + 500, half + 510), [0.2]) }],
          },
        ]
        for (const b of later) {
          await old.market.write(b)
          await fresh.market.write(b)
        }
        assert.notEqual(await rollupRows(), '0', 'new puts store their rollups')
        await compare('after new imports')
        await open.rollback()
      } finally {
        await closeStores(old)
        await closeStores(fresh)
      }
    },
  )

  need.it('finishes a re-sort of series that stopped half way, every span kept once', async () => {
    const days = tradingDays('SH', 19_500, 40)
    const first = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('half')))
    try {
      for (const symbol of ['600000.SH', '600001.SH', '600002.SH'])
        await first.market.write({ bars: [{ symbol, period: '1d', bars: walkBars(days, [0.4]) }] })
    } finally {
      await closeStores(first)
    }
    const spans = await sql('SELECT count() FROM half.series')
    // Stopped after the old table was renamed away and part of the copy made: no `series` at all.
    await sql(`CREATE TABLE half.series_before_resort AS half.series ENGINE = MergeTree ORDER BY (symbol, period)`)
    await sql('INSERT INTO half.series_before_resort SELECT * FROM half.series')
    await sql('RENAME TABLE half.series TO half.series_resorted')
    await sql("ALTER TABLE half.series_resorted DELETE WHERE symbol != '600000.SH'")

    await ClickHouseStores.migrate(parseClickHouseUrl(server.storeUrl('half')))
    assert.equal(await sql('SELECT count() FROM half.series'), spans)
    assert.equal(
      await sql(
        "SELECT sorting_key FROM system.tables WHERE database = 'half' AND name = 'series' FORMAT TabSeparatedRaw",
      ),
      'import_id, seq',
    )
    assert.equal(await sql("SELECT count() FROM system.tables WHERE database = 'half' AND name LIKE 'series_%'"), '0')
    const reopened = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('half')))
    try {
      assert.equal(barCount(await reopened.market.readBars({ symbol: '600002.SH', period: '1d', limit: 1000 })), 40)
    } finally {
      await closeStores(reopened)
    }
  })

  need.it('a store from before live puts gets the rollups flag, its spans read as having stored rollups', async () => {
    const url = parseClickHouseUrl(server.storeUrl('prev'))
    const symbol = '600000.SH'
    const first = await ClickHouseStores.open(url)
    let before: Bars
    try {
      await first.market.write({
        bars: [{ symbol, period: '1m', bars: walkBars(sessionMinutes('SH', tradingDays('SH', 19_500, 2)), [0.3]) }],
      })
      before = await first.market.readBars({ symbol, period: '60m', limit: 100 })
    } finally {
      await closeStores(first)
    }
    const spans = await sql('SELECT count() FROM prev.series')
    await sql('ALTER TABLE prev.series DROP COLUMN rollups')

    await ClickHouseStores.migrate(url)
    assert.equal(await sql('SELECT count() FROM prev.series'), spans)
    assert.equal(await sql('SELECT min(rollups) FROM prev.series'), '1')
    const reopened = await ClickHouseStores.open(url)
    try {
      const after = await reopened.market.readBars({ symbol, period: '60m', limit: 100 })
      assert.equal(barCount(after), 8)
      for (const f of BAR_FIELDS) assert.deepEqual(after[f], before[f], f)
    } finally {
      await closeStores(reopened)
    }
  })
})
