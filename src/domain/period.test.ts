import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { basePeriodOf, isPeriod, type StoredPeriod } from './period.js'

describe('periods', () => {
  it('minute periods derive from 1m, calendar periods from 1d', () => {
    assert.equal(basePeriodOf('60m'), '1m')
    assert.equal(basePeriodOf('1Q'), '1d')
    assert.ok(isPeriod('10m') && !isPeriod('2m') && !isPeriod('1D'))
  })
  it('only 1m and 1d are stored periods (checked by the compiler)', () => {
    const stored: StoredPeriod[] = ['1m', '1d']
    // @ts-expect-error 60m is aggregated by the domain, never stored
    const wrong: StoredPeriod = '60m'
    assert.equal(stored.length + (wrong ? 0 : 1), 2)
  })
})
