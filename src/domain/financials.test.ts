import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { servedVersions, sharesOn, valuesJson, valuesOfJson, type StatementRecord } from './financials.js'

const v = (periodEnd: string, announceDate: string, revenue: number): StatementRecord => ({
  periodEnd,
  announceDate,
  values: { revenue },
})
const VERSIONS = [v('2019-12-31', '2020-03-28', 1), v('2019-12-31', '2021-03-30', 2), v('2020-06-30', '2020-08-20', 3)]

describe('financial statements', () => {
  it('serve the latest version of each period, or the latest announced by a day; latest keeps the last period', () => {
    assert.deepEqual(servedVersions(VERSIONS), [VERSIONS[1], VERSIONS[2]])
    assert.deepEqual(servedVersions(VERSIONS, '2020-03-27'), [])
    assert.deepEqual(servedVersions(VERSIONS, '2020-03-28'), [VERSIONS[0]])
    assert.deepEqual(servedVersions(VERSIONS, '2020-12-31'), [VERSIONS[0], VERSIONS[2]])
    assert.deepEqual(servedVersions(VERSIONS, '2020-12-31', true), [VERSIONS[2]])
    assert.deepEqual(servedVersions([], undefined, true), [])
  })

  it('shares in force on a day: effective by then and announced by then', () => {
    const history: StatementRecord[] = [
      { periodEnd: '2020-01-01', announceDate: '2019-12-20', values: { total_shares: 100, float_shares: 80 } },
      { periodEnd: '2021-01-01', announceDate: '2020-12-15', values: { total_shares: 120 } },
    ]
    assert.equal(sharesOn(history, '2019-12-31'), undefined)
    assert.deepEqual(sharesOn(history, '2020-01-01'), { totalShares: 100, floatShares: 80 })
    assert.deepEqual(sharesOn(history, '2020-12-31'), { totalShares: 100, floatShares: 80 })
    assert.deepEqual(sharesOn(history, '2021-01-01'), { totalShares: 120, floatShares: null })
  })

  it('values round-trip through their stored JSON exactly; nulls are not stored', () => {
    const values = { a: 0.1 + 0.2, b: -1e-300, c: 1.7976931348623157e308, d: null, e: 123456789012.34 }
    const back = valuesOfJson(valuesJson(values))
    assert.deepEqual(back, { a: 0.1 + 0.2, b: -1e-300, c: 1.7976931348623157e308, e: 123456789012.34 })
    assert.equal(back.a, 0.30000000000000004)
  })
})
