/// <reference lib="dom" />
// The chart page live, in a real browser (Debian's chromium via playwright-core) against a real
// server and its ingest listener: quotes pushed through POST /v1/ingest/quotes reach the page over
// /v1/ws/stream and move the forming candle and its volume bar (1d forward, 1m none).
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import type { CandlestickData, HistogramData, IChartApi } from 'lightweight-charts'
import { chromium, type Browser, type Page } from 'playwright-core'
import { StreamHub } from '../../src/live/stream-hub.js'
import { CHROMIUM, chromium as chromiumInstalled, requires } from '../helpers/requirements.js'
import { startIngest, type TestIngest } from '../helpers/ingest-server.js'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const need = requires(chromiumInstalled())
const HOUR = 3_600_000
const DAY = 24 * HOUR

interface Drawn {
  readonly candles: number
  readonly last: CandlestickData
  readonly volume: HistogramData
}

describe('chart page live: quotes pushed to the ingest listener move the forming candle', () => {
  const { dir, cleanup } = tempDir()
  const hub = new StreamHub()
  const logs: string[] = []
  let server: TestServer
  let ingest: TestIngest
  let db = ''
  const logger = { level: 'info', stream: { write: (line: string) => void logs.push(line) } }
  let browser: Browser
  let page: Page
  /** Local midnight (UTC ms) of the weekday after the demo's last 600519.SH day: "today" of the pushes. */
  let today = 0
  before(async () => {
    if (!need.met) return
    db = await demoDb(dir)
    server = await startServer(db, { live: { hub }, logger })
    ingest = await startIngest(server, {}, hub)
    const last = await getJson<{ data: KlinesData }>(`${server.url}/v1/klines?symbol=600519.SH&period=1d&count=1`, {
      headers: { 'X-API-Key': server.key },
    })
    today = last.body.data.timestamp[0] + DAY
    while ([0, 6].includes(new Date(today + 8 * HOUR).getUTCDay())) today += DAY // Shanghai is UTC+8
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    })
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } })
  })
  after(async () => {
    await browser?.close()
    await ingest?.close()
    await server?.close()
    cleanup()
  })

  const push = async (
    at: number,
    last: number,
    o: { high: number; low: number; volume: number },
    symbol = '600519.SH',
    open = 1500,
  ) => {
    const res = await fetch(`${ingest.url}/v1/ingest/quotes`, {
      method: 'POST',
      headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ symbol, timestamp: at, last_price: last, open, prev_close: open, amount: 1e7, ...o }]),
    })
    const text = await res.text()
    assert.equal(res.status, 200, text)
    assert.equal((JSON.parse(text) as { data: { accepted: number } }).data.accepted, 1, text)
  }
  const drawn = (): Promise<Drawn> =>
    page.evaluate(() => {
      const chart = (window as unknown as { mdqChart: IChartApi }).mdqChart
      const [candles, volume] = chart.panes().flatMap((pane) => pane.getSeries())
      const bars = candles.data() as CandlestickData[]
      return { candles: bars.length, last: bars[bars.length - 1], volume: volume.data().at(-1) as HistogramData }
    })
  /**
   * Reads the page until what it draws satisfies `pred`, evaluated here (the page's
   * Content-Security-Policy refuses eval), giving up after 60 s so a failure names what was drawn.
   */
  const waitForDrawn = async (pred: (d: Drawn) => boolean, what: string) => {
    const deadline = Date.now() + 60_000
    for (;;) {
      const d = await drawn()
      if (d.last && pred(d)) return d
      if (Date.now() > deadline) throw new Error(`${what}: not drawn within 60 s; drawn ${JSON.stringify(d)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const show = async (period: string, adjust: string) => {
    await page.selectOption('#period', period)
    await page.selectOption('#adjust', adjust)
    await page.click('button[type=submit]')
    // Drawn (the page hands the view over once its bars are in) and subscribed.
    await page.locator('#bar-count[data-settled="true"]').waitFor({ state: 'attached', timeout: 60_000 })
    await page.locator('#live', { hasText: 'live' }).waitFor({ timeout: 60_000 })
  }

  need.it('1d forward: a quote above the day high raises the last candle to the day figures at once', async () => {
    await push(today + 10 * HOUR, 1502, { high: 1505, low: 1498, volume: 1000 }) // today's first: its bar is stored
    await page.goto(`${server.url}/?page=60`)
    await page.fill('#api-key', server.key)
    await page.fill('#symbol', '600519.SH')
    await show('1d', 'forward')
    const before = await waitForDrawn((d) => d.last.high === 1505, "today's bar as loaded")
    assert.deepEqual([before.last.open, before.last.low, before.last.close], [1500, 1498, 1502])
    await push(today + 10 * HOUR + 60_000, 1530, { high: 1530, low: 1498, volume: 4000 })
    const after = await waitForDrawn(
      (d) => d.last.high === 1530 && d.last.close === 1530,
      'the candle moved by the quote',
    )
    assert.equal(after.last.time, before.last.time, 'the same candle, not a new one')
    assert.deepEqual([after.last.open, after.last.low], [1500, 1498])
    assert.equal(after.volume.value, 4000) // the day's cumulative volume
  })

  need.it('1m none: the next minute opens a new candle at the quote, with the volume traded since', async () => {
    await show('1m', 'none')
    const before = await drawn()
    await push(today + 10 * HOUR + 3 * 60_000 + 5000, 1540, { high: 1540, low: 1498, volume: 4600 })
    const after = await waitForDrawn((d) => d.last.time > before.last.time, 'a new 1m candle')
    assert.deepEqual([after.last.open, after.last.high, after.last.low, after.last.close], [1540, 1540, 1540, 1540])
    assert.equal(after.volume.value, 600) // 4600 - 4000: traded since the quote before
  })

  need.it('a stream closed by a server restart reconnects and resubscribes by itself', async () => {
    const port = Number(new URL(server.url).port)
    const before = await drawn()
    await ingest.close()
    await server.close() // streams get 1001, going away
    await page.locator('#live', { hasText: 'reconnecting' }).waitFor({ timeout: 60_000 })
    const hub2 = new StreamHub()
    server = await startServer(db, { live: { hub: hub2 }, logger }, port) // the same file: the page's key is known
    ingest = await startIngest(server, {}, hub2)
    await page.locator('#live', { hasText: /^live$/ }).waitFor({ timeout: 60_000 })
    await push(today + 10 * HOUR + 3 * 60_000 + 20_000, 1550, { high: 1550, low: 1498, volume: 4700 })
    const after = await waitForDrawn(
      (d) => d.last.high === 1550 && d.last.close === 1550,
      'the quote after the reconnect',
    )
    assert.equal(after.last.time, before.last.time, 'the same candle, not a new one')
  })

  need.it('another symbol on the same socket: the page subscribes it and its quotes move its candle', async () => {
    await page.fill('#symbol', '000001.SZ')
    await show('1m', 'none')
    const before = await drawn()
    await push(today + 10 * HOUR + 5 * 60_000, 11.5, { high: 11.5, low: 11, volume: 900 }, '000001.SZ', 11)
    const after = await waitForDrawn((d) => d.last.time > before.last.time, 'a 000001.SZ candle from its quote')
    assert.deepEqual([after.last.open, after.last.close], [11.5, 11.5])
  })

  need.it('no log line of the server carries the key the page put in the stream URL', () => {
    assert.ok(logs.length > 0)
    assert.deepEqual(
      logs.filter((l) => l.includes(server.key)),
      [],
    )
  })
})
