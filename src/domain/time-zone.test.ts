import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { DAY_MS, HOUR_MS, civilFromDays, daysFromCivil, formatCivil, isoWeekday, zoneOf } from './time-zone.js'

describe('time zones', () => {
  it('civil <-> day numbers round-trip and agree with Date', () => {
    fc.assert(
      fc.property(fc.integer({ min: -50_000, max: 100_000 }), (days) => {
        const c = civilFromDays(days)
        assert.equal(daysFromCivil(c.year, c.month, c.day), days)
        const d = new Date(days * DAY_MS)
        assert.deepEqual([c.year, c.month, c.day], [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()])
        assert.equal(isoWeekday(days), (d.getUTCDay() + 6) % 7)
      }),
    )
  })

  it('600000.SH on 2024-01-02 starts at 2024-01-01T16:00:00Z', () => {
    assert.equal(new Date(zoneOf('Asia/Shanghai').utcOf(2024, 1, 2)).toISOString(), '2024-01-01T16:00:00.000Z')
  })

  it('New York is DST aware: EDT before 2013-11-03, EST after; 09:30 moves from 13:30Z to 14:30Z', () => {
    const ny = zoneOf('America/New_York')
    assert.equal(new Date(ny.utcOf(2013, 11, 1, 570)).toISOString(), '2013-11-01T13:30:00.000Z')
    assert.equal(new Date(ny.utcOf(2013, 11, 4, 570)).toISOString(), '2013-11-04T14:30:00.000Z')
    assert.equal(new Date(ny.midnightUtc(daysFromCivil(2013, 11, 3))).toISOString(), '2013-11-03T04:00:00.000Z')
    assert.equal(ny.midnightUtc(daysFromCivil(2013, 11, 4)) - ny.midnightUtc(daysFromCivil(2013, 11, 3)), 25 * HOUR_MS)
    assert.equal(ny.isoDate(Date.UTC(2013, 10, 4, 3, 59)), '2013-11-03')
  })

  it('offsets agree with Intl at random instants, including transition days', () => {
    const ny = zoneOf('America/New_York')
    const intl = (t: number) => {
      const s = new Date(t).toLocaleString('en-US', { timeZone: 'America/New_York', hourCycle: 'h23' })
      const [date, time] = s.split(', ')
      const [m, d, y] = date.split('/').map(Number)
      const [hh, mm, ss] = time.split(':').map(Number)
      return Date.UTC(y, m - 1, d, hh, mm, ss) - Math.floor(t / 1000) * 1000
    }
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1995, 0, 1), max: Date.UTC(2035, 0, 1) }), (t) =>
        assert.equal(ny.offsetMs(t), intl(t)),
      ),
    )
    for (const t of [
      Date.UTC(2013, 2, 10, 6, 59),
      Date.UTC(2013, 2, 10, 7, 0),
      Date.UTC(2013, 10, 3, 5, 59),
      Date.UTC(2013, 10, 3, 6, 0),
    ])
      assert.equal(ny.offsetMs(t), intl(t))
  })

  it('formats dates', () => {
    assert.equal(formatCivil({ year: 999, month: 1, day: 2 }), '0999-01-02')
  })
})
