// The official TickFlow SDK against mdq over real data, making its users' mistakes: each is answered
// with a clear error saying what was meant, never a 200 with other data.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { runSdkScript, sdkSkip } from '../helpers/python-sdk.js'
import { buildRealStore, REAL_STORE_SKIP } from '../helpers/real-store.js'
import { startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { readLeanBars } from '../reference/lean.js'

type Refusal = { status: number; message: string } | null
interface Report {
  seconds: number
  seconds_get: Refusal
  seconds_batch: Refusal
  seconds_ex_factors: Refusal
  yyyymmdd_get: Refusal
  meant: number
  meant_get: KlinesData
  first_bar: KlinesData
  quotes: { symbol: string; timestamp: number; session: string }[]
  batch_unknown: Record<string, number>
  batch_unknown_df: Record<string, number>
  intraday_unknown: Record<string, number>
  yahoo_batch: Refusal
}

const skip = REAL_STORE_SKIP || sdkSkip()
const SYMBOLS = ['AAPL.US', '600000.SH']
const QUOTED = ['SPY.US', 'AAPL.US', '600000.SH']
const SPY_LAST_BAR = MARKETS.US.zone.utcOf(2013, 10, 11, 15 * 60 + 59)

describe('TickFlow Python SDK: the mistakes of its users (real data)', () => {
  const { dir, cleanup } = tempDir()
  let server: TestServer | undefined
  let report: Promise<Report> | undefined
  /** AAPL's LEAN daily bars (1998 on): the reference, read apart from mdq. */
  let aapl: Float64Array
  const run = () =>
    (report ??= runSdkScript<Report>('mistakes.py', [
      server!.url,
      server!.key,
      JSON.stringify({ symbols: SYMBOLS, first: { symbol: 'AAPL.US', time: aapl[0] }, quoted: QUOTED }),
    ]))
  before(async () => {
    if (skip) return
    aapl = readLeanBars('daily', 'aapl').timestamp
    // The server's clock: half a minute into SPY's last stored 1m bar (Friday 2013-10-11 15:59 in New York).
    server = await startServer(buildRealStore(dir), { now: () => SPY_LAST_BAR + 30_000 })
  })
  after(async () => {
    await server?.close()
    cleanup()
  })

  it(
    'int(datetime(...).timestamp()) as start_time or end_time: BadRequestError saying epoch milliseconds, with the value meant',
    { skip },
    async () => {
      const r = await run()
      for (const what of ['seconds_get', 'seconds_batch', 'seconds_ex_factors'] as const) {
        const refusal = r[what]
        assert.ok(refusal, `${what} raised no BadRequestError`)
        assert.equal(refusal.status, 400)
        assert.match(refusal.message, /must be an integer of epoch milliseconds/, what)
        assert.ok(refusal.message.includes(`in milliseconds that is ${r.seconds * 1000}.`), refusal.message)
      }
      assert.match(r.yyyymmdd_get?.message ?? '', /'20200102' reads as the date 2020-01-02; .* in America\/New_York\./)
    },
  )

  it(
    'the value suggested selects the bars from that time on; the oldest real bar (1998) is never refused',
    { skip },
    async () => {
      const r = await run()
      assert.equal(r.meant, r.seconds * 1000)
      const week = [...aapl].filter((t) => t >= r.meant && t <= r.meant + 7 * 86_400_000)
      assert.ok(week.length >= 3)
      assert.deepEqual(r.meant_get.timestamp, week)
      assert.ok(aapl[0] < Date.UTC(1999, 0, 1), 'the reference really starts in the 1990s')
      assert.deepEqual(r.first_bar.timestamp, [aapl[0]])
    },
  )

  it(
    "a quote's session is its own bar's: SPY's bar of the session running now is regular, AAPL's daily bar of 2021 closed",
    {
      skip,
    },
    async () => {
      const r = await run()
      assert.deepEqual(
        r.quotes.map((q) => [q.symbol, q.session]),
        [
          ['SPY.US', 'regular'],
          ['AAPL.US', 'closed'], // New York is in session now, but this quote is from a bar of 2021
          ['600000.SH', 'closed'],
        ],
      )
      assert.equal(r.quotes[0].timestamp, SPY_LAST_BAR)
    },
  )

  it(
    'klines.batch and intraday_batch still parse an answer naming unknown symbols (dicts and DataFrames, any batch_size)',
    {
      skip,
    },
    async () => {
      const r = await run()
      assert.deepEqual(r.batch_unknown, { 'AAPL.US': 5, '600000.SH': 5 })
      assert.deepEqual(r.batch_unknown_df, { 'AAPL.US': 5, '600000.SH': 5 })
      assert.deepEqual(r.intraday_unknown, { 'SPY.US': 5 })
    },
  )

  it("Yahoo's 600000.SS: BadRequestError naming 600000.SH", { skip }, async () => {
    const r = await run()
    assert.equal(r.yahoo_batch?.status, 400)
    assert.match(r.yahoo_batch?.message ?? '', /unknown exchange 'SS' in '600000\.SS'.* Did you mean '600000\.SH'\?$/)
  })
})
