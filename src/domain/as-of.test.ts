import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asOfDate, asOfMs, cutoffsOf, parseAsOf, parseDateParam } from './as-of.js'
import { MdqError } from './errors.js'
import { MARKETS } from './market.js'
import { daysFromCivil } from './time-zone.js'

const NY = MARKETS.US.zone
const SH = MARKETS.SH.zone

describe('as_of', () => {
  it('parses a date or epoch milliseconds, and refuses the usual mistakes with a hint', () => {
    assert.deepEqual(parseAsOf('2024-03-11'), { day: daysFromCivil(2024, 3, 11) })
    assert.deepEqual(parseAsOf('1710158400000'), { ms: 1710158400000 })
    const refused = (text: string, message: RegExp) =>
      assert.throws(
        () => parseAsOf(text),
        (err: unknown) => err instanceof MdqError && err.code === 'BAD_PARAM' && message.test(err.message),
        text,
      )
    refused('2024-02-30', /^Parameter 'as_of' '2024-02-30' is not a calendar date/)
    refused('1969-12-31', /not a calendar date of 1970-2099/)
    refused('20240311', /looks like a date YYYYMMDD: write it 2024-03-11/)
    refused('1710158400', /epoch seconds it is 2024-03-11T12:00:00\.000Z: multiply by 1000/)
    refused('99999999999999', /after 2099/)
    refused('-1', /neither a date nor a whole number/)
    refused('2024-3-11', /neither a date nor a whole number/)
    assert.equal(parseDateParam('2024-03-11', 'start_date'), '2024-03-11')
    assert.throws(() => parseDateParam('2024-03-32', 'start_date'), /'start_date' '2024-03-32' is not a calendar date/)
  })

  it('a date is the end of that day in the market zone, across a DST change', () => {
    // 2024-03-10 is 23 hours long in New York.
    const d = parseAsOf('2024-03-10')
    assert.equal(asOfMs(d, NY), Date.UTC(2024, 2, 11, 4) - 1)
    assert.equal(asOfMs(d, SH), Date.UTC(2024, 2, 10, 16) - 1)
    assert.equal(asOfDate({ ms: Date.UTC(2024, 2, 10, 16) }, SH), '2024-03-11')
    assert.equal(asOfDate({ ms: Date.UTC(2024, 2, 10, 16) }, NY), '2024-03-10')
  })

  it('cutoffs: a 1m bar a minute after its stamp, the daily bar at the last close, whole days outside sessions', () => {
    const us = MARKETS.US
    const at = (h: number, m: number) => NY.utcOf(2024, 3, 11, h * 60 + m)
    const midday = cutoffsOf({ ms: at(11, 0) }, us)
    assert.deepEqual(midday, {
      events: at(11, 0),
      minute: at(10, 59),
      daily: NY.utcOf(2024, 3, 11) - 1,
      wholeDays: false,
    })
    assert.equal(cutoffsOf({ ms: at(16, 0) - 1 }, us).daily, NY.utcOf(2024, 3, 11) - 1)
    assert.deepEqual(cutoffsOf({ ms: at(16, 0) }, us), {
      events: at(16, 0),
      minute: at(15, 59),
      daily: at(16, 0),
      wholeDays: true,
    })
    assert.equal(cutoffsOf({ ms: at(9, 30) }, us).wholeDays, true, 'no bar of the day is complete yet')
    assert.equal(cutoffsOf({ ms: at(9, 31) }, us).wholeDays, false)
    const day = cutoffsOf(parseAsOf('2024-03-11'), MARKETS.SH)
    assert.equal(day.daily, SH.midnightUtc(daysFromCivil(2024, 3, 12)) - 1)
    assert.equal(day.wholeDays, true)
    // HK's lunch break is inside the day: not whole.
    assert.equal(cutoffsOf({ ms: MARKETS.HK.zone.utcOf(2024, 3, 11, 12 * 60 + 30) }, MARKETS.HK).wholeDays, false)
  })
})
