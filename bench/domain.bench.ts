// Domain throughput: adjust (forward, forward_additive) and aggregate (1m->60m, 1d->1w) over 10M bars.
// Run: npm run bench:domain. Baseline in the same run: copying the same columns with TypedArray.set.
import { adjustBars } from '../src/domain/adjust.js'
import { aggregate } from '../src/domain/aggregate.js'
import { allocBars, PRICE_FIELDS, type Bars } from '../src/domain/bars.js'
import { MARKETS } from '../src/domain/market.js'
import { MINUTE_MS, daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { bestMs, rate, row } from './measure.js'

const N = Number(process.env.BENCH_BARS ?? 10_000_000)
const US = MARKETS.US

function syntheticBars(timestamps: Float64Array): Bars {
  const bars = allocBars(timestamps.length)
  bars.timestamp.set(timestamps)
  let p = 100
  for (let i = 0; i < timestamps.length; i++) {
    const o = p
    p = Math.max(1, p + ((i * 7919) % 11) / 100 - 0.05)
    bars.open[i] = o
    bars.close[i] = p
    bars.high[i] = Math.max(o, p) + 0.01
    bars.low[i] = Math.min(o, p) - 0.01
    bars.volume[i] = 1000 + (i % 97)
    bars.amount[i] = bars.volume[i] * p
    bars.prevClose[i] = o
  }
  return bars
}

function usMinuteTimestamps(n: number): Float64Array {
  const ts = new Float64Array(n)
  let i = 0
  for (let day = daysFromCivil(1990, 1, 1); i < n; day++) {
    if (isoWeekday(day) >= 5) continue
    const open = US.zone.midnightUtc(day) + 570 * MINUTE_MS
    for (let m = 0; m < 390 && i < n; m++) ts[i++] = open + m * MINUTE_MS
  }
  return ts
}

function dailyTimestamps(n: number): Float64Array {
  const ts = new Float64Array(n)
  let i = 0
  for (let day = daysFromCivil(1960, 1, 1); i < n; day++) if (isoWeekday(day) < 5) ts[i++] = US.zone.midnightUtc(day)
  return ts
}

const minute = syntheticBars(usMinuteTimestamps(N))
// 1d series: ~140 years of weekdays, aggregated repeatedly so the bar count matches N.
const dailyLen = 36_000
const daily = syntheticBars(dailyTimestamps(dailyLen))
const reps = Math.ceil(N / dailyLen)
const events = Array.from({ length: 40 }, (_, k) => ({
  timestamp: minute.timestamp[Math.floor(((k + 1) * N) / 41)],
  exFactor: 1 + ((k % 5) + 1) / 100,
}))
const gaps = Float64Array.from(events, () => 0.5)
const copy = new Float64Array(N)

console.log(
  `domain bench: ${N.toLocaleString()} bars of 1m (US sessions), ${events.length} ex-factor events; best of 5`,
)
row('workload', 'ms', 'bars/s', 'vs copy')
const copyMs = bestMs(() => {
  for (const f of PRICE_FIELDS) copy.set(minute[f])
})
row('baseline: copy 5 price columns', copyMs.toFixed(1), rate(N, copyMs), '1.00')
for (const mode of ['forward', 'forward_additive'] as const) {
  const ms = bestMs(() => adjustBars(minute, events, mode, gaps))
  row(`adjust ${mode} (new arrays)`, ms.toFixed(1), rate(N, ms), (ms / copyMs).toFixed(2))
}
// As the query layer runs it: into the arrays it just decoded (a scratch copy here, so runs repeat).
const scratch = syntheticBars(minute.timestamp)
for (const mode of ['forward', 'forward_additive'] as const) {
  const ms = bestMs(() => adjustBars(minute, events, mode, gaps, scratch))
  row(`adjust ${mode} (into decoded)`, ms.toFixed(1), rate(N, ms), (ms / copyMs).toFixed(2))
}
const aggMs = bestMs(() => aggregate(minute, '60m', US))
row('aggregate 1m -> 60m', aggMs.toFixed(1), rate(N, aggMs), (aggMs / copyMs).toFixed(2))
const weekMs = bestMs(() => {
  for (let r = 0; r < reps; r++) aggregate(daily, '1w', US)
})
row(
  'aggregate 1d -> 1w',
  weekMs.toFixed(1),
  rate(reps * dailyLen, weekMs),
  ((weekMs / copyMs) * (N / (reps * dailyLen))).toFixed(2),
)
