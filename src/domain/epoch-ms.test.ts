import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { epochMsMistake, MIN_EPOCH_MS } from './epoch-ms.js'
import { zoneOf } from './time-zone.js'

const SHANGHAI = zoneOf('Asia/Shanghai')

describe('epochMsMistake', () => {
  it('takes 0 and every safe integer from 10^10 (1970-04-26T17:46:40Z) on but epoch microseconds: no stored bar is refused', () => {
    assert.equal(MIN_EPOCH_MS, Date.UTC(1970, 3, 26, 17, 46, 40))
    for (const raw of ['0', '10000000000', '661536000000', '999999999999999', '4102444800000000', '9007199254740991'])
      assert.equal(epochMsMistake('start_time', raw, 'start', []), undefined, raw)
    fc.assert(
      fc.property(fc.integer({ min: MIN_EPOCH_MS, max: 1e15 - 1 }), (t) => {
        assert.equal(epochMsMistake('end_time', String(t), 'end', [SHANGHAI]), undefined)
      }),
    )
  })

  it('refuses epoch microseconds of 2001 to 2099 (16 digits) and nanoseconds (19), with the milliseconds meant', () => {
    assert.equal(
      epochMsMistake('start_time', '1735689600000000', 'start', []),
      "Parameter 'start_time' must be an integer of epoch milliseconds: 0, or from 10000000000 (1970-04-26T17:46:40Z) to 9007199254740991, not epoch microseconds. 1735689600000000 looks like epoch microseconds (2025-01-01T00:00:00.000Z); in milliseconds that is 1735689600000.",
    )
    assert.match(
      epochMsMistake('end_time', '1735689600123456789', 'end', []) ?? '',
      /1735689600123456789 looks like epoch nanoseconds \(2025-01-01T00:00:00\.123Z\); in milliseconds that is 1735689600123\.$/,
    )
    fc.assert(
      fc.property(fc.integer({ min: 1e15, max: Date.UTC(2100, 0, 1) * 1000 - 1 }), (us) => {
        const m = epochMsMistake('end_time', String(us), 'end', [])
        assert.match(m ?? '', new RegExp(`in milliseconds that is ${Math.floor(us / 1000)}\\.$`))
      }),
    )
  })

  it('refuses everything from 1 to 10^10 - 1; 9 and 10 digits as epoch seconds multiplied out', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1e8, max: MIN_EPOCH_MS - 1 }), (s) => {
        const m = epochMsMistake('start_time', String(s), 'start', [])
        assert.match(
          m ?? '',
          new RegExp(`must be an integer of epoch milliseconds.* in milliseconds that is ${s * 1000}\\.$`),
        )
      }),
    )
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e8 - 1 }), (n) => {
        assert.match(epochMsMistake('start_time', String(n), 'start', []) ?? '', /epoch milliseconds/)
      }),
    )
  })

  it('a YYYYMMDD or YYYY-MM-DD date: its first (start) or last (end) millisecond in each zone, UTC with none', () => {
    const start = epochMsMistake('start_time', '20240229', 'start', [SHANGHAI])
    assert.match(start ?? '', /the date 2024-02-29; its first millisecond is 1709136000000 in Asia\/Shanghai\.$/)
    const end = epochMsMistake('end_time', '2024-02-29', 'end', [])
    assert.match(end ?? '', /its last millisecond is 1709251199999 in UTC\.$/)
    // Not a calendar date: the rule alone.
    assert.doesNotMatch(epochMsMistake('start_time', '20240230', 'start', []) ?? '', /date/)
  })

  it('anything else gets the rule alone', () => {
    for (const raw of ['-1', 'abc', '1e12', '99999999999999999999', '2024/01/01', ' 1', '9999999999999999'])
      assert.match(
        epochMsMistake('start_time', raw, 'start', []) ?? '',
        /epoch milliseconds: 0, or from 10000000000/,
        raw,
      )
  })
})
