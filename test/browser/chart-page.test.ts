/// <reference lib="dom" />
// The chart page in a real browser (Debian's chromium via playwright-core): key, symbol, 1d forward,
// the chart holds what the API returns, switch to 60m, scroll back for older bars, screenshot.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import type { CandlestickData, CandlestickSeriesOptions, HistogramData, IChartApi } from 'lightweight-charts'
import { chromium, type Browser, type Page } from 'playwright-core'
import { PERIODS } from '../../src/domain/period.js'
import { CHROMIUM, chromium as chromiumInstalled, requires } from '../helpers/requirements.js'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const need = requires(chromiumInstalled())
/** `npm run screenshot` sets this to docs/chart.png (shown in the README); tests write to their temp dir. */
const SCREENSHOT = process.env.MDQ_SCREENSHOT

describe('chart page in Chromium', () => {
  const { dir, cleanup } = tempDir()
  let server: TestServer
  let browser: Browser
  let page: Page
  /** Console messages about the Content-Security-Policy (the pages are served with one: nothing may be blocked). */
  const cspViolations: string[] = []
  const watchCsp = (p: Page) =>
    p.on(
      'console',
      (m) => /Content Security Policy|Content-Security-Policy/i.test(m.text()) && cspViolations.push(m.text()),
    )
  before(async () => {
    if (!need.met) return
    server = await startServer(await demoDb(dir))
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    })
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } })
    watchCsp(page)
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    cleanup()
  })

  const count = async () => Number(await page.locator('#bar-count').textContent())
  /** What the chart draws: the candles' colours, how many candles and volume bars, the volume shades of a rise and a fall, the symbol. */
  const seriesState = (p: Page) =>
    p.evaluate(() => {
      const chart = (window as unknown as { mdqChart: IChartApi }).mdqChart
      const [candles, volume] = chart.panes().flatMap((pane) => pane.getSeries())
      const o = candles.options() as CandlestickSeriesOptions
      // The shade of the volume bar under a rising candle and under a falling one (the two series hold the same bars).
      const bars = candles.data() as CandlestickData[]
      const shades = volume.data() as HistogramData[]
      const rising = bars.findIndex((b) => b.close >= b.open)
      const falling = bars.findIndex((b) => b.close < b.open)
      return {
        up: o.upColor,
        down: o.downColor,
        wickUp: o.wickUpColor,
        wickDown: o.wickDownColor,
        candles: candles.data().length,
        volume: volume.data().length,
        volumeShades: [shades[rising]?.color, shades[falling]?.color],
        first: document.querySelector('#name')?.textContent?.split(' ')[0] ?? '',
      }
    })
  const waitForCount = async (pred: (n: number) => boolean, what: string) => {
    const t0 = Date.now()
    while (!pred(await count())) {
      if (Date.now() - t0 > 60_000)
        throw new Error(`timed out waiting for ${what}; status: ${await page.locator('#status').textContent()}`)
      await page.waitForTimeout(50)
    }
    return count()
  }
  // The page hands the view to the user a moment after drawing; scrolling before that loads nothing.
  const settled = () => page.locator('#bar-count[data-settled="true"]').waitFor({ state: 'attached', timeout: 60_000 })

  need.it('shows 600519.SH 1d forward with the bars the API returns, ex-dates marked', async () => {
    await page.goto(`${server.url}/?page=60`)
    await page.fill('#api-key', server.key)
    await page.fill('#symbol', '600519.SH')
    await page.selectOption('#period', '1d')
    await page.selectOption('#adjust', 'forward')
    await page.click('button[type=submit]')
    const n = await waitForCount((c) => c > 0, 'daily bars')
    const api = await getJson<{ data: KlinesData }>(
      `${server.url}/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=60`,
      { headers: { 'X-API-Key': server.key } },
    )
    assert.equal(n, api.body.data.timestamp.length)
    assert.equal(Number(await page.locator('#bar-count').getAttribute('data-first')), api.body.data.timestamp[0])
    assert.equal(await page.evaluate(() => localStorage.getItem('mdq.apiKey')), server.key)
  })

  need.it('switches to 60m and loads older bars when scrolled back', async () => {
    await page.selectOption('#period', '60m')
    const first = await waitForCount((c) => c === 60, '60m bars')
    await settled()
    assert.equal(first, 60)
    await page.evaluate(() =>
      (
        window as unknown as {
          mdqChart: { timeScale(): { setVisibleLogicalRange(r: { from: number; to: number }): void } }
        }
      ).mdqChart
        .timeScale()
        .setVisibleLogicalRange({ from: -5, to: 30 }),
    )
    const more = await waitForCount((c) => c > 60, 'older 60m bars')
    const all = await getJson<{ data: KlinesData }>(
      `${server.url}/v1/klines?symbol=600519.SH&period=60m&adjust=forward&count=10000`,
      { headers: { 'X-API-Key': server.key } },
    )
    assert.equal(more, all.body.data.timestamp.length) // 20 days x 4 bars: the whole history
    await page.selectOption('#period', '1d')
    await waitForCount((c) => c === 60, 'daily bars again')
    await settled()
    await page.evaluate(() =>
      (
        window as unknown as {
          mdqChart: { timeScale(): { setVisibleLogicalRange(r: { from: number; to: number }): void } }
        }
      ).mdqChart
        .timeScale()
        .setVisibleLogicalRange({ from: -5, to: 50 }),
    )
    await waitForCount((c) => c === 120, 'a second page of daily bars')
  })

  need.it('marks exactly the ex-dates inside the loaded bars', async () => {
    await page.fill('#symbol', 'AAPL.US') // quarterly dividends: a 60-day window holds some
    await page.click('button[type=submit]')
    const n = await waitForCount((c) => c === 60, 'AAPL daily bars')
    const headers = { 'X-API-Key': server.key }
    const bars = (await getJson<{ data: KlinesData }>(`${server.url}/v1/klines?symbol=AAPL.US&count=${n}`, { headers }))
      .body.data
    const events = (
      await getJson<{ data: Record<string, { timestamp: number }[]> }>(
        `${server.url}/v1/klines/ex-factors?symbols=AAPL.US&start_time=${bars.timestamp[0]}`,
        { headers },
      )
    ).body.data['AAPL.US']
    assert.ok(events.length >= 1)
    assert.equal(Number(await page.locator('#event-count').textContent()), events.length)
    const path = SCREENSHOT ?? join(dir, 'chart.png')
    await page.screenshot({ path })
    assert.equal(readFileSync(path).subarray(1, 4).toString('latin1'), 'PNG')
  })

  need.it(
    'rise and fall colours follow the market (red up in CN, green up in HK and the US); the switch fixes them',
    async () => {
      const show = async (symbol: string) => {
        await page.fill('#symbol', symbol)
        await page.click('button[type=submit]')
        await until(async () => (await seriesState(page)).first === symbol, `${symbol} drawn`)
        return seriesState(page)
      }
      const RED = '#d23c3c'
      const GREEN = '#1f9d55'
      for (const [symbol, up, down] of [
        ['600519.SH', RED, GREEN],
        ['000001.SZ', RED, GREEN],
        ['AAPL.US', GREEN, RED],
        ['00700.HK', GREEN, RED],
      ] as const) {
        const drawn = await show(symbol)
        assert.deepEqual([drawn.up, drawn.down, drawn.wickUp, drawn.wickDown], [up, down, up, down], symbol)
        assert.ok(drawn.candles > 0)
        // A volume bar takes the light shade of its candle's colour (rising, falling).
        assert.deepEqual(drawn.volumeShades, up === RED ? ['#e8a5a5', '#9fd3b2'] : ['#9fd3b2', '#e8a5a5'], symbol)
      }
      await page.selectOption('#colors', 'red-up') // 00700.HK still shown: redrawn at once, no request
      assert.deepEqual([(await seriesState(page)).up, (await seriesState(page)).down], [RED, GREEN])
      assert.equal(await page.evaluate(() => localStorage.getItem('mdq.colors')), 'red-up')
      await page.selectOption('#colors', 'market')
      assert.equal((await seriesState(page)).up, GREEN)
    },
  )

  need.it(
    'says so clearly for a bad key and an unknown symbol: one sentence, and the chart shown before is cleared',
    async () => {
      await page.fill('#api-key', 'mdq_wrong')
      await page.click('button[type=submit]')
      await page.waitForFunction(() => document.querySelector('#status')?.className === 'error')
      assert.match(String(await page.locator('#status').textContent()), /401: Unknown API key/)
      await page.fill('#api-key', server.key)
      await page.fill('#symbol', '600519.SH')
      await page.click('button[type=submit]')
      await waitForCount((c) => c > 0, '600519.SH bars before the 404')
      await page.fill('#symbol', '688999.SH')
      await page.click('button[type=submit]')
      await page.waitForFunction(() => /404/.test(document.querySelector('#status')?.textContent ?? ''))
      const text = String(await page.locator('#status').textContent())
      assert.equal(text, "404: Unknown symbol '688999.SH': no such instrument in this store.")
      const after = await seriesState(page)
      assert.deepEqual([after.candles, after.volume, await count()], [0, 0, 0], 'the bars of 600519.SH are gone')
      assert.equal(await page.locator('#name').textContent(), '')
    },
  )

  need.it(
    'takes the key once from the URL fragment (#key=...), which never reaches the server, and clears it',
    async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 } }) // nothing in localStorage
      const linked = await context.newPage()
      watchCsp(linked)
      const urls: string[] = []
      linked.on('request', (r) => urls.push(r.url()))
      await linked.goto(`${server.url}/?page=60#key=${server.key}`)
      await until(
        async () => Number(await linked.locator('#bar-count').textContent()) === 60,
        'bars with the linked key',
      )
      assert.deepEqual(
        await linked.evaluate(() => [location.hash, location.search, localStorage.getItem('mdq.apiKey')]),
        ['', '?page=60', server.key],
      )
      assert.ok(urls.some((u) => u.includes('/v1/klines?')))
      assert.deepEqual(
        urls.filter((u) => u.includes(server.key)),
        [],
        'no HTTP request carries the key in its URL (the quotes stream does, as the SDK sends it; the log redacts it: chart-live.test.ts)',
      )
      await context.close()
    },
  )

  need.it('offers every period the API serves (10m too) and finds a symbol by its English name', async () => {
    const periods = await page.locator('#period option').allTextContents()
    assert.deepEqual(periods, [...PERIODS])
    await page.fill('#symbol', 'moutai')
    const options = () =>
      page
        .locator('#symbols option')
        .evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, (o as HTMLOptionElement).label]))
    await until(async () => (await options())[0]?.[0] === '600519.SH', 'the search list for moutai') // the list of an earlier search may still show
    assert.deepEqual(await options(), [['600519.SH', '600519.SH 贵州茅台 Kweichow Moutai']])
  })

  need.it('/docs serves the API reference from /openapi.json, locally', async () => {
    const docs = await browser.newPage()
    watchCsp(docs)
    const external: string[] = []
    docs.on('request', (r) => {
      if (!r.url().startsWith(server.url)) external.push(r.url())
    })
    await docs.goto(`${server.url}/docs`)
    await docs.locator('.opblock-summary-path', { hasText: '/v1/klines' }).first().waitFor()
    assert.ok(await docs.locator('button.authorize').count(), 'the API-key schemes can be set for "try it out"')
    assert.deepEqual(external, [])
    await docs.close()
  })

  need.it("/docs: mdq's title and icon, no framework logo, the routes grouped by tag in order", async () => {
    const docs = await browser.newPage()
    watchCsp(docs)
    await docs.goto(`${server.url}/docs`)
    await docs.locator('.opblock-tag-section').first().waitFor()
    assert.equal(await docs.title(), 'mdq · API reference')
    assert.equal(
      await docs
        .locator('.info .title')
        .first()
        .innerText()
        .then((t) => t.split('\n')[0].trim()),
      'mdq',
    )
    // The top bar, where Swagger UI and @fastify/swagger-ui put their logos, is not shown; no image of either is.
    assert.equal(await docs.locator('.topbar').isVisible(), false)
    const images = await docs
      .locator('img')
      .evaluateAll((imgs) =>
        imgs.filter((i) => (i as HTMLImageElement).checkVisibility()).map((i) => (i as HTMLImageElement).src),
      )
    assert.deepEqual(images, [])
    const icons = await docs.locator('link[rel=icon]').evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href))
    assert.deepEqual(icons, [`${server.url}/docs/static/theme/mdq.svg`])
    const icon = await fetch(icons[0])
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml')
    const tags = await docs
      .locator('.opblock-tag-section h3 .nostyle span, .opblock-tag-section h3 a span')
      .allInnerTexts()
    assert.deepEqual(tags.slice(0, 6), ['klines', 'reference', 'financials', 'SDK extras', 'live', 'system'])
    // Each group holds its routes: the klines group opens with /v1/klines, system holds the health checks.
    const paths = (tag: string) =>
      docs
        .locator('.opblock-tag-section', { has: docs.locator(`h3[data-tag="${tag}"]`) })
        .locator('.opblock-summary-path')
        .allInnerTexts()
    assert.deepEqual(
      (await paths('klines')).map((p) => p.replace(/\u200b/g, '')),
      ['/v1/klines', '/v1/klines/ex-factors', '/v1/klines/batch', '/v1/klines/intraday', '/v1/klines/intraday/batch'],
    )
    assert.deepEqual(
      (await paths('system')).map((p) => p.replace(/\u200b/g, '')),
      ['/healthz', '/readyz', '/metrics'],
    )
    await docs.close()
  })

  need.it('the Content-Security-Policy of the page and /docs blocked nothing they use', () => {
    assert.deepEqual(cspViolations, [])
  })
})
