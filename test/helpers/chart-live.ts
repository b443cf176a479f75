/// <reference lib="dom" />
/**
 * @module The chart page live in a real browser (Debian's chromium via playwright-core) against a real
 * server and its ingest listener over the demo store: quotes pushed through POST /v1/ingest/quotes,
 * what the page draws, and what the server answers for the same bars.
 */
import assert from 'node:assert/strict'
import type { CandlestickData, HistogramData, IChartApi } from 'lightweight-charts'
import { chromium, type Browser, type Page } from 'playwright-core'
import { StreamHub } from '../../src/live/stream-hub.js'
import { startIngest, type TestIngest } from './ingest-server.js'
import { CHROMIUM } from './requirements.js'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from './server.js'

export const HOUR = 3_600_000
export const DAY = 24 * HOUR
/** Shanghai's offset from UTC (no daylight saving): the page draws exchange time as UTC seconds. */
const CN_OFFSET_S = 8 * 3600

export interface Drawn {
  readonly candles: number
  readonly last: CandlestickData
  readonly volume: HistogramData
}

/** A candle as the page draws it (time in its chart seconds) with the value of its volume bar. */
export interface Candle {
  readonly time: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
}

/** A pushed quote's day figures besides its last price (open and prev_close default to `open`). */
export interface DayFigures {
  readonly high: number
  readonly low: number
  readonly volume: number
}

export class ChartLive {
  /** Mutable: a test may restart the server on the same port. */
  server!: TestServer
  ingest!: TestIngest
  page!: Page
  /** Local midnight (UTC ms) of the weekday after the demo's last 600519.SH day: "today" of the pushes. */
  today = 0
  db = ''
  /** The server's log lines. */
  readonly logs: string[] = []
  readonly logger = { level: 'info', stream: { write: (line: string) => void this.logs.push(line) } }
  #browser?: Browser

  /** A demo store in `dir`, a server with an ingest listener on it, and a page of Chromium. */
  static async start(dir: string): Promise<ChartLive> {
    const live = new ChartLive()
    live.db = await demoDb(dir)
    const hub = new StreamHub()
    live.server = await startServer(live.db, { live: { hub }, logger: live.logger })
    live.ingest = await startIngest(live.server, {}, hub)
    const last = await getJson<{ data: KlinesData }>(
      `${live.server.url}/v1/klines?symbol=600519.SH&period=1d&count=1`,
      {
        headers: { 'X-API-Key': live.server.key },
      },
    )
    live.today = last.body.data.timestamp[0] + DAY
    while ([0, 6].includes(new Date(live.today + 8 * HOUR).getUTCDay())) live.today += DAY // Shanghai is UTC+8
    live.#browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    })
    live.page = await live.#browser.newPage({ viewport: { width: 1280, height: 720 } })
    return live
  }

  async close(): Promise<void> {
    await this.#browser?.close()
    await this.ingest?.close()
    await this.server?.close()
  }

  /** Pushes one quote (amount fixed: the page draws none) and checks it was accepted. */
  async push(at: number, last: number, o: DayFigures, symbol = '600519.SH', open = 1500): Promise<void> {
    const res = await fetch(`${this.ingest.url}/v1/ingest/quotes`, {
      method: 'POST',
      headers: { 'X-API-Key': this.ingest.key, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ symbol, timestamp: at, last_price: last, open, prev_close: open, amount: 1e7, ...o }]),
    })
    const text = await res.text()
    assert.equal(res.status, 200, text)
    assert.equal((JSON.parse(text) as { data: { accepted: number } }).data.accepted, 1, text)
  }

  /** Opens the page with the server's key and `symbol` entered (nothing shown yet). */
  async open(symbol: string): Promise<void> {
    await this.page.goto(`${this.server.url}/?page=60`)
    await this.page.fill('#api-key', this.server.key)
    await this.page.fill('#symbol', symbol)
  }

  /** Shows the entered symbol: drawn (the page hands the view over once its bars are in) and subscribed. */
  async show(period: string, adjust: string): Promise<void> {
    await this.page.selectOption('#period', period)
    await this.page.selectOption('#adjust', adjust)
    await this.page.click('button[type=submit]')
    await this.page.locator('#bar-count[data-settled="true"]').waitFor({ state: 'attached', timeout: 60_000 })
    await this.page.locator('#live', { hasText: 'live' }).waitFor({ timeout: 60_000 })
  }

  /** Scrolls the chart back past its first bars, as a user does: the page reads older bars. */
  async scrollBack(): Promise<void> {
    await this.page.evaluate(() =>
      (window as unknown as { mdqChart: IChartApi }).mdqChart.timeScale().setVisibleLogicalRange({ from: -5, to: 30 }),
    )
  }

  drawn(): Promise<Drawn> {
    return this.page.evaluate(() => {
      const chart = (window as unknown as { mdqChart: IChartApi }).mdqChart
      const [candles, volume] = chart.panes().flatMap((pane) => pane.getSeries())
      const bars = candles.data() as CandlestickData[]
      return { candles: bars.length, last: bars[bars.length - 1], volume: volume.data().at(-1) as HistogramData }
    })
  }

  /** The last `n` candles the page draws, each with its volume bar. */
  tail(n: number): Promise<Candle[]> {
    return this.page.evaluate((count) => {
      const chart = (window as unknown as { mdqChart: IChartApi }).mdqChart
      const [candles, volume] = chart.panes().flatMap((pane) => pane.getSeries())
      const values = new Map((volume.data() as HistogramData[]).map((v) => [v.time, v.value]))
      return (candles.data() as CandlestickData[]).slice(-count).map((c) => ({
        time: c.time as number,
        open: c.open,
        high: c.high,
        low: c.low,
        close: c.close,
        volume: values.get(c.time) ?? NaN,
      }))
    }, n)
  }

  /** The server's latest `n` bars (GET /v1/klines) as the page draws them (CN symbols: chart time is Shanghai's). */
  async klines(symbol: string, period: string, adjust: string, n: number): Promise<Candle[]> {
    const q = `symbol=${symbol}&period=${period}&adjust=${adjust}&count=${n}`
    const res = await getJson<{ data: KlinesData }>(`${this.server.url}/v1/klines?${q}`, {
      headers: { 'X-API-Key': this.server.key },
    })
    assert.equal(res.status, 200)
    const d = res.body.data
    return d.timestamp.map((t, i) => ({
      time: t / 1000 + CN_OFFSET_S,
      open: d.open[i],
      high: d.high[i],
      low: d.low[i],
      close: d.close[i],
      volume: d.volume[i],
    }))
  }

  /**
   * Reads the page until what it draws satisfies `pred`, evaluated here (the page's
   * Content-Security-Policy refuses eval), giving up after 60 s so a failure names what was drawn.
   */
  async waitForDrawn(pred: (d: Drawn) => boolean, what: string): Promise<Drawn> {
    const deadline = Date.now() + 60_000
    for (;;) {
      const d = await this.drawn()
      if (d.last && pred(d)) return d
      if (Date.now() > deadline) throw new Error(`${what}: not drawn within 60 s; drawn ${JSON.stringify(d)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Waits until the page's last `n` candles are the server's latest `n` bars (read once: pushes are durable before their answer). */
  async waitForServerBars(symbol: string, period: string, adjust: string, n: number, what: string): Promise<Candle[]> {
    const expected = await this.klines(symbol, period, adjust, n)
    const deadline = Date.now() + 60_000
    for (;;) {
      const drawn = await this.tail(n)
      if (JSON.stringify(drawn) === JSON.stringify(expected)) return expected
      if (Date.now() > deadline) assert.deepEqual(drawn, expected, `${what}: the server's bars not drawn within 60 s`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}
