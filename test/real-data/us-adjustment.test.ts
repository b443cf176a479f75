// LEAN factor files -> per-event ex-factors -> forward series, against Alpha Vantage's adjusted_close.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { adjustBars } from '../../src/domain/adjust.js'
import { allocBars, barCount } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { data, requires } from '../helpers/requirements.js'
import { maxDeviationFromConstant } from '../helpers/ratios.js'
import { AV, readAlphaVantage } from '../reference/alphavantage.js'
import { LEAN, factorFileEvents, readFactorFile, readLeanBars } from '../reference/lean.js'

const NY = MARKETS.US.zone
const need = requires(data(LEAN), data(AV))
const FROM = daysFromCivil(2000, 1, 1)
const TO = daysFromCivil(2020, 12, 31)

/** Max relative deviation, just above what is measured (AAPL 1.54e-4, SPY 3.85e-4): Alpha Vantage rounds adjusted_close. */
const TOLERANCE = { AAPL: 2e-4, SPY: 4.5e-4 } as const

describe('US ex-factors from LEAN factor files match Alpha Vantage', () => {
  for (const ticker of ['AAPL', 'SPY'] as const) {
    const lower = ticker.toLowerCase()
    const tolerance = TOLERANCE[ticker]

    need.it(
      `${ticker}: forward series of Alpha Vantage's raw closes = adjusted_close x constant (<= ${tolerance}, 2000-2020)`,
      () => {
        const av = readAlphaVantage(ticker)
        const events = factorFileEvents(
          readFactorFile(lower),
          av.map((r) => r.day),
        )
        const bars = allocBars(av.length)
        av.forEach((r, i) => {
          bars.timestamp[i] = NY.midnightUtc(r.day)
          bars.open[i] = bars.high[i] = bars.low[i] = bars.close[i] = bars.prevClose[i] = r.close
        })
        const forward = adjustBars(bars, events, 'forward')
        const ratios: number[] = []
        av.forEach((r, i) => {
          if (r.day >= FROM && r.day <= TO) ratios.push(forward.close[i] / r.adjustedClose)
        })
        const deviation = maxDeviationFromConstant(ratios)
        console.log(
          `${ticker}: forward/adjusted_close max relative deviation ${deviation.toExponential(2)} over ${ratios.length} days`,
        )
        assert.ok(deviation <= tolerance, `deviation ${deviation}`)
      },
    )

    need.it(`${ticker}: every split and dividend of Alpha Vantage is an event on the same ex-date`, () => {
      const av = readAlphaVantage(ticker)
      const events = factorFileEvents(
        readFactorFile(lower),
        av.map((r) => r.day),
      )
      const eventDays = new Set(events.map((e) => NY.localDay(e.timestamp)))
      const actionDays = av.filter((r) => r.day >= FROM && (r.dividend > 0 || r.split !== 1)).map((r) => r.date)
      assert.ok(actionDays.length > 20)
      assert.deepEqual(
        actionDays.filter((d) => !eventDays.has(av.find((r) => r.date === d)!.day)),
        [],
      )
      if (ticker === 'AAPL') {
        for (const [date, split] of [
          ['2014-06-09', 7],
          ['2020-08-31', 4],
        ] as const) {
          const row = av.find((r) => r.date === date)!
          assert.ok(Math.abs(row.split / split - 1) < 2e-6, `${date}: Alpha Vantage split ${row.split}`) // measured 1.0e-6 (7.00000700001)
          const e = events.find((x) => NY.localDay(x.timestamp) === row.day)!
          assert.ok(Math.abs(e.exFactor / split - 1) < 1e-6, `${date}: ex_factor ${e.exFactor} ~ split ${split}`) // measured 4.0e-7 and 0
        }
      }
    })

    need.it(
      `${ticker}: on LEAN's own daily bars, forward/raw per day = adjusted_close/close per day x constant (<= ${tolerance})`,
      () => {
        const av = new Map(readAlphaVantage(ticker).map((r) => [r.day, r]))
        const lean = readLeanBars('daily', lower)
        const days = Array.from(lean.timestamp, (t) => NY.localDay(t))
        const forward = adjustBars(lean, factorFileEvents(readFactorFile(lower), days), 'forward')
        const ratios: number[] = []
        for (let i = 0; i < barCount(lean); i++) {
          const ref = av.get(days[i])
          if (!ref || days[i] < FROM || days[i] > TO) continue
          ratios.push(forward.close[i] / lean.close[i] / (ref.adjustedClose / ref.close))
        }
        const deviation = maxDeviationFromConstant(ratios)
        console.log(
          `${ticker}: LEAN factor vs Alpha Vantage factor max relative deviation ${deviation.toExponential(2)} over ${ratios.length} days`,
        )
        assert.ok(ratios.length > 5000)
        assert.ok(deviation <= tolerance, `deviation ${deviation}`)
      },
    )
  }
})
