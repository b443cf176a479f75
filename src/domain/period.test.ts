import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PERIODS, STORED_PERIODS, basePeriodOf, isPeriod, type StoredPeriod } from './period.js'

describe('periods', () => {
  it('minute periods derive from 1m, calendar periods from 1d', () => {
    const minute = ['1m', '5m', '10m', '15m', '30m', '60m']
    for (const p of PERIODS) assert.equal(basePeriodOf(p), minute.includes(p) ? '1m' : '1d', p)
    assert.ok(isPeriod('10m') && !isPeriod('2m') && !isPeriod('1D') && !isPeriod(''))
  })
  it('only 1m and 1d are stored, and each stored period is its own base', () => {
    assert.deepEqual([...STORED_PERIODS], ['1m', '1d'])
    for (const p of STORED_PERIODS) assert.equal(basePeriodOf(p), p)
    // The compiler refuses any other StoredPeriod; `tsc` fails the build if this line ever compiles.
    // @ts-expect-error 60m is aggregated by the domain, never stored
    const wrong: StoredPeriod = '60m'
    void wrong
  })
})
