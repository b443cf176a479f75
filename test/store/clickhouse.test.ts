// ClickHouse specifics on real servers: SIGKILL of an import at random points, vacuum, live visibility
// across instances, failure and recovery, and one shard per symbol on a two-shard cluster.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, type Bars } from '../../src/domain/bars.js'
import { MdqError } from '../../src/domain/errors.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import {
  ClickHouseStores,
  parseClickHouseUrl,
  type ClickHouseMarketStore,
} from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import { Connection, Health, READ_TIMEOUT_MS } from '../../src/store/clickhouse/connection.js'
import { beginImport } from '../../src/store/clickhouse/import-states.js'
import { BARS_GRANULARITY } from '../../src/store/clickhouse/schema.js'
import { walkBars } from '../helpers/arbitraries.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { ClickHouseCluster, ClickHouseServer, closeStores } from '../helpers/clickhouse.js'
import { KILL_BARS, KILL_SYMBOLS, generationBars, generationOf } from '../helpers/kill-data.js'

const need = requires(clickhouseServer())
const CHILD = fileURLToPath(new URL('../helpers/clickhouse-import-child.js', import.meta.url))

async function poll<T>(what: string, get: () => Promise<T | undefined>, deadlineMs = 30_000): Promise<T> {
  const t0 = Date.now()
  for (;;) {
    const v = await get().catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() - t0 > deadlineMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

async function httpQuery(base: string, query: string): Promise<string> {
  const res = await fetch(`${base}/?query=${encodeURIComponent(query)}`)
  const text = await res.text()
  if (!res.ok) throw new Error(text)
  return text
}

/** A statement that writes (GET queries are read-only on the server). */
async function httpCommand(base: string, statement: string): Promise<void> {
  const res = await fetch(`${base}/`, { method: 'POST', body: statement })
  if (!res.ok) throw new Error(await res.text())
}

const open = (url: string) => ClickHouseStores.open(parseClickHouseUrl(url))

describe('clickhouse store on one server', () => {
  let server: ClickHouseServer
  let a: { market: ClickHouseMarketStore; keys: KeyStore }
  let b: { market: ClickHouseMarketStore; keys: KeyStore }
  before(async () => {
    if (!need.met) return
    server = await ClickHouseServer.start()
    a = await open(server.storeUrl('mdq'))
    b = await open(server.storeUrl('mdq'))
  })
  after(async () => {
    await closeStores(a, b)
    await server?.destroy()
  })

  need.it(
    'SIGKILL of an import at 10 random points: every answer is all old or all new data, never a mix; vacuum removes what is left',
    async () => {
      const url = server.storeUrl('mdq')
      await a.market.write({
        bars: KILL_SYMBOLS.map((symbol) => ({ symbol, period: '1m' as const, bars: generationBars(1) })),
      })
      const readAll = async (market: ClickHouseMarketStore = b.market) => {
        const gens: (number | string)[] = []
        for (const s of KILL_SYMBOLS)
          gens.push(generationOf(await market.readBars({ symbol: s, period: '1m', limit: KILL_BARS })))
        return gens
      }
      // A store opened after the kill loads one snapshot before its first read, so it sees every symbol at
      // one generation. (b's snapshot is polled, so a commit that lands during one pass of b's reads may
      // show the symbols read before the poll at the old generation and the rest at the new one.)
      const readAllFresh = async () => {
        const fresh = await open(url)
        try {
          return await readAll(fresh.market)
        } finally {
          await fresh.keys.close()
          await fresh.market.close()
        }
      }
      // One undisturbed import first: how long one takes, so the kill points spread over all of it.
      const t0 = Date.now()
      const full = spawn(process.execPath, [CHILD, url, '2'], { stdio: ['ignore', 'pipe', 'inherit'] })
      const [code] = (await once(full, 'exit')) as [number]
      assert.equal(code, 0)
      const duration = Date.now() - t0
      let committed = 2
      await poll('generation 2 on the other instance', async () =>
        (await readAll()).every((g) => g === 2) ? true : undefined,
      )
      const seen = new Set<string>()
      let killedBeforeCommit = 0
      for (let round = 0; round < 10; round++) {
        const gen = committed + 1
        const child = spawn(process.execPath, [CHILD, url, String(gen)], { stdio: ['ignore', 'pipe', 'inherit'] })
        let out = ''
        child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
        const exited = once(child, 'exit')
        let reading = true
        const readers = (async () => {
          while (reading) {
            for (const g of await readAll()) {
              assert.ok(
                g === committed || g === gen,
                `round ${round}: a reader saw ${g} while the store held ${committed} or ${gen}`,
              )
              seen.add(String(g === gen ? 'new' : 'old'))
            }
          }
        })()
        await sleep(Math.random() * duration * 1.1)
        child.kill('SIGKILL')
        await exited
        reading = false
        await readers
        const after = await readAllFresh()
        const done = out.includes('committed')
        // Killed after the commit row went in but before it printed: the import is whole, so also fine.
        const now = after[0]
        assert.ok(now === committed || now === gen, `round ${round}: after the kill the store holds ${now}`)
        assert.ok(
          after.every((g) => g === now),
          `round ${round}: symbols disagree after the kill: ${after.join(', ')}`,
        )
        if (done) assert.equal(now, gen)
        await poll(`round ${round}: the other instance to reach generation ${now}`, async () =>
          (await readAll()).every((g) => g === now) ? true : undefined,
        )
        if (now === gen) committed = gen
        else killedBeforeCommit++
      }
      assert.ok(seen.has('old'))
      // Kill points spread over the whole import: some must have landed before its commit.
      assert.ok(killedBeforeCommit >= 1, 'every kill came after the commit; the test proved nothing')
      // The killed imports' rows are on disk, invisible; vacuum (no grace: every writer here is dead) removes them.
      const uncommitted = `SELECT count() FROM mdq.bars WHERE import_id NOT IN (SELECT import_id FROM mdq.imports WHERE state = 'committed')`
      // One killed between its `committing` and `committed` rows is removed once its claim is MIN_GRACE_MS old.
      await poll(
        'vacuum to remove the rows of killed imports',
        async () => {
          await a.market.vacuum({ graceMs: 0 })
          return (await httpQuery(server.httpUrl, uncommitted)).trim() === '0' ? true : undefined
        },
        60_000,
      )
      assert.deepEqual(
        await readAll(),
        KILL_SYMBOLS.map(() => committed),
      )
    },
  )

  need.it(
    'floats round-trip exactly (18.16 parses 7.956 from text as 7.9559999999999995, so none go as text)',
    async () => {
      const odd = [7.956, 0.1 + 0.2, 1 / 3, 123456.789012345, 5e-324]
      await a.market.write({
        instruments: [
          bareInstrument('000048.SZ', {
            tickSize: odd[0],
            limitDown: odd[1],
            limitUp: odd[2],
            totalShares: odd[3],
            floatShares: odd[4],
          }),
        ],
        exFactors: [
          { symbol: '000048.SZ', events: odd.map((f, i) => ({ timestamp: Date.UTC(2020, 0, 1 + i), exFactor: f })) },
        ],
      })
      const [i] = await a.market.readInstruments(['000048.SZ'])
      assert.deepEqual([i.tickSize, i.limitDown, i.limitUp, i.totalShares, i.floatShares], odd)
      assert.deepEqual(
        (await a.market.readExFactors(['000048.SZ'])).get('000048.SZ')!.map((e) => e.exFactor),
        odd,
      )
      const k = await a.keys.createKey({ name: 'odd', hash: 'ef'.repeat(32), ratePerMin: odd[0], burst: odd[2] })
      assert.deepEqual(
        [(await b.keys.findKey(k.hash))?.ratePerMin, (await b.keys.findKey(k.hash))?.burst],
        [odd[0], odd[2]],
      )
    },
  )

  need.it(
    'universes and instrument listing: a put replaces a universe as a whole; symbols ascending, filtered',
    async () => {
      await a.market.write({
        instruments: [
          bareInstrument('600036.SH', { type: 'stock' }),
          bareInstrument('510300.SH', { type: 'etf' }),
          bareInstrument('AAPL.US', { type: 'stock' }),
        ],
      })
      assert.deepEqual(
        (await a.market.listInstruments({ exchange: 'SH' })).map((i) => i.symbol),
        ['510300.SH', '600036.SH'],
      )
      assert.deepEqual(
        (await a.market.listInstruments({ type: 'stock' })).map((i) => i.symbol),
        ['600036.SH', 'AAPL.US'],
      )
      const w = await a.market.beginWrite()
      await w.putUniverses([
        {
          id: 'mine',
          name: 'Mine',
          region: 'CN',
          category: 'equity',
          description: "a 'quoted'\tlist",
          symbols: ['600036.SH', '510300.SH'],
        },
        { id: 'other', name: 'Other', region: null, category: null, description: null, symbols: [] },
      ])
      await w.commit()
      const w2 = await a.market.beginWrite()
      await w2.putUniverses([
        { id: 'mine', name: 'Mine 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] },
      ])
      await w2.commit()
      assert.deepEqual(await a.market.readUniverses(), [
        { id: 'mine', name: 'Mine 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] },
        { id: 'other', name: 'Other', region: null, category: null, description: null, symbols: [] },
      ])
    },
  )

  need.it(
    'forty requests in flight on one connection warn of no listener leak (each listens for an outage)',
    async () => {
      const c = new Connection(
        { url: server.httpUrl, username: 'default', password: '' },
        READ_TIMEOUT_MS,
        new Health([]),
      )
      const warnings: string[] = []
      const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`)
      process.on('warning', onWarning)
      try {
        const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.rows(`SELECT ${i}`)))
        assert.deepEqual(
          answers.map(([[v]]) => v),
          Array.from({ length: 40 }, (_, i) => String(i)),
        )
        await sleep(20) // warnings are emitted on a later tick
      } finally {
        process.off('warning', onWarning)
      }
      assert.deepEqual(warnings, [])
    },
  )

  need.it(
    'a read whose answer the server breaks off with an exception fails with its message, never as rows; the connection reads on',
    async () => {
      const c = server.connection()
      try {
        // Small blocks: the first rows go out (status 200 sent) before throwIf fails a later block.
        const query = 'SELECT number, throwIf(number = 300000) FROM system.numbers LIMIT 400000 FORMAT RowBinary'
        const decoded: number[] = []
        await assert.rejects(
          c.read(query, { max_block_size: 1000 }, (answer) => decoded.push(answer.length)),
          (err: Error) => /DB::Exception/.test(err.message) && /throwIf/.test(err.message),
        )
        assert.deepEqual(decoded, [])
        assert.equal(await c.read('SELECT toUInt8(7) FORMAT RowBinary', {}, (answer) => answer[0]), 7)
      } finally {
        await c.close()
      }
    },
  )

  need.it('an import or a key change through one instance is seen by another (polled, no restart)', async () => {
    await a.market.write({
      instruments: [bareInstrument('000001.SZ', { name: 'Ping An' })],
      bars: [{ symbol: '000001.SZ', period: '1d', bars: walkBars([Date.UTC(2024, 0, 2)], [0.3]) }],
    })
    const version = await a.market.dataVersion()
    await poll('the other instance to see the import', async () =>
      (await b.market.dataVersion()) === version ? true : undefined,
    )
    assert.equal(barCount(await b.market.readBars({ symbol: '000001.SZ', period: '1d', limit: 10 })), 1)
    assert.equal((await b.market.readInstruments(['000001.SZ']))[0].name, 'Ping An')
    const k = await a.keys.createKey({ name: 'live', hash: 'cd'.repeat(32) })
    const keysVersion = await a.keys.keysVersion()
    await poll('the other instance to see the key', async () =>
      (await b.keys.keysVersion()) === keysVersion ? true : undefined,
    )
    assert.equal((await b.keys.findKey(k.hash))?.revokedMs, null)
    await a.keys.revokeKey(k.id)
    assert.ok((await b.keys.findKey(k.hash))?.revokedMs)
  })

  need.it(
    "symbol versions: a symbol's moves with its bars (an import committed below a newer one too) and with any import of more than bars, never with another's; an instance opened later agrees",
    async () => {
      const [x, y, z] = ['600101.SH', '600102.SH', '600103.SH']
      const days = (from: number, n: number) =>
        walkBars(
          Array.from({ length: n }, (_, i) => Date.UTC(2024, 1, 1 + from + i)),
          Array.from({ length: n }, () => 0.1),
        )
      const versionsOn = async (m: ClickHouseMarketStore) => {
        const v = await m.readVersions()
        return [v.data, v.of(x), v.of(y), v.of(z)]
      }
      /** Each instance's versions once all read the same data (the committing one first, the others at their next poll); they must agree. */
      const agreed = async (...others: ClickHouseMarketStore[]) => {
        await poll('every instance to read the same data', async () => {
          const data = await Promise.all([a.market, ...others].map((m) => m.dataVersion()))
          return data.every((d) => d === data[0]) ? true : undefined
        })
        const want = await versionsOn(a.market)
        for (const m of others) assert.deepEqual(await versionsOn(m), want)
        return want
      }
      await a.market.write({
        instruments: [x, y, z].map((s) => bareInstrument(s)),
        bars: [x, y].map((symbol) => ({ symbol, period: '1d' as const, bars: days(0, 3) })),
      })
      const first = await agreed(b.market)
      await a.market.write({ bars: [{ symbol: x, period: '1d', bars: days(3, 1) }] })
      const appended = await agreed(b.market)
      assert.notEqual(appended[0], first[0])
      assert.notEqual(appended[1], first[1], 'x was appended to')
      assert.deepEqual(appended.slice(2), first.slice(2), 'y and z were not')
      // An import begun first (a lower id) and committed after a newer one that wrote the same symbol.
      const older = await b.market.beginWrite()
      await older.putBars(y, '1d', days(3, 1))
      await a.market.write({ bars: [{ symbol: y, period: '1d', bars: days(4, 1) }] })
      const newer = await agreed(b.market)
      await older.commit()
      const late = await agreed(b.market)
      assert.notEqual(late[2], newer[2], "y's version moves with the import committed below the newest")
      assert.deepEqual([late[1], late[3]], [newer[1], newer[3]], "x's and z's do not")
      assert.equal(barCount(await a.market.readBars({ symbol: y, period: '1d', limit: 10 })), 5)
      // Live data without bars (depth; quotes that traded nothing): the data version moves, no symbol's.
      const depth = await a.market.beginWrite()
      await depth.putDepth([
        {
          symbol: z,
          timestamp: Date.UTC(2024, 1, 9),
          bidPrices: [10],
          bidVolumes: [100],
          askPrices: [10.01],
          askVolumes: [200],
        },
      ])
      await depth.commit()
      const pushed = await agreed(b.market)
      assert.notEqual(pushed[0], late[0])
      assert.deepEqual(pushed.slice(1), late.slice(1))
      // An instance opened now, from the first load alone, names every version as the polling ones do.
      const c = await open(server.storeUrl('mdq'))
      try {
        assert.deepEqual(await versionsOn(c.market), pushed)
        // An instrument (as events, tombstones and universes) moves every symbol's, on every instance.
        await a.market.write({ instruments: [bareInstrument(z, { name: 'renamed' })] })
        const renamed = await agreed(b.market, c.market)
        for (const k of [1, 2, 3]) assert.notEqual(renamed[k], pushed[k])
      } finally {
        await c.keys.close()
        await c.market.close()
      }
    },
  )

  need.it(
    "a commit row names the polled tables its import wrote; another instance reloads them, and all of a commit row's from before the mask",
    async () => {
      const newest = async () =>
        (
          await httpQuery(
            server.httpUrl,
            "SELECT tables FROM mdq.imports WHERE state = 'committed' ORDER BY import_id DESC LIMIT 1",
          )
        ).trim()
      await a.market.write({
        bars: [{ symbol: '600301.SH', period: '1m', bars: walkBars([Date.UTC(2024, 0, 2, 1, 30)], [0.2]) }],
      })
      assert.equal(await newest(), '1', 'bars: their series rows alone')
      await a.market.write({ instruments: [bareInstrument('600301.SH', { name: 'Masked' })] })
      assert.equal(await newest(), '2', 'instruments alone')
      await poll('the other instance to see both', async () =>
        (await b.market.readInstruments(['600301.SH']))[0]?.name === 'Masked' &&
        barCount(await b.market.readBars({ symbol: '600301.SH', period: '1m', limit: 5 })) === 1
          ? true
          : undefined,
      )
      // An mdq from before the mask commits without naming tables: its rows must all be reloaded.
      const [[max]] = (await httpQuery(server.httpUrl, 'SELECT max(import_id) FROM mdq.imports'))
        .trim()
        .split('\n')
        .map((l) => l.split('\t'))
      const id = (BigInt(max) + 1000n).toString()
      await httpCommand(
        server.httpUrl,
        `INSERT INTO mdq.instruments (symbol, code, exchange, name, import_id, seq) VALUES ('600302.SH', '600302', 'SH', 'Old writer', ${id}, 1)`,
      )
      await httpCommand(
        server.httpUrl,
        `INSERT INTO mdq.imports (import_id, state, at_ms) VALUES (${id}, 'begun', 0), (${id}, 'committed', 0)`,
      )
      await poll("the other instance to see the old writer's instrument", async () =>
        (await b.market.readInstruments(['600302.SH']))[0]?.name === 'Old writer' ? true : undefined,
      )
    },
  )

  need.it('a live minute for many symbols goes in as one INSERT: one new part of bars, no mutation', async () => {
    const live = await open(server.storeUrl('live_parts'))
    try {
      // Merges stopped: every INSERT's part stays countable.
      await httpCommand(server.httpUrl, 'SYSTEM STOP MERGES live_parts.bars')
      const parts = async () =>
        Number(
          await httpQuery(
            server.httpUrl,
            "SELECT count() FROM system.parts WHERE database = 'live_parts' AND table = 'bars' AND active",
          ),
        )
      const mutations = () =>
        httpQuery(server.httpUrl, "SELECT count() FROM system.mutations WHERE database = 'live_parts'")
      const symbols = Array.from({ length: 300 }, (_, i) => `${600000 + i}.SH`)
      const minute = Date.UTC(2024, 0, 2, 1, 31)
      const w = await live.market.beginWrite()
      for (const [i, symbol] of symbols.entries()) {
        await w.putBars(symbol, '1m', walkBars([minute - 60_000, minute], [i / 300]))
        await w.putBars(symbol, '1d', walkBars([Date.UTC(2024, 0, 1, 16)], [i / 300]))
      }
      await w.commit()
      assert.equal(await parts(), 1)
      assert.equal(Number(await mutations()), 0)
      for (const i of [0, 299]) {
        const read = await live.market.readBars({ symbol: symbols[i], period: '1m', limit: 10 })
        assert.deepEqual([...read.timestamp], [minute - 60_000, minute])
        assert.deepEqual([...read.close], [...walkBars([minute - 60_000, minute], [i / 300]).close])
      }
    } finally {
      await Promise.all([live.keys.close(), live.market.close()])
    }
  })

  need.it(
    'reads sent together answer what each asked: whole series by symbol, ranges of one series, two periods, deleted bars',
    async () => {
      const store = await open(server.storeUrl('together'))
      try {
        const DAY = 86_400_000
        // Daily series of different lengths (their first bars differ), a 1m series, and bars deleted from one.
        const symbols = Array.from({ length: 40 }, (_, i) => `${600100 + i}.SH`)
        const daysOf = (i: number) =>
          Array.from({ length: 200 + 7 * i }, (_, k) => Date.UTC(2020, 0, 1) + (k - 7 * i) * DAY)
        const minutes = Array.from({ length: 300 }, (_, k) => Date.UTC(2024, 0, 2, 1, 30) + k * 60_000)
        const daily = symbols.map((_, i) => walkBars(daysOf(i), [i / 40, 0.3, 0.7]))
        const minute = walkBars(minutes, [0.2, 0.9])
        await store.market.write({
          bars: [
            ...symbols.map((symbol, i) => ({ symbol, period: '1d' as const, bars: daily[i] })),
            { symbol: symbols[0], period: '1m' as const, bars: minute },
          ],
        })
        const hole = { from: daysOf(1)[50], to: daysOf(1)[59] }
        await store.market.write({
          deleteBars: [{ symbol: symbols[1], period: '1d', fromMs: hole.from, toMs: hole.to }],
        })
        // All in one turn: the store sends them together.
        const [wholes, windows, latest, minuteWindow] = await Promise.all([
          Promise.all(symbols.map((symbol) => store.market.readBars({ symbol, period: '1d', limit: 100_000 }))),
          Promise.all(
            symbols.map((symbol, i) =>
              store.market.readBars({ symbol, period: '1d', fromMs: daysOf(i)[10], toMs: daysOf(i)[19], limit: 100 }),
            ),
          ),
          store.market.readBars({ symbol: symbols[1], period: '1d', toMs: hole.to, limit: 5 }),
          store.market.readBars({
            symbol: symbols[0],
            period: '1m',
            fromMs: minutes[100],
            toMs: minutes[149],
            limit: 1000,
          }),
        ])
        const kept = (i: number) => daysOf(i).filter((t) => i !== 1 || t < hole.from || t > hole.to)
        for (const [i, bars] of wholes.entries()) {
          assert.deepEqual([...bars.timestamp], kept(i), `${symbols[i]}: whole series`)
          const at = kept(i).map((t) => daysOf(i).indexOf(t))
          assert.deepEqual(
            [...bars.close],
            at.map((k) => daily[i].close[k]),
            `${symbols[i]}: closes`,
          )
          assert.deepEqual(
            [...bars.volume],
            at.map((k) => daily[i].volume[k]),
            `${symbols[i]}: volumes`,
          )
        }
        for (const [i, bars] of windows.entries()) {
          assert.deepEqual([...bars.timestamp], daysOf(i).slice(10, 20), `${symbols[i]}: window`)
          assert.deepEqual([...bars.open], [...daily[i].open.slice(10, 20)], `${symbols[i]}: window opens`)
        }
        assert.deepEqual([...latest.timestamp], daysOf(1).slice(45, 50), 'the 5 bars before the deleted ones')
        assert.deepEqual([...minuteWindow.timestamp], minutes.slice(100, 150))
        assert.deepEqual([...minuteWindow.high], [...minute.high.slice(100, 150)])
      } finally {
        await Promise.all([store.keys.close(), store.market.close()])
      }
    },
  )

  need.it("a store's api_keys from before scopes gains the scope column on open; its keys read only", async () => {
    await httpCommand(server.httpUrl, 'CREATE DATABASE IF NOT EXISTS old_keys')
    await httpCommand(
      server.httpUrl,
      'CREATE TABLE old_keys.api_keys (id UInt32, name String, hash String, created_ms Int64, revoked_ms Nullable(Int64), rate_per_min Nullable(Float64), burst Nullable(Float64), ver UInt64) ENGINE = MergeTree ORDER BY id',
    )
    await httpCommand(
      server.httpUrl,
      `INSERT INTO old_keys.api_keys VALUES (5, 'old', '${'ee'.repeat(32)}', 1000, NULL, NULL, NULL, 1)`,
    )
    // Two instances opening at once: one adds the column, the other finds it added.
    const [x, y] = await Promise.all([open(server.storeUrl('old_keys')), open(server.storeUrl('old_keys'))])
    try {
      assert.equal((await x.keys.findKey('ee'.repeat(32)))?.scope, 'read')
      const made = await y.keys.createKey({ name: 'feed', hash: 'ef'.repeat(32), scope: 'ingest' })
      assert.equal((await y.keys.findKey(made.hash))?.scope, 'ingest')
    } finally {
      for (const s of [x, y]) await Promise.all([s.keys.close(), s.market.close()])
    }
  })

  need.it(
    'a frozen or stopped server: calls reject with STORE_UNAVAILABLE, never hang; the store recovers by itself',
    async () => {
      const q = { symbol: '000001.SZ', period: '1d' as const, limit: 10 }
      const rejects = async (what: string, call: () => Promise<unknown>) => {
        const t0 = Date.now()
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        )
        assert.ok(err instanceof MdqError && err.code === 'STORE_UNAVAILABLE', `${what}: ${String(err)}`)
        return Date.now() - t0
      }
      await server.pause(true)
      try {
        const took = await rejects('read from a frozen server', () => b.market.readBars(q))
        // Bounded by the health pings (every 250 ms, 1.5 s timeout); printed, not gated (a loaded machine varies).
        console.log(`frozen server: readBars rejected after ${took} ms`)
        await rejects('check on a frozen server', () => b.market.check())
        await rejects('keysVersion on a frozen server', () => b.keys.keysVersion())
        await poll(
          'dataVersion to report the outage',
          async () =>
            await b.market.dataVersion().then(
              () => undefined,
              (e: unknown) => (e instanceof MdqError ? e : undefined),
            ),
        )
        // Instruments and events are held in memory: answered until the pings notice the outage, then refused.
        await rejects('instruments held in memory, once the outage is known', () =>
          b.market.readInstruments([q.symbol]),
        )
      } finally {
        await server.pause(false)
      }
      await poll('recovery after thaw', async () => barCount(await b.market.readBars(q)))
      await server.stop()
      await rejects('read from a stopped server', () => b.market.readBars(q))
      await rejects('key lookup on a stopped server', () => b.keys.findKey('cd'.repeat(32)))
      await server.start()
      await poll('recovery after restart', async () => barCount(await b.market.readBars(q)))
      await poll('dataVersion after restart', () => b.market.dataVersion())
    },
  )
})

describe('clickhouse store on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  before(async () => {
    if (need.met) cluster = await ClickHouseCluster.start()
  })
  after(() => cluster?.destroy())

  need.it("creates its tables on every shard and puts each symbol's bars on one shard", async () => {
    const { market, keys } = await open(cluster.storeUrl('sharded'))
    try {
      assert.equal(market.capabilities.distributed, true)
      const symbols = Array.from({ length: 24 }, (_, i) => `${String(600000 + i)}.SH`)
      const bars = walkBars(
        Array.from({ length: 50 }, (_, i) => Date.UTC(2024, 0, 2 + i)),
        [0.2],
      )
      await market.write({ bars: symbols.map((symbol) => ({ symbol, period: '1d' as const, bars })) })
      const perShard = await Promise.all(
        cluster.servers.map(async (s) =>
          (await httpQuery(s.httpUrl, 'SELECT symbol, count() FROM sharded.bars_local GROUP BY symbol FORMAT TSV'))
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split('\t')),
        ),
      )
      const where = new Map<string, number>()
      perShard.forEach((rows, shard) => {
        for (const [symbol, count] of rows) {
          assert.equal(where.has(symbol), false, `${symbol} is on two shards`)
          assert.equal(Number(count), 50)
          where.set(symbol, shard)
        }
      })
      assert.deepEqual([...where.keys()].sort(), symbols)
      assert.ok(
        perShard.every((rows) => rows.length > 0),
        'both shards hold some symbols',
      )
      for (const s of symbols)
        assert.equal(barCount(await market.readBars({ symbol: s, period: '1d', limit: 100 })), 50)
    } finally {
      await keys.close()
      await market.close()
    }
  })
})

describe('clickhouse visibility by watermark on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  before(async () => {
    if (need.met) cluster = await ClickHouseCluster.start()
  })
  after(() => cluster?.destroy())

  need.it(
    'an import begun before another commits stays hidden below the watermark until its own commit, in every instance',
    async () => {
      const [a, b] = [await open(cluster.storeUrl('watermark')), await open(cluster.storeUrl('watermark'))]
      try {
        const days = Array.from({ length: 20 }, (_, i) => Date.UTC(2024, 0, 2 + i))
        const older = await a.market.beginWrite()
        await older.putBars('600100.SH', '1d', walkBars(days, [0.4]))
        await a.market.write({ bars: [{ symbol: '600101.SH', period: '1d', bars: walkBars(days, [0.2]) }] })
        const version = await a.market.dataVersion()
        await poll('the other instance to see the newer import', async () =>
          (await b.market.dataVersion()) === version ? true : undefined,
        )
        // The newer import's id is the watermark; the older, open import's rows lie below it and stay hidden.
        for (const m of [a.market, b.market]) {
          assert.equal(barCount(await m.readBars({ symbol: '600101.SH', period: '1d', limit: 100 })), 20)
          assert.equal(barCount(await m.readBars({ symbol: '600100.SH', period: '1d', limit: 100 })), 0)
        }
        await older.commit()
        await poll('the other instance to see the older import', async () =>
          barCount(await b.market.readBars({ symbol: '600100.SH', period: '1d', limit: 100 })) === 20
            ? true
            : undefined,
        )
        assert.notEqual(await b.market.dataVersion(), version)
      } finally {
        for (const s of [a, b]) await Promise.all([s.keys.close(), s.market.close()])
      }
    },
  )

  need.it(
    'an instance opened among open, rolled-back and committed imports reads what the polling ones do, and sees the open ones once they commit',
    async () => {
      const url = cluster.storeUrl('first_load')
      const a = await open(url)
      const opened: Awaited<ReturnType<typeof open>>[] = []
      const days = Array.from({ length: 20 }, (_, i) => Date.UTC(2024, 0, 2 + i))
      const put = async (symbol: string) => {
        const w = await a.market.beginWrite()
        await w.putBars(symbol, '1d', walkBars(days, [0.3]))
        return w
      }
      const counts = (m: ClickHouseMarketStore) =>
        Promise.all(
          ['600110.SH', '600111.SH', '600112.SH', '600113.SH'].map(async (symbol) =>
            barCount(await m.readBars({ symbol, period: '1d', limit: 100 })),
          ),
        )
      try {
        const below = await put('600110.SH') // open below the watermark the next commit sets
        await (await put('600111.SH')).rollback()
        await a.market.write({ bars: [{ symbol: '600112.SH', period: '1d', bars: walkBars(days, [0.2]) }] })
        const above = await put('600113.SH') // open above it
        const b = await open(url)
        opened.push(b)
        assert.equal(await b.market.dataVersion(), await a.market.dataVersion())
        for (const m of [a.market, b.market]) assert.deepEqual(await counts(m), [0, 0, 20, 0])
        await below.commit()
        await above.commit()
        await poll('the instance opened later to see both imports commit', async () =>
          (await b.market.dataVersion()) === (await a.market.dataVersion()) ? true : undefined,
        )
        const c = await open(url)
        opened.push(c)
        assert.equal(await c.market.dataVersion(), await a.market.dataVersion())
        for (const m of [a.market, b.market, c.market]) assert.deepEqual(await counts(m), [20, 0, 20, 20])
      } finally {
        for (const s of [a, ...opened]) await Promise.all([s.keys.close(), s.market.close()])
      }
    },
  )

  need.it('an import id is drawn above every committed one, whatever the writer clock says', async () => {
    const { market, keys } = await open(cluster.storeUrl('watermark'))
    const meta = cluster.servers[0].connection('watermark')
    try {
      await market.write({ instruments: [bareInstrument('600102.SH')] })
      const [[committed]] = await meta.rows("SELECT max(import_id) FROM imports WHERE state = 'committed'")
      // A clock behind the one that committed: its first id lies below the newest committed import.
      const drawn: bigint[] = []
      const id = await beginImport(meta, (floor) => {
        const next = drawn.length === 0 ? 1n : floor + 1n
        drawn.push(next)
        return next
      })
      assert.deepEqual(drawn, [1n, BigInt(committed!) + 1n])
      assert.equal(id, BigInt(committed!) + 1n)
      const [[state]] = await meta.rows(
        'SELECT arraySort(groupArray(toString(state))) FROM imports WHERE import_id = 1',
      )
      assert.equal(state, "['aborted','begun','vacuumed']", 'the id given up is recorded aborted and claimed')
    } finally {
      await meta.close()
      await Promise.all([keys.close(), market.close()])
    }
  })

  need.it(
    "a feed's next import is begun with its write's commit and taken by its next write; one left unused, or at close, is given up",
    async () => {
      const url = cluster.storeUrl('ahead')
      const { market, keys } = await open(url)
      const meta = cluster.servers[0].connection('ahead')
      let closed = false
      const states = async (id: string) =>
        (
          await meta.rows(`SELECT arraySort(groupUniqArray(toString(state))) FROM imports WHERE import_id = ${id}`)
        )[0][0]
      const begunAbove = (id: string) => async () =>
        (await meta.rows(`SELECT max(import_id) FROM imports WHERE import_id > ${id} AND state = 'begun'`))
          .map(([m]) => m)
          .find((m): m is string => m !== null && m !== '0')
      try {
        const first = await market.beginWrite({ more: true })
        await first.putInstruments([bareInstrument('600120.SH')])
        assert.equal(await begunAbove(first.importId)(), undefined, 'none is begun before the commit')
        await first.commit()
        // Begun by the first write's commit, in the INSERT of its `committing` row: one row time.
        const ahead = await begunAbove(first.importId)()
        assert.ok(ahead, 'the next import is begun once the first write has committed')
        const [[together]] = await meta.rows(
          `SELECT uniqExact(at_ms) FROM imports WHERE (import_id = ${first.importId} AND state = 'committing') OR (import_id = ${ahead} AND state = 'begun')`,
        )
        assert.equal(together, '1', "the next import's begun row went in with the committing row")
        const second = await market.beginWrite()
        assert.equal(second.importId, ahead, 'the next write takes the import begun ahead')
        await second.putInstruments([bareInstrument('600121.SH')])
        await second.commit()
        assert.equal(await begunAbove(second.importId)(), undefined, 'a write without `more` begins none ahead')
        assert.equal(await states(second.importId), "['begun','committed','committing']")
        assert.deepEqual(
          (await market.readInstruments(['600120.SH', '600121.SH'])).map((i) => i.symbol),
          ['600120.SH', '600121.SH'],
        )
        // Another instance commits after an import was begun ahead: that one is given up, so the
        // next write's rows stay newer than the other's (newest wins by import id).
        const other = await open(url)
        try {
          const fifth = await market.beginWrite({ more: true })
          await fifth.commit()
          const passed = await poll('the import begun after the fifth', begunAbove(fifth.importId))
          await other.market.write({ instruments: [bareInstrument('600122.SH')] })
          const [[committed]] = await meta.rows("SELECT max(import_id) FROM imports WHERE state = 'committed'")
          assert.ok(BigInt(committed!) > BigInt(passed), 'the other instance committed above the one begun ahead')
          const sixth = await market.beginWrite()
          assert.ok(
            BigInt(sixth.importId) > BigInt(committed!),
            'the next write is above the import committed meanwhile',
          )
          await sixth.rollback()
          await poll('the import begun ahead given up', async () =>
            (await states(passed)) === "['aborted','begun','vacuumed']" ? true : undefined,
          )
        } finally {
          await Promise.all([other.keys.close(), other.market.close()])
        }
        // One begun ahead and not taken is given up after a heartbeat.
        const third = await market.beginWrite({ more: true })
        await third.commit()
        const unused = await poll('the import begun after the third', begunAbove(third.importId))
        await poll('the unused import given up', async () =>
          (await states(unused)) === "['aborted','begun','vacuumed']" ? true : undefined,
        )
        const fourth = await market.beginWrite({ more: true })
        assert.ok(BigInt(fourth.importId) > BigInt(unused), 'an import given up is not taken')
        await fourth.rollback()
        assert.equal(await begunAbove(fourth.importId)(), undefined, 'a write rolled back begins none')
        const last = await market.beginWrite({ more: true })
        await last.commit()
        const atClose = await begunAbove(last.importId)()
        assert.ok(atClose, 'the import begun by the last commit')
        assert.equal(await states(atClose), "['begun']")
        await market.close()
        closed = true
        assert.equal(await states(atClose), "['aborted','begun','vacuumed']", 'closing the store gives it up')
      } finally {
        await meta.close()
        await Promise.all([keys.close(), closed || market.close()])
      }
    },
  )
})

describe("clickhouse queries in the server's log: reads scan the granules of the bars they return, a commit reads nothing back", () => {
  let server: ClickHouseServer
  before(async () => {
    if (!need.met) return
    server = await ClickHouseServer.start({
      config:
        '<query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>100</flush_interval_milliseconds></query_log>',
      profile: '<log_queries>1</log_queries>',
    })
  })
  after(() => server?.destroy())

  const DAY = 86_400_000
  const days = Array.from({ length: 10_000 }, (_, k) => Date.UTC(1995, 0, 3) + k * DAY)

  /** 12 symbols (codes from `code`) with 10,000 daily bars each. */
  function histories(code: number) {
    const symbols = Array.from({ length: 12 }, (_, i) => `${code + i}.SH`)
    return { symbols, daily: symbols.map((_, i) => walkBars(days, [i / 12, 0.4, 0.8])) }
  }

  /** Reads each symbol's newest 100 daily bars in one turn (the store sends them together) and checks them against `daily`. */
  async function newest100(
    market: ClickHouseMarketStore,
    symbols: readonly string[],
    daily: readonly Bars[],
  ): Promise<void> {
    const latest = await Promise.all(symbols.map((symbol) => market.readBars({ symbol, period: '1d', limit: 100 })))
    for (const [i, bars] of latest.entries()) {
      assert.deepEqual([...bars.timestamp], days.slice(-100), `${symbols[i]}: the newest 100`)
      assert.deepEqual([...bars.close], [...daily[i].close.slice(-100)], `${symbols[i]}: closes`)
    }
  }

  /** `column` of each finished query reading `FROM table` in the query log, once the server has written one. */
  async function logged(column: 'read_rows' | 'read_bytes', from: string): Promise<number[]> {
    const rows = await poll('the read in the query log', async () => {
      await httpCommand(server.httpUrl, 'SYSTEM FLUSH LOGS')
      const rows = await httpQuery(
        server.httpUrl,
        // type 2: the query finished (a UInt8 on 18.16, an Enum later).
        `SELECT ${column} FROM system.query_log WHERE type = 2 AND query LIKE '%${from}%' AND query NOT LIKE '%query_log%'`,
      )
      return rows.trim() === '' ? undefined : rows
    })
    return rows.trim().split('\n').map(Number)
  }

  need.it('the newest 100 daily bars of 12 symbols read together: one query over their newest granules', async () => {
    const store = await open(server.storeUrl('granules'))
    try {
      const { symbols, daily } = histories(600200)
      // Put as a live feed puts them, so they have no blobs: the reads take the bars table.
      const w = await store.market.beginWrite()
      for (const [i, symbol] of symbols.entries()) await w.putBars(symbol, '1d', daily[i], { live: true })
      await w.commit()
      await newest100(store.market, symbols, daily)
      const reads = await logged('read_rows', 'FROM bars PREWHERE')
      assert.equal(reads.length, 1, `one query for the 12 reads: ${reads.join(', ')}`)
      assert.ok(reads[0] >= symbols.length * 100, `rows scanned: ${reads[0]}, fewer than returned`)
      // Each symbol's newest 100 lie in at most two granules, well below the rows stored.
      const most = symbols.length * 2 * BARS_GRANULARITY
      assert.ok(most <= (symbols.length * days.length) / 2, 'the series are long enough for the bound to tell')
      assert.ok(reads[0] <= most, `rows scanned: ${reads[0]} of ${symbols.length * days.length}`)
    } finally {
      await Promise.all([store.keys.close(), store.market.close()])
    }
  })

  need.it(
    'the newest 100 daily bars of 12 symbols with blobs: one query of the blobs, the newest blob of each read',
    async () => {
      const store = await open(server.storeUrl('newest_blobs'))
      try {
        const { symbols, daily } = histories(600300)
        await store.market.write({
          bars: symbols.map((symbol, i) => ({ symbol, period: '1d' as const, bars: daily[i] })),
        })
        await newest100(store.market, symbols, daily)
        const reads = await logged('read_bytes', 'FROM blobs')
        assert.equal(reads.length, 1, `one query for the 12 reads: ${reads.join(', ')}`)
        // Each history is three blobs (4,096 + 4,096 + 1,808 bars): the query reads the newest one's data.
        const stored = Number(
          await httpQuery(server.httpUrl, 'SELECT sum(length(data)), count() FROM newest_blobs.blobs').then(
            (r) => r.split('\t')[0],
          ),
        )
        assert.ok(reads[0] < stored / 3, `bytes read: ${reads[0]} of ${stored} stored in the blobs`)
      } finally {
        await Promise.all([store.keys.close(), store.market.close()])
      }
    },
  )

  need.it(
    "a commit's own spans are known without reading them back; another process reads them, and both read the same",
    async () => {
      const url = server.storeUrl('own_spans')
      const [a, b] = [await open(url), await open(url)]
      try {
        const { symbols, daily } = histories(600400)
        const minutes = walkBars(
          Array.from({ length: 300 }, (_, k) => Date.UTC(2024, 0, 2, 1, 30) + k * 60_000),
          [0.3, 0.5],
        )
        const w = await a.market.beginWrite()
        for (const [i, symbol] of symbols.slice(0, 4).entries()) await w.putBars(symbol, '1d', daily[i])
        for (const symbol of symbols.slice(4, 8)) await w.putBars(symbol, '1m', minutes, { live: true })
        await w.commit()
        const id = (
          await httpQuery(server.httpUrl, "SELECT max(import_id) FROM own_spans.imports WHERE state = 'committed'")
        ).trim()
        /** What a store reads of the first 8 symbols: whole series, and their newest 100 (through the spans' marks). */
        const reads = (market: ClickHouseMarketStore) =>
          Promise.all(
            symbols.slice(0, 8).flatMap((symbol, i) => {
              const period = i < 4 ? ('1d' as const) : ('1m' as const)
              return [
                market.readBars({ symbol, period, limit: 20_000 }),
                market.readBars({ symbol, period, limit: 100 }),
              ]
            }),
          )
        const own = await reads(a.market)
        assert.deepEqual([...own[0].close], [...daily[0].close], 'the writer reads its daily bars at once')
        assert.deepEqual([...own[9].timestamp], [...minutes.timestamp.slice(-100)], 'and its newest 100 minutes')
        const other = await poll('the other process sees the import', async () => {
          const r = await reads(b.market)
          return barCount(r[0]) > 0 ? r : undefined
        })
        assert.deepEqual(
          other.map((bars) => [...bars.timestamp, ...bars.close]),
          own.map((bars) => [...bars.timestamp, ...bars.close]),
        )
        await httpCommand(server.httpUrl, 'SYSTEM FLUSH LOGS')
        const spanReads = await httpQuery(
          server.httpUrl,
          `SELECT count() FROM system.query_log WHERE type = 2 AND query LIKE '%FROM series WHERE import_id IN (${id})%'`,
        )
        assert.equal(spanReads.trim(), '1', "the other process's poll, and none by the writer")
      } finally {
        await closeStores(a, b)
      }
    },
  )
})
