// CN ex-factors: derived from Baostock's preclose (vs Tushare qfq) and computed from Hikyuu's corporate actions.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { adjustBars } from '../../src/domain/adjust.js'
import { barCount, lowerBound } from '../../src/domain/bars.js'
import { actionExFactors, deriveExFactors } from '../../src/domain/ex-factors.js'
import { data, requires } from '../helpers/requirements.js'
import { maxDeviationFromConstant } from '../helpers/ratios.js'
import {
  CN_CODES,
  baostockBars,
  hikyuuActions,
  hikyuuBars,
  hikyuuReference,
  readBaostock,
  readTushareCloses,
} from '../reference/cn.js'

/** Max relative deviation per code, set just above what is measured (8.14e-4, 6.28e-5, 2.79e-4): Tushare rounds qfq to 2 decimals. */
const QFQ_TOLERANCE: Record<(typeof CN_CODES)[number], number> = { '600000': 9e-4, '600519': 8e-5, '601318': 3.5e-4 }

describe('CN ex-factors derived from Baostock preclose match Tushare qfq', () => {
  const need = requires(data('cn/baostock_raw_daily'), data('cn/tushare_qfq_daily'))
  for (const code of CN_CODES) {
    need.it(
      `${code}: forward closes / Tushare qfq closes constant within ${QFQ_TOLERANCE[code]} (2020-01..2025-04)`,
      () => {
        const bars = baostockBars(code)
        const events = deriveExFactors(bars)
        assert.ok(events.length >= 4, `${code}: yearly dividends give events (${events.length})`)
        for (const e of events) {
          const i = lowerBound(bars.timestamp, e.timestamp)
          assert.equal(e.exFactor, bars.close[i - 1] / bars.prevClose[i])
        }
        const forward = adjustBars(bars, events, 'forward')
        const qfq = readTushareCloses(code)
        const ratios: number[] = []
        for (let i = 0; i < barCount(bars); i++) {
          const ref = qfq.get(bars.timestamp[i])
          if (ref !== undefined) ratios.push(forward.close[i] / ref)
        }
        assert.ok(ratios.length > 1200, `${code}: common days ${ratios.length}`)
        const deviation = maxDeviationFromConstant(ratios)
        console.log(
          `${code}: forward/qfq max relative deviation ${deviation.toExponential(2)} over ${ratios.length} days, ${events.length} events`,
        )
        assert.ok(deviation <= QFQ_TOLERANCE[code], `deviation ${deviation}`)
      },
    )
  }

  need.it('600519 2020-06-24: the dividend event is close(2020-06-23) / preclose = 1474.50 / 1457.48', () => {
    const bars = baostockBars('600519')
    const rows = readBaostock('600519').filter((r) => r.traded)
    const i = rows.findIndex((r) => r.date === '2020-06-24')
    const event = deriveExFactors(bars).find((e) => e.timestamp === bars.timestamp[i])
    assert.ok(event)
    assert.equal(event.exFactor, 1474.5 / 1457.48)
  })
})

describe('CN ex-factors computed from Hikyuu corporate actions reproduce Hikyuu EQUAL_FORWARD/EQUAL_BACKWARD', () => {
  const need = requires(data('cn/hikyuu_test_data'))
  // Tolerance just above the measured worst case (5.24e-6 / 1.94e-6): Hikyuu rounds to 3 decimals.
  const modes = { EQUAL_FORWARD: ['forward', 7e-6], EQUAL_BACKWARD: ['backward', 3e-6] } as const
  for (const [hikyuuMode, [mode, tolerance]] of Object.entries(modes)) {
    need.it(`${hikyuuMode} = ${mode} to ${tolerance} relative`, () => {
      const bars = hikyuuBars()
      const events = actionExFactors(bars, hikyuuActions())
      assert.ok(events.length >= 10)
      const adjusted = adjustBars(bars, events, mode)
      const refs = hikyuuReference().filter((r) => r.mode === hikyuuMode)
      assert.equal(refs.length, 5)
      let worst = 0
      for (const ref of refs) {
        const i = bars.timestamp.indexOf(ref.timestamp)
        assert.ok(i >= 0, `bar ${ref.date}`)
        for (const f of ['open', 'high', 'low', 'close'] as const) {
          const dev = Math.abs(adjusted[f][i] / ref[f] - 1)
          worst = Math.max(worst, dev)
          assert.ok(dev <= tolerance, `${ref.date} ${f}: ${adjusted[f][i]} vs ${ref[f]}`)
        }
      }
      console.log(`hikyuu ${hikyuuMode}: worst relative deviation ${worst.toExponential(2)}`)
    })
  }
})
