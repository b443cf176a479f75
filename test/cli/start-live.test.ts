// `mdq start --live` over a real demo store: the store's latest day of the demo symbols' 1m bars is
// replayed as today's quotes through the server's own ingest listener (HTTP, a key of scope ingest
// made for it and revoked after), and reads back through the public API as those bars stamped today.
import assert from 'node:assert/strict'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, sliceBars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { DAY_MS, isoWeekday } from '../../src/domain/time-zone.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { spawnServe } from '../helpers/serve-process.js'
import { demoDb, getJson, type KlinesData } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir('mdq-start-live-')
let db: string
let pristine: string

before(async () => {
  db = await demoDb(dir)
  pristine = join(dir, 'pristine.db')
  copyFileSync(db, pristine)
})
after(cleanup)

describe('mdq start --live', () => {
  it("replays the demo symbols' latest day as today into its own ingest listener; the day reads back exactly", async () => {
    const zone = MARKETS.SH.zone
    let today = zone.localDay(Date.now())
    while (isoWeekday(today) >= 5) today--
    const source = SqliteMarketStore.open(pristine, { readonly: true })
    const all = await source.readBars({ symbol: '600519.SH', period: '1m', limit: 1000 })
    await source.close()
    const lastDay = zone.localDay(all.timestamp[barCount(all) - 1])
    const expected = sliceBars(
      all,
      all.timestamp.findIndex((t) => zone.localDay(t) === lastDay),
      barCount(all),
    )
    const server = await spawnServe(['--db', db], ['--rate-limit', 'off', '--live', '1000000'], 'start')
    try {
      while (!/the day is played/.test(server.output())) {
        assert.ok(server.child.exitCode === null, server.output())
        await sleep(50)
      }
      assert.match(server.output(), /Live demo: replaying the latest day of 600000\.SH, 600519\.SH/)
      const keys = runMdq(['--db', db, 'keys', 'list']).stdout
      assert.match(keys, /demo feed.*revoked/)
      const key = runMdq(['--db', db, 'keys', 'create', '--name', 'reader']).stdout.trim()
      const read = await getJson<{ data: KlinesData }>(
        `${server.base}/v1/klines?symbol=600519.SH&period=1m&count=1000&adjust=none&start_time=${zone.midnightUtc(today)}`,
        { headers: { 'X-API-Key': key } },
      )
      assert.equal(read.status, 200, JSON.stringify(read.body))
      const shift = (today - lastDay) * DAY_MS
      assert.deepEqual(
        read.body.data.timestamp,
        Array.from(expected.timestamp, (t) => t + shift),
      )
      for (const column of ['open', 'high', 'low', 'close', 'volume', 'amount'] as const)
        assert.deepEqual(read.body.data[column], Array.from(expected[column]), column)
    } finally {
      await server.stop()
    }
  })
})
