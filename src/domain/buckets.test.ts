import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { sessionMinutes, tradingDays } from '../../test/helpers/arbitraries.js'
import { bucketStarts, calendarBucketDay } from './buckets.js'
import { MARKETS, type Exchange } from './market.js'
import { MINUTES_OF, type MinutePeriod } from './period.js'
import { daysFromCivil, formatCivil, civilFromDays } from './time-zone.js'

const localHm = (exchange: Exchange, t: number) => {
  const m = MARKETS[exchange].zone.localMinute(t)
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
}
const distinct = (xs: Float64Array) => [...new Set(xs)]

describe('session-anchored minute buckets', () => {
  const day = (ex: Exchange, y: number, m: number, d: number) => [MARKETS[ex].zone.midnightUtc(daysFromCivil(y, m, d))]
  it('CN 60m: 09:30 10:30 13:00 14:00', () => {
    const ts = Float64Array.from(sessionMinutes('SH', day('SH', 2024, 1, 2)))
    assert.deepEqual(
      distinct(bucketStarts(ts, '60m', MARKETS.SH)).map((t) => localHm('SH', t)),
      ['09:30', '10:30', '13:00', '14:00'],
    )
  })
  it('HK 60m: 09:30 10:30 11:30 (half) 13:00 14:00 15:00', () => {
    const ts = Float64Array.from(sessionMinutes('HK', day('HK', 2024, 1, 2)))
    const starts = bucketStarts(ts, '60m', MARKETS.HK)
    assert.deepEqual(
      distinct(starts).map((t) => localHm('HK', t)),
      ['09:30', '10:30', '11:30', '13:00', '14:00', '15:00'],
    )
    assert.equal(starts.filter((s) => s === distinct(starts)[2]).length, 30)
  })
  it('US 60m: 09:30 .. 15:30, the last one 30 minutes', () => {
    const ts = Float64Array.from(sessionMinutes('US', day('US', 2024, 7, 1)))
    const starts = bucketStarts(ts, '60m', MARKETS.US)
    assert.deepEqual(
      distinct(starts).map((t) => localHm('US', t)),
      ['09:30', '10:30', '11:30', '12:30', '13:30', '14:30', '15:30'],
    )
    assert.equal(starts.filter((s) => s === distinct(starts)[6]).length, 30)
  })
  it('a week spanning the 2013-11-03 DST change buckets at 09:30 local on both sides', () => {
    const days = tradingDays('US', daysFromCivil(2013, 10, 28), 10)
    const ts = Float64Array.from(sessionMinutes('US', days))
    const starts = distinct(bucketStarts(ts, '60m', MARKETS.US))
    assert.equal(starts.length, 70)
    assert.ok(
      starts.every((t) => ['09:30', '10:30', '11:30', '12:30', '13:30', '14:30', '15:30'].includes(localHm('US', t))),
    )
    assert.equal(new Date(starts[28]).toISOString(), '2013-11-01T13:30:00.000Z') // Friday, EDT
    assert.equal(new Date(starts[35]).toISOString(), '2013-11-04T14:30:00.000Z') // Monday, EST
    const weeks = distinct(bucketStarts(Float64Array.from(days), '1w', MARKETS.US)).map((t) =>
      new Date(t).toISOString(),
    )
    assert.deepEqual(weeks, ['2013-10-28T04:00:00.000Z', '2013-11-04T05:00:00.000Z'])
  })
  it('bucket counts per session day match ceil(session length / period) for every exchange and period', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Exchange>('SH', 'SZ', 'HK', 'US'),
        fc.constantFrom<MinutePeriod>('1m', '5m', '10m', '15m', '30m', '60m'),
        fc.integer({ min: 9000, max: 20000 }),
        (ex, period, first) => {
          const ts = Float64Array.from(sessionMinutes(ex, tradingDays(ex, first, 1)))
          const expected = MARKETS[ex].sessions.reduce(
            (n, s) => n + Math.ceil((s.close - s.open) / MINUTES_OF[period]),
            0,
          )
          assert.equal(distinct(bucketStarts(ts, period, MARKETS[ex])).length, expected)
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('calendar buckets', () => {
  const name = (d: number) => formatCivil(civilFromDays(d))
  it('1w starts on the ISO Monday, 1M on the 1st, 1Q on the quarter start, 1Y on Jan 1st', () => {
    const d = daysFromCivil(2024, 8, 15) // a Thursday
    assert.equal(name(calendarBucketDay(d, '1w')), '2024-08-12')
    assert.equal(name(calendarBucketDay(d, '1M')), '2024-08-01')
    assert.equal(name(calendarBucketDay(d, '1Q')), '2024-07-01')
    assert.equal(name(calendarBucketDay(d, '1Y')), '2024-01-01')
    assert.equal(name(calendarBucketDay(daysFromCivil(2024, 1, 1), '1w')), '2024-01-01')
    assert.equal(name(calendarBucketDay(daysFromCivil(2023, 12, 31), '1w')), '2023-12-25')
  })
  it('calendar buckets are stamped at local midnight even when that day was a holiday', () => {
    const sh = MARKETS.SH
    const jan2 = Float64Array.of(sh.zone.midnightUtc(daysFromCivil(2024, 1, 2)))
    assert.equal(new Date(bucketStarts(jan2, '1Y', sh)[0]).toISOString(), '2023-12-31T16:00:00.000Z')
    assert.equal(new Date(bucketStarts(jan2, '1Q', sh)[0]).toISOString(), '2023-12-31T16:00:00.000Z')
  })
})
