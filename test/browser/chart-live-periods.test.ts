/// <reference lib="dom" />
// The chart page live in a real browser against a real server and its ingest listener, where the page
// cannot draw a quote's bar by itself: prints outside the trading minutes (the lunch break, the
// closing auction) on 1m, and a quote past the last bar of 5m or 1w, after which the page re-reads the
// latest bars; and both while the page reads older bars for a scroll back. Each time the page must end
// up drawing the bars GET /v1/klines answers.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { isoWeekday } from '../../src/domain/time-zone.js'
import { ChartLive, HOUR } from '../helpers/chart-live.js'
import { chromium as chromiumInstalled, requires } from '../helpers/requirements.js'
import { tempDir } from '../helpers/store-files.js'

const need = requires(chromiumInstalled())
const MINUTE = 60_000
const SECOND = 1000

describe("chart page live: bars only the server can tell, drawn as the server's", () => {
  const { dir, cleanup } = tempDir()
  let live: ChartLive
  /** Requests the page made for klines, in order. */
  const klinesRequests: string[] = []
  before(async () => {
    if (!need.met) return
    live = await ChartLive.start(dir)
    live.page.on('request', (r) => r.url().includes('/v1/klines?') && klinesRequests.push(r.url()))
  })
  after(async () => {
    await live?.close()
    cleanup()
  })
  /** Local time of "today" (the weekday after the demo's last day) in Shanghai. */
  const at = (h: number, m: number, s = 0) => live.today + h * HOUR + m * MINUTE + s * SECOND
  /** Pushes of `symbol`'s quotes (the day opened at `open`), whose day range holds [low, high] and each last price. */
  const quotesOf =
    (symbol: string, open: number, low: number, high: number) => (t: number, last: number, volume: number) =>
      live.push(t, last, { high: Math.max(last, high), low: Math.min(last, low), volume }, symbol, open)

  need.it(
    '1m none: a print in the lunch break or the closing auction joins the minute before, an idle quote opens nothing',
    async () => {
      const symbol = '601318.SH'
      const push = quotesOf(symbol, 50, 49.9, 50.3)
      const drawsTheServers = (what: string) => live.waitForServerBars(symbol, '1m', 'none', 3, what)
      await push(at(11, 28, 10), 50, 1000) // the day's first quote: only where the next minute counts from
      await live.open(symbol)
      await live.show('1m', 'none')
      await drawsTheServers('as loaded, with the latest quote')
      await push(at(11, 29, 20), 50.1, 1300)
      await drawsTheServers('the 11:29 candle')
      await push(at(11, 30, 2), 50.3, 1500) // the morning's last print, stamped after 11:30
      const lunch = await drawsTheServers('the 11:30 print in the 11:29 candle')
      assert.deepEqual([lunch[2].close, lunch[2].volume], [50.3, 500])
      await push(at(12, 10), 50.3, 1500) // nothing traded
      await push(at(13, 0, 5), 50.2, 1800)
      const afternoon = await drawsTheServers('the 13:00 candle right after the 11:29 one')
      assert.deepEqual(
        afternoon.slice(1).map((c) => c.time - afternoon[1].time),
        [0, 91 * 60],
      )
      await push(at(14, 59, 30), 50.15, 2000)
      await drawsTheServers('the 14:59 candle')
      await push(at(15, 0, 3), 50.25, 2600) // the closing auction
      const closed = await drawsTheServers('the closing auction in the 14:59 candle')
      assert.deepEqual([closed[2].close, closed[2].volume], [50.25, 800])
    },
  )

  need.it(
    '1m none: quotes that come while older bars are read are drawn as the server answers them, and the older bars join',
    async () => {
      const symbol = '000001.SZ'
      const push = quotesOf(symbol, 11, 10.9, 11.2)
      await push(at(10, 0, 10), 11, 1000)
      await live.open(symbol)
      await live.show('1m', 'none')
      await live.waitForServerBars(symbol, '1m', 'none', 2, 'as loaded, with the latest quote')
      const loaded = (await live.drawn()).candles
      // The older bars' answer is held until both quotes are drawn.
      let release = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      let asked = () => {}
      const requested = new Promise<void>((resolve) => (asked = resolve))
      await live.page.route(
        (url) => url.searchParams.has('end_time'),
        async (route) => {
          asked()
          await held
          await route.continue()
        },
      )
      try {
        await live.scrollBack()
        await requested
        await push(at(10, 1, 20), 11.1, 1400) // drawn by the page itself
        await live.waitForServerBars(symbol, '1m', 'none', 2, 'the 10:01 candle')
        await push(at(11, 30, 3), 11.15, 1600) // a print after the morning session: the server's bars re-read
        const lunch = await live.waitForServerBars(symbol, '1m', 'none', 2, 'the 11:30 print in the 11:29 candle')
        assert.deepEqual([lunch[1].close, lunch[1].volume], [11.15, 200])
        release()
        await live.waitForDrawn((d) => d.candles > loaded, 'the older bars')
        await live.waitForServerBars(symbol, '1m', 'none', 3, 'the latest bars after the older ones joined')
      } finally {
        release()
        await live.page.unroute((url) => url.searchParams.has('end_time'))
      }
    },
  )

  need.it(
    '5m none: a quote inside the last bar moves it without reading klines; one past it re-reads them and draws the new bar',
    async () => {
      const symbol = '600000.SH'
      const push = quotesOf(symbol, 10, 9.9, 10.2)
      await push(at(10, 1, 10), 10, 1000)
      await push(at(10, 2, 10), 10.1, 1200) // the 10:00 bar's first minute
      await live.open(symbol) // a page of its own: 'live' then says this symbol is subscribed
      await live.show('5m', 'none')
      // The first quote after the bars were read re-reads them (the page has no quote before it to count its trades from).
      await push(at(10, 2, 40), 10.15, 1300)
      await live.waitForServerBars(symbol, '5m', 'none', 2, 'the first quote after loading')
      const asked = klinesRequests.length
      await push(at(10, 3, 30), 10.3, 1600)
      const moved = await live.waitForDrawn((d) => d.last.close === 10.3, 'the 10:00 candle moved')
      assert.deepEqual(klinesRequests.slice(asked), [], 'read klines for a quote inside the bar')
      const [server] = await live.klines(symbol, '5m', 'none', 1)
      assert.deepEqual(
        [moved.last.time, moved.last.open, moved.last.high, moved.last.low, moved.last.close, moved.volume.value],
        [server.time, server.open, server.high, server.low, server.close, server.volume],
      )
      await push(at(10, 5, 10), 10.25, 1900)
      const next = await live.waitForServerBars(symbol, '5m', 'none', 2, 'the 10:05 bar as the server answers it')
      assert.equal(next[1].time - next[0].time, 5 * 60)
      assert.ok(
        klinesRequests.slice(asked).some((u) => u.includes('period=5m')),
        'no klines read for the new bar',
      )
    },
  )

  need.it(
    "1w forward: the next week's first quote re-reads the bars and draws the week the server answers; a later one moves it in place",
    async () => {
      const symbol = '000858.SZ'
      // The Monday after this week: a bar of a new week.
      const zone = MARKETS.SZ.zone
      const today = zone.localDay(live.today)
      const monday = zone.midnightUtc(today + 7 - isoWeekday(today))
      await live.open(symbol)
      await live.show('1w', 'forward')
      const before = await live.waitForServerBars(symbol, '1w', 'forward', 2, 'as loaded')
      const asked = klinesRequests.length
      await live.push(monday + 10 * HOUR, 150, { high: 151, low: 149, volume: 2000 }, symbol, 149.5)
      const week = await live.waitForServerBars(symbol, '1w', 'forward', 2, "the new week's bar")
      assert.equal(week[0].time, before[1].time)
      assert.ok(
        klinesRequests.slice(asked).some((u) => u.includes('period=1w')),
        'no klines read for the new week',
      )
      const read = klinesRequests.length
      await live.push(monday + 10 * HOUR + MINUTE, 152, { high: 152, low: 149, volume: 2600 }, symbol, 149.5)
      const moved = await live.waitForServerBars(symbol, '1w', 'forward', 2, 'the week moved by a quote')
      assert.deepEqual([moved[1].high, moved[1].close, moved[1].volume], [152, 152, 2600])
      assert.deepEqual(klinesRequests.slice(read), [], 'read klines for a quote inside the week')
    },
  )
})
