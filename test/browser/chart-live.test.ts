/// <reference lib="dom" />
// The chart page live, in a real browser (Debian's chromium via playwright-core) against a real
// server and its ingest listener: quotes pushed through POST /v1/ingest/quotes reach the page over
// /v1/ws/stream and move the forming candle and its volume bar (1d forward, 1m none).
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { StreamHub } from '../../src/live/stream-hub.js'
import { ChartLive, HOUR } from '../helpers/chart-live.js'
import { startIngest } from '../helpers/ingest-server.js'
import { chromium as chromiumInstalled, requires } from '../helpers/requirements.js'
import { startServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const need = requires(chromiumInstalled())

describe('chart page live: quotes pushed to the ingest listener move the forming candle', () => {
  const { dir, cleanup } = tempDir()
  let live: ChartLive
  before(async () => {
    if (need.met) live = await ChartLive.start(dir)
  })
  after(async () => {
    await live?.close()
    cleanup()
  })

  need.it('1d forward: a quote above the day high raises the last candle to the day figures at once', async () => {
    const { today } = live
    await live.push(today + 10 * HOUR, 1502, { high: 1505, low: 1498, volume: 1000 }) // today's first: its bar is stored
    await live.open('600519.SH')
    await live.show('1d', 'forward')
    const before = await live.waitForDrawn((d) => d.last.high === 1505, "today's bar as loaded")
    assert.deepEqual([before.last.open, before.last.low, before.last.close], [1500, 1498, 1502])
    await live.push(today + 10 * HOUR + 60_000, 1530, { high: 1530, low: 1498, volume: 4000 })
    const after = await live.waitForDrawn(
      (d) => d.last.high === 1530 && d.last.close === 1530,
      'the candle moved by the quote',
    )
    assert.equal(after.last.time, before.last.time, 'the same candle, not a new one')
    assert.deepEqual([after.last.open, after.last.low], [1500, 1498])
    assert.equal(after.volume.value, 4000) // the day's cumulative volume
  })

  need.it('1m none: the next minute opens a new candle at the quote, with the volume traded since', async () => {
    await live.show('1m', 'none')
    const before = await live.drawn()
    await live.push(live.today + 10 * HOUR + 3 * 60_000 + 5000, 1540, { high: 1540, low: 1498, volume: 4600 })
    const after = await live.waitForDrawn((d) => d.last.time > before.last.time, 'a new 1m candle')
    assert.deepEqual([after.last.open, after.last.high, after.last.low, after.last.close], [1540, 1540, 1540, 1540])
    assert.equal(after.volume.value, 600) // 4600 - 4000: traded since the quote before
  })

  need.it('a stream closed by a server restart reconnects and resubscribes by itself', async () => {
    const port = Number(new URL(live.server.url).port)
    const before = await live.drawn()
    await live.ingest.close()
    await live.server.close() // streams get 1001, going away
    await live.page.locator('#live', { hasText: 'reconnecting' }).waitFor({ timeout: 60_000 })
    const hub = new StreamHub()
    live.server = await startServer(live.db, { live: { hub }, logger: live.logger }, port) // the same file: the page's key is known
    live.ingest = await startIngest(live.server, {}, hub)
    await live.page.locator('#live', { hasText: /^live$/ }).waitFor({ timeout: 60_000 })
    await live.push(live.today + 10 * HOUR + 3 * 60_000 + 20_000, 1550, { high: 1550, low: 1498, volume: 4700 })
    const after = await live.waitForDrawn(
      (d) => d.last.high === 1550 && d.last.close === 1550,
      'the quote after the reconnect',
    )
    assert.equal(after.last.time, before.last.time, 'the same candle, not a new one')
  })

  need.it('another symbol on the same socket: the page subscribes it and its quotes move its candle', async () => {
    // The symbol's first quote of the day only sets where the next minute's volume is counted from.
    const t = live.today + 10 * HOUR + 4 * 60_000
    await live.push(t, 11, { high: 11, low: 11, volume: 300 }, '000001.SZ', 11)
    await live.page.fill('#symbol', '000001.SZ')
    await live.show('1m', 'none')
    const before = await live.drawn()
    await live.push(t + 70_000, 11.5, { high: 11.5, low: 11, volume: 900 }, '000001.SZ', 11)
    const after = await live.waitForDrawn((d) => d.last.time > before.last.time, 'a 000001.SZ candle from its quote')
    assert.deepEqual([after.last.open, after.last.close, after.volume.value], [11.5, 11.5, 600])
    await live.waitForServerBars('000001.SZ', '1m', 'none', 3, "the server's bars")
  })

  need.it('no log line of the server carries the key the page put in the stream URL', () => {
    assert.ok(live.logs.length > 0)
    assert.deepEqual(
      live.logs.filter((l) => l.includes(live.server.key)),
      [],
    )
  })
})
